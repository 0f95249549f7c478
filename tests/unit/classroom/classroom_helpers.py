"""Helpers for classroom service tests: a migrated SQLite file, a small lesson outline, learners who act."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Awaitable, Callable
from datetime import datetime, timedelta
from typing import Any, TypeVar

from sqlalchemy import update

from app.classroom import classes, progress, seat
from app.classroom.class_models import Classroom, Member, StepTime
from app.classroom.db import Database
from app.classroom.models import DrillAttempt, StepProgress, utcnow
from app.classroom.outline import Outline, StepOutline

T = TypeVar("T")

OUTLINE = Outline(slug="tiny-class", title="A tiny class", steps=(
    StepOutline(number=1, title="Start", minutes=1),
    StepOutline(number=2, title="Middle", minutes=2),
    StepOutline(number=3, title="Drill", minutes=2, drills=("bytes-per-parameter",)),
    StepOutline(number=4, title="End", minutes=1),
))
DRILL = "3:bytes-per-parameter"


def run(url: str, scenario: Callable[[Database], Awaitable[T]]) -> T:
    """Run one async scenario against the database at url, on its own event loop."""

    async def main() -> T:
        db = Database(url)
        try:
            return await scenario(db)
        finally:
            await db.close()

    return asyncio.run(main())


async def new_class(db: Database, title: str = "Tuesday group") -> tuple[Classroom, str]:
    return await classes.create_class(db, title, OUTLINE, None)


async def join(db: Database, klass: Classroom, name: str, learner: str | None = None) -> Member:
    return (await classes.join(db, klass.code, name, learner or str(uuid.uuid4()), "10.0.0.1")).member


async def open_step(db: Database, member: Member, number: int) -> seat.ClassBanner | None:
    """What the step page does: note the step for the class, then record the visit."""
    banner = await seat.note_step(db, member.learner_id, OUTLINE.slug, number)
    if banner is None or not banner.locked:
        await progress.record_visit(db, member.learner_id, OUTLINE.slug, number)
    return banner


async def finish_step(db: Database, member: Member, number: int) -> None:
    await progress.mark_done(db, member.learner_id, OUTLINE.slug, number)


async def answer(db: Database, learner_id: str, typed: str, correct: bool, at: datetime | None = None,
                 step: int = 3, drill: str = "bytes-per-parameter") -> None:
    """Store an attempt the way the drills module does."""
    async with db.session() as s:
        await progress.touch_learner(s, learner_id)
        s.add(DrillAttempt(learner_id=learner_id, drill=drill, lesson=OUTLINE.slug, step=step, question=0, seed=1,
                           answers={"bytes": typed}, parsed={"bytes": None}, correct_parts={"bytes": correct},
                           score=1.0 if correct else 0.0, correct=correct, mistake=None,
                           created_at=at or utcnow()))
        if at is None:  # an answer given now is activity, as attempts.after_answer records it
            await progress.touch_member_in(s, learner_id, OUTLINE.slug)


async def rewind(db: Database, member: Member, seconds: float, **columns: Any) -> None:
    """Pretend the member's last page view happened `seconds` ago."""
    earlier = utcnow() - timedelta(seconds=seconds)
    values = {c: earlier for c in ("counted_at", "arrived_at", "last_active")} | columns
    async with db.session() as s:
        await s.execute(update(Member).where(Member.id == member.id).values(**values))


async def spend(db: Database, member: Member, step: int, seconds: float) -> None:
    """The member was active on `step` for `seconds` (widget moves every few seconds), up to now: their active time
    on it grows by that much, their last activity is now."""
    now = utcnow()
    async with db.session() as s:
        conn = await s.connection()
        stmt = progress._insert(conn, StepTime).values(member_id=member.id, step=step, seconds=seconds, visits=0)
        await conn.execute(stmt.on_conflict_do_update(index_elements=["member_id", "step"],
                                                      set_={"seconds": StepTime.seconds + seconds}))
        await conn.execute(update(Member).where(Member.id == member.id).values(
            counted_at=now, last_active=now, arrived_at=now - timedelta(seconds=seconds)))


async def finish_after(db: Database, member: Member, step: int, seconds: float) -> None:
    """The member opened `step` `seconds` ago, was active on it all along, and marked it done now."""
    await open_step(db, member, step)
    async with db.session() as s:
        await s.execute(update(StepProgress).where(StepProgress.learner_id == member.learner_id,
                                                   StepProgress.step == step)
                        .values(first_seen=utcnow() - timedelta(seconds=seconds)))
    await spend(db, member, step, seconds)
    await finish_step(db, member, step)


async def reload(db: Database, klass: Classroom) -> Classroom:
    found = await classes.get_class(db, klass.code)
    assert found is not None
    return found
