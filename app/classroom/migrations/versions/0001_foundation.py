"""Foundation: learners and their step progress.

Revision ID: 0001
Revises:
"""

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "learners",
        sa.Column("id", sa.String(36), primary_key=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("last_seen", sa.DateTime(timezone=True), nullable=False),
    )
    op.create_table(
        "step_progress",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("learner_id", sa.String(36), sa.ForeignKey("learners.id", ondelete="CASCADE"), nullable=False),
        sa.Column("lesson", sa.String(100), nullable=False),
        sa.Column("step", sa.Integer, nullable=False),
        sa.Column("first_seen", sa.DateTime(timezone=True), nullable=False),
        sa.Column("last_seen", sa.DateTime(timezone=True), nullable=False),
        sa.Column("completed_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("visits", sa.Integer, nullable=False, server_default="1"),
        sa.UniqueConstraint("learner_id", "lesson", "step", name="uq_step_progress"),
    )
    op.create_index("ix_step_progress_learner_id", "step_progress", ["learner_id"])


def downgrade() -> None:
    op.drop_index("ix_step_progress_learner_id", "step_progress")
    op.drop_table("step_progress")
    op.drop_table("learners")
