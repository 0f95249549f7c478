"""Progress of an anonymous learner: visits, completions and where to continue."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from sqlalchemy import func, or_, select, update
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncSession

from app.classroom.class_models import Classroom, Member
from app.classroom.db import Database
from app.classroom.models import Learner, StepProgress, utcnow


@dataclass
class LessonProgress:
    """What one learner has done in one lesson."""

    done: set[int] = field(default_factory=set)
    visited: set[int] = field(default_factory=set)
    last_step: int | None = None
    last_seen: datetime | None = None

    def state(self, number: int, drill: bool) -> str:
        """Step `number` as the learner's own pages show it (step_state's words): where they left off reads
        "current" unless done, and a plain step opened but not done still reads "todo"."""
        if number not in self.done and number == self.last_step:
            return "current"
        state = step_state(done=number in self.done, seen=number in self.visited, drill=drill)
        return "todo" if state == "seen" else state

    def finished(self, steps: int) -> bool:
        """Whether the learner did the whole lesson: every one of its `steps` steps is done (a drill mastered, a
        predict step's guess in), not only the last one pressed."""
        return steps > 0 and not self.left(steps)

    def left(self, steps: int) -> list[int]:
        """The steps of a `steps`-step lesson not done yet, in order."""
        return [n for n in range(1, steps + 1) if n not in self.done]

    def reached_end(self, steps: int) -> bool:
        """Whether the learner got through to the end: the last step is done (the others may not all be)."""
        return steps > 0 and steps in self.done


Executor = AsyncSession | AsyncConnection  # a session, or its Core connection (no ORM step per statement)


def _insert(session: Executor, table: Any) -> Any:
    if isinstance(session, AsyncConnection):
        dialect = session.dialect.name
    else:
        dialect = session.bind.dialect.name if session.bind is not None else "sqlite"
    return (postgresql.insert if dialect == "postgresql" else sqlite.insert)(table)


async def touch_learner(session: Executor, learner_id: str) -> None:
    """Create the learner row on first sight, else refresh last_seen."""
    now = utcnow()
    stmt = _insert(session, Learner).values(id=learner_id, created_at=now, last_seen=now)
    await session.execute(stmt.on_conflict_do_update(index_elements=["id"], set_={"last_seen": now}))


async def touch_member_in(s: Executor, learner_id: str, lesson: str) -> bool:
    """The learner did something in their open classes of this lesson: `last_active` is now. It is also the
    member's change stamp: every visit, completion, answer and widget move bumps it, so the dashboard's poll
    reads only the members changed since its last one (app/classroom/live.py). False when in no open class."""
    now = utcnow()
    open_classes = select(Classroom.id).where(
        Classroom.lesson == lesson, Classroom.closed_at.is_(None),
        or_(Classroom.ends_at.is_(None), Classroom.ends_at > now))
    result = await s.execute(update(Member).where(Member.learner_id == learner_id,
                                                  Member.class_id.in_(open_classes)).values(last_active=now))
    return bool(getattr(result, "rowcount", 0))


async def record_visit(db: Database, learner_id: str, lesson: str, step: int) -> None:
    """Note that the learner opened a step (or moved past it without doing it)."""
    async with db.session() as s:
        await record_visit_in(s, learner_id, lesson, step)
        await touch_member_in(s, learner_id, lesson)


async def record_visit_in(s: Executor, learner_id: str, lesson: str, step: int) -> None:
    """record_visit inside a caller's transaction."""
    now = utcnow()
    await touch_learner(s, learner_id)
    stmt = _insert(s, StepProgress).values(
        learner_id=learner_id, lesson=lesson, step=step, first_seen=now, last_seen=now, visits=1
    )
    await s.execute(
        stmt.on_conflict_do_update(
            index_elements=["learner_id", "lesson", "step"],
            set_={"last_seen": now, "visits": StepProgress.visits + 1},
        )
    )


async def mark_done(db: Database, learner_id: str, lesson: str, step: int) -> None:
    """Mark a step done (idempotent: the first completion time is kept)."""
    async with db.session() as s:
        await mark_step_done(s, learner_id, lesson, step)
        await touch_member_in(s, learner_id, lesson)


async def mark_step_done(s: AsyncSession, learner_id: str, lesson: str, step: int) -> None:
    """mark_done inside a caller's transaction."""
    now = utcnow()
    await touch_learner(s, learner_id)
    stmt = _insert(s, StepProgress).values(
        learner_id=learner_id, lesson=lesson, step=step, first_seen=now, last_seen=now, completed_at=now
    )
    await s.execute(
        stmt.on_conflict_do_update(
            index_elements=["learner_id", "lesson", "step"],
            set_={"last_seen": now, "completed_at": func.coalesce(StepProgress.completed_at, now)},
        )
    )


async def progress_by_lesson(db: Database, learner_id: str) -> dict[str, LessonProgress]:
    """Every lesson the learner has touched, with done and visited steps and the last one seen."""
    out: dict[str, LessonProgress] = {}
    async with db.session() as s:
        rows = await s.execute(select(StepProgress).where(StepProgress.learner_id == learner_id))
        for row in rows.scalars():
            lp = out.setdefault(row.lesson, LessonProgress())
            lp.visited.add(row.step)
            if row.completed_at is not None:
                lp.done.add(row.step)
            if lp.last_seen is None or row.last_seen > lp.last_seen:
                lp.last_seen, lp.last_step = row.last_seen, row.step
    return out


def step_state(*, done: bool, seen: bool, drill: bool, current: bool = False, passed: bool = False) -> str:
    """A step's state for a learner: a drill step is done by mastery only, so it reads "mastered", or "skipped"
    when opened and moved past without mastery; other steps are "done" or "seen"; "current" wins; a step the class
    moved them past (a bring, a late join) reads "passed" unless done; else "todo"."""
    if current:
        return "current"
    if done:
        return "mastered" if drill else "done"
    if passed:
        return "passed"
    if seen:
        return "skipped" if drill else "seen"
    return "todo"


def continue_at(progress: dict[str, LessonProgress]) -> tuple[str, int] | None:
    """The lesson and step the learner saw last, to offer "continue where you left off"."""
    touched = [(lp.last_seen, slug, lp.last_step) for slug, lp in progress.items() if lp.last_step]
    if not touched:
        return None
    _, slug, step = max(touched, key=lambda t: t[0] or datetime.min)
    return slug, int(step or 1)
