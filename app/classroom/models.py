"""Tables of the foundation: anonymous learners and their progress through steps."""

from __future__ import annotations

from datetime import UTC, datetime

from sqlalchemy import JSON, BigInteger, Boolean, DateTime, Float, ForeignKey, Integer, String, UniqueConstraint
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


class DrillAttempt(Base):
    """One submitted answer to a drill question, as typed and as graded."""

    __tablename__ = "drill_attempts"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    learner_id: Mapped[str] = mapped_column(ForeignKey("learners.id", ondelete="CASCADE"), index=True)
    drill: Mapped[str] = mapped_column(String(64), index=True)
    lesson: Mapped[str] = mapped_column(String(100), default="")
    step: Mapped[int] = mapped_column(Integer, default=0)
    question: Mapped[int] = mapped_column(Integer, default=0, doc="Question number (0, 1, ...)")
    seed: Mapped[int] = mapped_column(BigInteger)
    answers: Mapped[dict[str, str]] = mapped_column(JSON, doc="Each part's answer exactly as typed")
    parsed: Mapped[dict[str, float | str | None]] = mapped_column(JSON, doc="Parsed value per part")
    correct_parts: Mapped[dict[str, bool]] = mapped_column(JSON)
    score: Mapped[float] = mapped_column(Float, doc="Share of parts right, 0 to 1")
    correct: Mapped[bool] = mapped_column(Boolean, doc="Every part right")
    mistake: Mapped[str | None] = mapped_column(String(64), nullable=True, doc="The classic mistake recognised, if any")
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow, index=True)


class Prediction(Base):
    """A learner's guess before a widget reveals the answer (predict, then observe)."""

    __tablename__ = "predictions"
    __table_args__ = (UniqueConstraint("learner_id", "lesson", "step", "key", name="uq_prediction"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    learner_id: Mapped[str] = mapped_column(ForeignKey("learners.id", ondelete="CASCADE"), index=True)
    lesson: Mapped[str] = mapped_column(String(100))
    step: Mapped[int] = mapped_column(Integer)
    key: Mapped[str] = mapped_column(String(64), doc="Which question on the step, e.g. 'fits' or 'tokens_per_second'")
    guess: Mapped[str] = mapped_column(String(200), doc="As typed or chosen")
    guess_value: Mapped[float | None] = mapped_column(Float, nullable=True)
    actual: Mapped[str] = mapped_column(String(200), default="")
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


class RateHit(Base):
    """Requests counted per client key and fixed time window (shared by every app process)."""

    __tablename__ = "rate_limits"

    key: Mapped[str] = mapped_column(String(200), primary_key=True)
    window: Mapped[int] = mapped_column(BigInteger, primary_key=True)
    hits: Mapped[int] = mapped_column(Integer, default=0)
