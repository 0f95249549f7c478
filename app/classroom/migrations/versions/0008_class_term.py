"""A class an instructor runs all term: their list of classes (instructors), a resume code and a seat per member,
steps the class moved a learner past, flags marked helped or dismissed, bring-and-hold, a message to the room, a
drill timer and the answers shown on the projector.

Revision ID: 0008_class_term
Revises: 0007_member_changes
"""

import sqlalchemy as sa
from alembic import op

revision = "0008_class_term"
down_revision = "0007_member_changes"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "instructors",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("key_hash", sa.String(64), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.UniqueConstraint("key_hash", name="uq_instructors_key_hash"),
    )
    with op.batch_alter_table("classes") as batch:
        batch.add_column(sa.Column("owner_id", sa.Integer, nullable=True))
        batch.add_column(sa.Column("pace_hold", sa.Boolean, nullable=False, server_default=sa.false()))
        batch.add_column(sa.Column("bring_version", sa.Integer, nullable=False, server_default="0"))
        batch.add_column(sa.Column("message", sa.String(200), nullable=False, server_default=""))
        batch.add_column(sa.Column("message_at", sa.DateTime(timezone=True), nullable=True))
        batch.add_column(sa.Column("timer_key", sa.String(80), nullable=True))
        batch.add_column(sa.Column("timer_ends_at", sa.DateTime(timezone=True), nullable=True))
        batch.add_column(sa.Column("answers_shown", sa.JSON, nullable=True))
        batch.create_foreign_key("fk_classes_owner", "instructors", ["owner_id"], ["id"], ondelete="SET NULL")
        batch.create_index("ix_classes_owner_id", ["owner_id"])
    with op.batch_alter_table("class_members") as batch:
        batch.add_column(sa.Column("resume_salt", sa.String(16), nullable=False, server_default=""))
        batch.add_column(sa.Column("seat", sa.Integer, nullable=False, server_default="0"))
    with op.batch_alter_table("class_step_times") as batch:
        batch.add_column(sa.Column("passed", sa.Boolean, nullable=False, server_default=sa.false()))
    op.create_table(
        "class_flag_marks",
        sa.Column("member_id", sa.Integer, sa.ForeignKey("class_members.id", ondelete="CASCADE"), primary_key=True),
        sa.Column("flag", sa.String(100), primary_key=True),
        sa.Column("outcome", sa.String(10), nullable=False),
        sa.Column("marked_at", sa.DateTime(timezone=True), nullable=False),
    )


def downgrade() -> None:
    op.drop_table("class_flag_marks")
    with op.batch_alter_table("class_step_times") as batch:
        batch.drop_column("passed")
    with op.batch_alter_table("class_members") as batch:
        batch.drop_column("seat")
        batch.drop_column("resume_salt")
    with op.batch_alter_table("classes") as batch:
        batch.drop_index("ix_classes_owner_id")
        batch.drop_constraint("fk_classes_owner", type_="foreignkey")
        for column in ("answers_shown", "timer_ends_at", "timer_key", "message_at", "message", "bring_version",
                       "pace_hold", "owner_id"):
            batch.drop_column(column)
    op.drop_table("instructors")
