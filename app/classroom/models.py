"""Tables of the foundation: anonymous learners and their progress through steps."""

from __future__ import annotations

from datetime import UTC, datetime

from sqlalchemy import DateTime, ForeignKey, Integer, String, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from app.classroom.db import Base


def utcnow() -> datetime:
    return datetime.now(UTC)


class Learner(Base):
    """Somebody with a cookie: no account, no name unless they join a class."""

    __tablename__ = "learners"

    id: Mapped[str] = mapped_column(String(36), primary_key=True)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    last_seen: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


class StepProgress(Base):
    """One learner on one step: first and last visit, and when they marked it done."""

    __tablename__ = "step_progress"
    __table_args__ = (UniqueConstraint("learner_id", "lesson", "step", name="uq_step_progress"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    learner_id: Mapped[str] = mapped_column(ForeignKey("learners.id", ondelete="CASCADE"), index=True)
    lesson: Mapped[str] = mapped_column(String(100))
    step: Mapped[int] = mapped_column(Integer)
    first_seen: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    last_seen: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    completed_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    visits: Mapped[int] = mapped_column(Integer, default=1)
