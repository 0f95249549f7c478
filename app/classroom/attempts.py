"""Drill attempts and where each learner stands in each drill: question number, streak, mastery."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from sqlalchemy import DateTime, ForeignKey, Integer, String, select, update
from sqlalchemy.orm import Mapped, mapped_column

from app.classroom.db import Base, Database
from app.classroom.models import DrillAttempt, utcnow
from app.classroom.progress import _insert, touch_learner


class DrillState(Base):
    """One learner in one drill: the question they are on, and when they mastered it."""

    __tablename__ = "drill_state"

    learner_id: Mapped[str] = mapped_column(ForeignKey("learners.id", ondelete="CASCADE"), primary_key=True)
    drill: Mapped[str] = mapped_column(String(64), primary_key=True)
    question: Mapped[int] = mapped_column(Integer, default=0, doc="Current question number (0, 1, ...)")
    mastered_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    updated_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


@dataclass(frozen=True)
class Attempt:
    """One graded submission, as stored."""

    id: int
    learner_id: str
    drill: str
    lesson: str
    step: int
    question: int
    seed: int
    answers: dict[str, str]
    parsed: dict[str, float | str | None]
    correct_parts: dict[str, bool]
    score: float
    correct: bool
    mistake: str | None
    created_at: datetime


@dataclass
class DrillStatus:
    """Where a learner stands in a drill."""

    question: int = 0
    attempts: list[Attempt] = field(default_factory=list, repr=False)
    streak: int = 0
    mastered_at: datetime | None = None

    @property
    def on_question(self) -> list[Attempt]:
        """Attempts at the current question, oldest first."""
        return [a for a in self.attempts if a.question == self.question]

    @property
    def mastered(self) -> bool:
        return self.mastered_at is not None


def _attempt(row: DrillAttempt) -> Attempt:
    return Attempt(
        id=row.id,
        learner_id=row.learner_id,
        drill=row.drill,
        lesson=row.lesson,
        step=row.step,
        question=row.question,
        seed=row.seed,
        answers=dict(row.answers),
        parsed=dict(row.parsed),
        correct_parts=dict(row.correct_parts),
        score=row.score,
        correct=row.correct,
        mistake=row.mistake,
        created_at=row.created_at,
    )


def streak(attempts: list[Attempt]) -> int:
    """Questions answered right at the first try, in a row, counting back from the latest answered one."""
    first: dict[int, Attempt] = {}
    for a in sorted(attempts, key=lambda a: a.id):
        first.setdefault(a.question, a)
    run = 0
    for number in sorted(first, reverse=True):
        if not first[number].correct:
            break
        run += 1
    return run


async def status(db: Database, learner_id: str, drill: str) -> DrillStatus:
    """The learner's current question, their attempts, streak and mastery in one drill."""
    async with db.session() as s:
        state = await s.get(DrillState, (learner_id, drill))
        rows = await s.execute(
            select(DrillAttempt)
            .where(DrillAttempt.learner_id == learner_id, DrillAttempt.drill == drill)
            .order_by(DrillAttempt.id)
        )
        attempts = [_attempt(r) for r in rows.scalars()]
    return DrillStatus(
        question=state.question if state else 0,
        attempts=attempts,
        streak=streak(attempts),
        mastered_at=state.mastered_at if state else None,
    )


async def next_question(db: Database, learner_id: str, drill: str, seen: int) -> int:
    """Move on from question `seen` (a repeated press moves on once); returns the current number."""
    now = utcnow()
    async with db.session() as s:
        await touch_learner(s, learner_id)
        stmt = _insert(s, DrillState).values(learner_id=learner_id, drill=drill, question=0, updated_at=now)
        await s.execute(stmt.on_conflict_do_nothing(index_elements=["learner_id", "drill"]))
        await s.execute(
            update(DrillState)
            .where(
                DrillState.learner_id == learner_id, DrillState.drill == drill, DrillState.question == seen
            )
            .values(question=seen + 1, updated_at=now)
        )
        state = await s.get(DrillState, (learner_id, drill), populate_existing=True)
        return state.question if state else seen + 1


async def record(
    db: Database,
    learner_id: str,
    drill: str,
    *,
    lesson: str,
    step: int,
    question: int,
    seed: int,
    answers: dict[str, str],
    parsed: dict[str, float | str | None],
    correct_parts: dict[str, bool],
    score: float,
    mistake: str | None,
) -> Attempt:
    """Store one graded attempt (never call it for input that could not be read)."""
    async with db.session() as s:
        await touch_learner(s, learner_id)
        row = DrillAttempt(
            learner_id=learner_id,
            drill=drill,
            lesson=lesson,
            step=step,
            question=question,
            seed=seed,
            answers=answers,
            parsed=parsed,
            correct_parts=correct_parts,
            score=score,
            correct=all(correct_parts.values()),
            mistake=mistake,
            created_at=utcnow(),
        )
        s.add(row)
        await s.flush()
        return _attempt(row)


async def mark_mastered(db: Database, learner_id: str, drill: str) -> None:
    """Note that the learner mastered the drill (the first time is kept)."""
    now = utcnow()
    async with db.session() as s:
        await touch_learner(s, learner_id)
        stmt = _insert(s, DrillState).values(
            learner_id=learner_id, drill=drill, question=0, mastered_at=now, updated_at=now
        )
        await s.execute(stmt.on_conflict_do_nothing(index_elements=["learner_id", "drill"]))
        await s.execute(
            update(DrillState)
            .where(
                DrillState.learner_id == learner_id,
                DrillState.drill == drill,
                DrillState.mastered_at.is_(None),
            )
            .values(mastered_at=now, updated_at=now)
        )


async def list_attempts(
    db: Database, learner_id: str | None = None, drill: str | None = None, limit: int = 500
) -> list[Attempt]:
    """Stored attempts, newest first, for one learner and/or one drill (for instructors)."""
    stmt = select(DrillAttempt).order_by(DrillAttempt.id.desc()).limit(limit)
    if learner_id is not None:
        stmt = stmt.where(DrillAttempt.learner_id == learner_id)
    if drill is not None:
        stmt = stmt.where(DrillAttempt.drill == drill)
    async with db.session() as s:
        return [_attempt(r) for r in (await s.execute(stmt)).scalars()]
