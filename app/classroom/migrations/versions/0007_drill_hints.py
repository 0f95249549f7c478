"""Drill hints stay open: the number of hints a learner opened on their current question.

Revision ID: 0007_drill_hints
Revises: 0005
"""

import sqlalchemy as sa
from alembic import op

revision = "0007_drill_hints"
down_revision = "0005"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("drill_state") as batch:
        batch.add_column(sa.Column("hints", sa.Integer, nullable=False, server_default="0"))


def downgrade() -> None:
    with op.batch_alter_table("drill_state") as batch:
        batch.drop_column("hints")
