"""Drill attempts and where each learner stands in each drill: question number, streak, mastery."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from datetime import datetime

from sqlalchemy import DateTime, ForeignKey, Integer, String, select, update
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import Mapped, mapped_column

from app.classroom.class_models import Classroom, Member
from app.classroom.db import Base, Database
from app.classroom.models import DrillAttempt, utcnow
from app.classroom.progress import _insert, mark_step_done, touch_learner
from app.classroom.ratelimit import check, count_hit
from app.classroom.seat import active_in, held_step


class DrillState(Base):
    """One learner in one drill: the question they are on, and when they mastered it."""

    __tablename__ = "drill_state"

    learner_id: Mapped[str] = mapped_column(ForeignKey("learners.id", ondelete="CASCADE"), primary_key=True)
    drill: Mapped[str] = mapped_column(String(64), primary_key=True)
    question: Mapped[int] = mapped_column(Integer, default=0, doc="Current question number (0, 1, ...)")
    hints: Mapped[int] = mapped_column(Integer, default=0, server_default="0", doc="Hints opened on it")
    mastered_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    updated_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


@dataclass(frozen=True)
class NewAttempt:
    """A graded attempt to store (never one whose input could not be read)."""

    lesson: str
    step: int
    question: int
    seed: int
    answers: dict[str, str]
    parsed: dict[str, float | str | None]
    correct_parts: dict[str, bool]
    score: float
    mistake: str | None


@dataclass(frozen=True)
class Attempt(NewAttempt):
    """One graded submission, as stored."""

    id: int
    learner_id: str
    drill: str
    correct: bool
    created_at: datetime


@dataclass
class DrillStatus:
    """Where a learner stands in a drill."""

    question: int = 0
    attempts: list[Attempt] = field(default_factory=list, repr=False)
    streak: int = 0
    mastered_at: datetime | None = None
    hints: int = 0  # hints opened on the current question
    room: tuple[str, int] | None = None  # the learner's class of the lesson (code, seat): neighbours' questions

    def seed_of(self, number: int) -> int | None:
        """The seed of the question answered under `number`, if any: it stays the learner's question."""
        return next((a.seed for a in self.attempts if a.question == number), None)

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


def first_tries(attempts: list[Attempt]) -> list[tuple[int, bool]]:
    """(seed, right) of each answered question's first attempt, in question order."""
    first: dict[int, Attempt] = {}
    for a in sorted(attempts, key=lambda a: a.id):
        first.setdefault(a.question, a)
    return [(first[n].seed, first[n].correct) for n in sorted(first)]


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


async def status(db: Database, learner_id: str, drill: str, lesson: str = "") -> DrillStatus:
    """The learner's current question, their attempts, streak and mastery in one drill (and their seat in their
    class of `lesson`, if any)."""
    async with db.session() as s:
        return await _status(s, learner_id, drill, lesson)


async def _status(s: AsyncSession, learner_id: str, drill: str, lesson: str = "") -> DrillStatus:
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
        hints=state.hints if state else 0,
        room=await room_of(s, learner_id, lesson) if lesson else None,
    )


async def room_of(s: AsyncSession, learner_id: str, lesson: str) -> tuple[str, int] | None:
    """The learner's latest class of the lesson (open or not: a question never changes when a class closes): its
    code and their seat."""
    latest = (select(Classroom.code, Member.seat).join(Member, Member.class_id == Classroom.id)
              .where(Member.learner_id == learner_id, Classroom.lesson == lesson)
              .order_by(Member.joined_at.desc()).limit(1))
    row = (await s.execute(latest)).first()
    return (row[0], int(row[1])) if row else None


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
            .values(question=seen + 1, hints=0, updated_at=now)
        )
        state = await s.get(DrillState, (learner_id, drill), populate_existing=True)
        return state.question if state else seen + 1


async def open_hints(db: Database, learner_id: str, drill: str, question: int, shown: int) -> int:
    """Remember that `shown` hints are open on question `question` (never fewer than before, nothing once the
    learner has moved on); returns how many are open on the current question."""
    async with db.session() as s:
        await touch_learner(s, learner_id)
        stmt = _insert(s, DrillState).values(learner_id=learner_id, drill=drill, question=0, updated_at=utcnow())
        await s.execute(stmt.on_conflict_do_nothing(index_elements=["learner_id", "drill"]))
        await s.execute(
            update(DrillState)
            .where(DrillState.learner_id == learner_id, DrillState.drill == drill,
                   DrillState.question == question, DrillState.hints < shown)
            .values(hints=shown)
        )
        state = await s.get(DrillState, (learner_id, drill), populate_existing=True)
        return state.hints if state and state.question == question else 0


@dataclass
class Before:
    """What an answer needs to know first: where the learner stands, and whether their class holds them back."""

    status: DrillStatus
    held_at: int | None


async def before_answer(db: Database, learner_id: str, drill: str, lesson: str, step: int) -> Before:
    """One read transaction: the learner's place in the drill and their class's hold, if any."""
    async with db.session() as s:
        held = await held_step(s, learner_id, lesson, step)
        return Before(status=await _status(s, learner_id, drill, lesson), held_at=held)


async def after_answer(
    db: Database, learner_id: str, drill: str, before: DrillStatus, new: NewAttempt | None, *,
    limit_key: str, limit: int, window_seconds: int, mastery: int, spread_met: bool = True,
) -> tuple[DrillStatus, bool]:
    """One write transaction, one commit: count the answer against the learner's rate limit and, within it,
    store the attempt, the mastery it earns and the step it completes. Returns the status after it and
    whether the drill was mastered by it; RateLimited (with nothing stored but the count) past the limit.
    `spread_met`: whether this answer, if right at the first try, completes the spread of topics the drill needs."""
    now = time.time()
    async with db.session() as s:
        count = await count_hit(s, limit_key, window_seconds, now)
        if count > limit or new is None:
            stored, newly = None, False
        else:
            stored = await _record(s, learner_id, drill, new)
            await active_in(await s.connection(), learner_id, new.lesson)  # time on task; the dashboard's row
            first_try = not before.on_question
            newly = (first_try and stored.correct and not before.mastered and before.streak + 1 >= mastery
                     and spread_met)
            if newly:
                await _mark_mastered(s, learner_id, drill)
                await mark_step_done(s, learner_id, new.lesson, new.step)
    check(count, limit, window_seconds, now)
    if stored is None:
        return before, False
    attempts = [*before.attempts, stored]
    after = DrillStatus(question=before.question, attempts=attempts, streak=streak(attempts),
                        mastered_at=utcnow() if newly else before.mastered_at, hints=before.hints, room=before.room)
    return after, newly


async def _record(s: AsyncSession, learner_id: str, drill: str, new: NewAttempt) -> Attempt:
    await touch_learner(s, learner_id)
    row = DrillAttempt(
        learner_id=learner_id, drill=drill, lesson=new.lesson, step=new.step, question=new.question,
        seed=new.seed, answers=new.answers, parsed=new.parsed, correct_parts=new.correct_parts, score=new.score,
        correct=all(new.correct_parts.values()), mistake=new.mistake, created_at=utcnow(),
    )
    s.add(row)
    await s.flush()
    return _attempt(row)


async def _mark_mastered(s: AsyncSession, learner_id: str, drill: str) -> None:
    now = utcnow()
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
