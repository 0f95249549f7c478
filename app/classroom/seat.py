"""A learner's seat in their class: what the banner above a step shows, the visit and time on task a step view
records, the banner poll, and the time facts of a class (open, its end) that every view needs."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from pydantic import BaseModel, Field
from sqlalchemy import bindparam, select, update
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncSession

from app.classroom.class_models import Classroom, Member, StepTime
from app.classroom.db import Database
from app.classroom.models import utcnow
from app.classroom.progress import _insert, record_visit_in, touch_member_in

IDLE_CAP = timedelta(minutes=20)  # time on a step stops counting after this long without a page view


def aware(moment: datetime | None) -> datetime | None:
    """SQLite hands back naive datetimes; every time we store is UTC."""
    if moment is None or moment.tzinfo is not None:
        return moment
    return moment.replace(tzinfo=UTC)



def horizon(klass: Classroom | Seat) -> datetime | None:
    """When the class stopped recording: closed, or past its end time; None while it runs."""
    ends = [t for t in (aware(klass.closed_at), aware(klass.ends_at)) if t is not None]
    return min(ends) if ends else None


def is_open(klass: Classroom | Seat, now: datetime | None = None) -> bool:
    end = horizon(klass)
    return end is None or end > (now or utcnow())



class ClassBanner(BaseModel):
    """What a learner in a class sees above a step, and whether this step is held back."""

    code: str
    title: str
    name: str
    lesson: str
    page_step: int
    open: bool
    mode: str = Field(description="free | bring | hold")
    pace_step: int | None
    move: bool
    token: str = Field(description="Changes whenever the banner would change; the poll sends it back")
    locked: bool = Field(description="This step is after the step the class is held at")
    pending_move: bool = Field(description="The instructor moved the class and this learner is elsewhere")


@dataclass(frozen=True)
class Seat:
    """A learner's place in their class: the few columns a step view and a banner poll need, read in one indexed
    query (never the class's outline JSON)."""

    class_id: int
    code: str
    title: str
    lesson: str
    pace_mode: str
    pace_step: int | None
    pace_move: bool
    pace_version: int
    closed_at: datetime | None
    ends_at: datetime | None
    member_id: int
    name: str
    step: int | None
    counted_at: datetime | None
    moved_version: int


SEAT_COLUMNS = (Classroom.id, Classroom.code, Classroom.title, Classroom.lesson, Classroom.pace_mode,
                Classroom.pace_step, Classroom.pace_move, Classroom.pace_version, Classroom.closed_at,
                Classroom.ends_at, Member.id, Member.name, Member.step, Member.counted_at, Member.moved_version)


def banner_token(seat: Seat, open_: bool) -> str:
    """Changes whenever any learner's banner in the class would change (pacing, closing, the end time passing)."""
    return f"{seat.pace_version}.{int(open_)}"


def _banner(seat: Seat, page_step: int, now: datetime) -> ClassBanner:
    open_ = is_open(seat, now)
    mode = seat.pace_mode if open_ else "free"
    locked = mode == "hold" and seat.pace_step is not None and page_step > seat.pace_step
    pending = (mode == "bring" and seat.pace_move and seat.moved_version < seat.pace_version
               and page_step != seat.pace_step)
    return ClassBanner(code=seat.code, title=seat.title, name=seat.name, lesson=seat.lesson,
                       page_step=page_step, open=open_, mode=mode, pace_step=seat.pace_step, move=seat.pace_move,
                       token=banner_token(seat, open_), locked=locked, pending_move=pending)


SEAT_QUERY = (select(*SEAT_COLUMNS).join(Member, Member.class_id == Classroom.id)
              .where(Member.learner_id == bindparam("learner"), Classroom.lesson == bindparam("lesson"))
              .order_by(Member.joined_at.desc()).limit(1))


async def _latest(s: AsyncSession | AsyncConnection, learner_id: str, lesson: str) -> Seat | None:
    """The learner's latest class of this lesson: one query on the members' learner index, through a Core
    connection (a session's ORM execution costs about a millisecond more per call)."""
    conn = await s.connection() if isinstance(s, AsyncSession) else s
    row = (await conn.execute(SEAT_QUERY, {"learner": learner_id, "lesson": lesson})).first()
    return Seat(*row) if row else None  # type: ignore[call-arg]  # the columns of SEAT_COLUMNS, in order


async def held_step(s: AsyncSession, learner_id: str, lesson: str, number: int) -> int | None:
    """The step the learner's class holds them at, when step `number` lies past it; else None."""
    seat = await _latest(s, learner_id, lesson)
    if seat is None:
        return None
    banner = _banner(seat, number, utcnow())
    return banner.pace_step if banner.locked else None


async def note_step(db: Database, learner_id: str, lesson: str, number: int) -> ClassBanner | None:
    """A learner opened a step: record the visit (unless their class holds them before it), count time on task
    for their class while it is open, and say what the class banner shows. One transaction, one commit; the
    statements go through the session's Core connection (SQLAlchemy's ORM step cost ~0.3 ms a statement)."""
    now = utcnow()
    async with db.session() as session:
        s = await session.connection()
        seat = await _latest(s, learner_id, lesson)
        if seat is None:
            await record_visit_in(s, learner_id, lesson, number)
            return None
        banner = _banner(seat, number, now)
        if banner.locked:  # not a visit, but not idle either: reading a held step, waiting for the class
            await s.execute(update(Member).where(Member.id == seat.member_id).values(last_active=now))
            return banner
        await record_visit_in(s, learner_id, lesson, number)
        if not banner.open:
            return banner
        await _count_time(s, seat, number, now)
        if seat.pace_mode == "bring" and seat.pace_move and number == seat.pace_step:
            await s.execute(update(Member).where(Member.id == seat.member_id)
                            .values(moved_version=seat.pace_version))
            banner.pending_move = False
    return banner


async def _count_time(s: AsyncConnection, member: Seat, number: int, now: datetime) -> None:
    """Add the time since the last page view to the step they were on; note arrival on a new step.

    Two statements, both writes: SQLite holds its write lock for as short a time as possible."""
    counted = aware(member.counted_at)
    rows: dict[int, dict[str, float]] = {}
    if member.step is not None and counted is not None:
        elapsed = min(max((now - counted).total_seconds(), 0.0), IDLE_CAP.total_seconds())
        rows[member.step] = {"seconds": elapsed, "visits": 0}
    values: dict[str, object] = {"counted_at": now}
    if member.step != number:
        values.update(step=number, arrived_at=now)
        rows[number] = {"seconds": 0.0, "visits": 1}
    if rows:
        stmt = _insert(s, StepTime).values([{"member_id": member.member_id, "step": k, **v} for k, v in rows.items()])
        await s.execute(stmt.on_conflict_do_update(
            index_elements=["member_id", "step"],
            set_={"seconds": StepTime.seconds + stmt.excluded.seconds,
                  "visits": StepTime.visits + stmt.excluded.visits}))
    # the change stamp is taken at the last write, when this transaction holds SQLite's lock: its commit follows
    await s.execute(update(Member).where(Member.id == member.member_id).values(**values, last_active=utcnow()))


@dataclass
class Poll:
    """The answer to a learner's banner poll."""

    banner: ClassBanner | None
    changed: bool = False
    refresh: bool = False
    move_to: int | None = None


async def poll(db: Database, learner_id: str, lesson: str, page_step: int, token: str, was_locked: bool) -> Poll:
    """Has anything the learner should see changed since `token`? Moves them once per 'bring' when asked.
    One indexed read on a plain connection (no session); a write only for the move."""
    now = utcnow()
    async with db.engine.connect() as conn:
        seat = await _latest(conn, learner_id, lesson)
    if seat is None:
        return Poll(banner=None, changed=True)
    banner = _banner(seat, page_step, now)
    if banner.pending_move and seat.pace_step is not None:
        async with db.session() as s:
            await s.execute(update(Member).where(Member.id == seat.member_id)
                            .values(moved_version=seat.pace_version))
        return Poll(banner=banner, changed=True, move_to=seat.pace_step)
    if banner.locked != was_locked:
        return Poll(banner=banner, changed=True, refresh=True)
    return Poll(banner=banner, changed=banner.token != token)


async def record_activity(db: Database, learner_id: str, lesson: str) -> bool:
    """The learner touched a widget: they are active, not stuck. False when not in an open class."""
    async with db.session() as s:  # one statement: no read before the write
        return await touch_member_in(s, learner_id, lesson)
