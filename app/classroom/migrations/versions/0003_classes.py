"""Class instances: classes, their members and time on task per step.

Revision ID: 0003
Revises: 0002
"""

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "classes",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("code", sa.String(12), nullable=False),
        sa.Column("title", sa.String(120), nullable=False),
        sa.Column("lesson", sa.String(100), nullable=False),
        sa.Column("key_hash", sa.String(64), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("ends_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("closed_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("pace_mode", sa.String(8), nullable=False, server_default="free"),
        sa.Column("pace_step", sa.Integer, nullable=True),
        sa.Column("pace_move", sa.Boolean, nullable=False, server_default=sa.false()),
        sa.Column("pace_version", sa.Integer, nullable=False, server_default="0"),
        sa.Column("idle_minutes", sa.Integer, nullable=False, server_default="5"),
        sa.Column("revealed", sa.JSON, nullable=False),
        sa.Column("outline", sa.JSON, nullable=False),
        sa.UniqueConstraint("code", name="uq_classes_code"),
    )
    op.create_table(
        "class_members",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("class_id", sa.Integer, sa.ForeignKey("classes.id", ondelete="CASCADE"), nullable=False),
        sa.Column("learner_id", sa.String(36), sa.ForeignKey("learners.id", ondelete="CASCADE"), nullable=False),
        sa.Column("name", sa.String(40), nullable=False),
        sa.Column("name_key", sa.String(40), nullable=False),
        sa.Column("joined_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("step", sa.Integer, nullable=True),
        sa.Column("arrived_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("counted_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("last_active", sa.DateTime(timezone=True), nullable=False),
        sa.Column("moved_version", sa.Integer, nullable=False, server_default="0"),
        sa.UniqueConstraint("class_id", "learner_id", name="uq_member_learner"),
        sa.UniqueConstraint("class_id", "name_key", name="uq_member_name"),
    )
    op.create_index("ix_class_members_class_id", "class_members", ["class_id"])
    op.create_index("ix_class_members_learner_id", "class_members", ["learner_id"])
    op.create_table(
        "class_step_times",
        sa.Column("member_id", sa.Integer, sa.ForeignKey("class_members.id", ondelete="CASCADE"), primary_key=True),
        sa.Column("step", sa.Integer, primary_key=True),
        sa.Column("seconds", sa.Float, nullable=False, server_default="0"),
        sa.Column("visits", sa.Integer, nullable=False, server_default="0"),
    )
    # The dashboard reads a class's attempts by learner and lesson.
    op.create_index("ix_drill_attempts_learner_lesson", "drill_attempts", ["learner_id", "lesson"])


def downgrade() -> None:
    op.drop_index("ix_drill_attempts_learner_lesson", "drill_attempts")
    op.drop_table("class_step_times")
    op.drop_index("ix_class_members_learner_id", "class_members")
    op.drop_index("ix_class_members_class_id", "class_members")
    op.drop_table("class_members")
    op.drop_table("classes")
