"""The dashboard's poll reads the members changed since its last read: index class_members by class and change
stamp (last_active, bumped by every visit, completion, answer and widget move).

Revision ID: 0007_member_changes
Revises: 0003
"""

from alembic import op

revision = "0007_member_changes"
down_revision = "0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_index("ix_class_members_class_changed", "class_members", ["class_id", "last_active"])


def downgrade() -> None:
    op.drop_index("ix_class_members_class_changed", "class_members")
