"""Drill attempts, predict-then-observe guesses and rate-limit counters.

Revision ID: 0002
Revises: 0001
"""

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "drill_attempts",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("learner_id", sa.String(36), sa.ForeignKey("learners.id", ondelete="CASCADE"), nullable=False),
        sa.Column("drill", sa.String(64), nullable=False),
        sa.Column("lesson", sa.String(100), nullable=False, server_default=""),
        sa.Column("step", sa.Integer, nullable=False, server_default="0"),
        sa.Column("question", sa.Integer, nullable=False, server_default="0"),
        sa.Column("seed", sa.BigInteger, nullable=False),
        sa.Column("answers", sa.JSON, nullable=False),
        sa.Column("parsed", sa.JSON, nullable=False),
        sa.Column("correct_parts", sa.JSON, nullable=False),
        sa.Column("score", sa.Float, nullable=False),
        sa.Column("correct", sa.Boolean, nullable=False),
        sa.Column("mistake", sa.String(64), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
    )
    op.create_index("ix_drill_attempts_learner_id", "drill_attempts", ["learner_id"])
    op.create_index("ix_drill_attempts_drill", "drill_attempts", ["drill"])
    op.create_index("ix_drill_attempts_created_at", "drill_attempts", ["created_at"])
    op.create_table(
        "predictions",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("learner_id", sa.String(36), sa.ForeignKey("learners.id", ondelete="CASCADE"), nullable=False),
        sa.Column("lesson", sa.String(100), nullable=False),
        sa.Column("step", sa.Integer, nullable=False),
        sa.Column("key", sa.String(64), nullable=False),
        sa.Column("guess", sa.String(200), nullable=False),
        sa.Column("guess_value", sa.Float, nullable=True),
        sa.Column("actual", sa.String(200), nullable=False, server_default=""),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.UniqueConstraint("learner_id", "lesson", "step", "key", name="uq_prediction"),
    )
    op.create_index("ix_predictions_learner_id", "predictions", ["learner_id"])
    op.create_table(
        "rate_limits",
        sa.Column("key", sa.String(200), primary_key=True),
        sa.Column("window", sa.BigInteger, primary_key=True),
        sa.Column("hits", sa.Integer, nullable=False),
    )


def downgrade() -> None:
    op.drop_table("rate_limits")
    op.drop_table("predictions")
    op.drop_table("drill_attempts")
