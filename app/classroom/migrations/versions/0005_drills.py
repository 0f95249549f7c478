"""Drill state: each learner's current question in each drill, and when they mastered it.

Revision ID: 0005
Revises: 0002
"""

import sqlalchemy as sa
from alembic import op

revision = "0005"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "drill_state",
        sa.Column(
            "learner_id", sa.String(36), sa.ForeignKey("learners.id", ondelete="CASCADE"), primary_key=True
        ),
        sa.Column("drill", sa.String(64), primary_key=True),
        sa.Column("question", sa.Integer, nullable=False, server_default="0"),
        sa.Column("mastered_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
    )


def downgrade() -> None:
    op.drop_table("drill_state")
