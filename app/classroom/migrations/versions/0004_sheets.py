"""Workload sheets: each learner's five fields and the profiling runs attached to them.

Revision ID: 0004
Revises: 0002
"""

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "workload_sheets",
        sa.Column(
            "learner_id", sa.String(36), sa.ForeignKey("learners.id", ondelete="CASCADE"), primary_key=True
        ),
        sa.Column("fields", sa.JSON, nullable=False),
        sa.Column("profiles", sa.JSON, nullable=False),
        sa.Column("revision", sa.Integer, nullable=False, server_default="0"),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
    )


def downgrade() -> None:
    op.drop_table("workload_sheets")
