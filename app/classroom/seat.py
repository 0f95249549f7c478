"""A learner's seat in their class: what the banner above a step shows, the visit and time on task a step view
records, the banner poll, and the time facts of a class (open, its end) that every view needs."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

from pydantic import BaseModel, Field
from sqlalchemy import bindparam, select, update
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncSession

from app.classroom.class_models import Classroom, Member, StepTime
from app.classroom.db import Database
from app.classroom.models import StepProgress, utcnow
from app.classroom.progress import _insert, record_visit_in

IDLE_MINUTES = 5  # a class's default: time on a step counts only across gaps this short (the instructor may change it)


def aware(moment: datetime | None) -> datetime | None:
    """SQLite hands back naive datetimes; every time we store is UTC."""
    if moment is None or moment.tzinfo is not None:
        return moment
    return moment.replace(tzinfo=UTC)


def horizon(klass: Classroom | Seat) -> datetime | None:
    """When the class stopped recording: closed, or past its end time; None while it runs."""
    return end_of(klass.closed_at, klass.ends_at)


def end_of(closed_at: datetime | None, ends_at: datetime | None) -> datetime | None:
    """The earlier of a closing time and an end time, if any."""
    ends = [t for t in (aware(closed_at), aware(ends_at)) if t is not None]
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
    hold_step: int | None = Field(default=None, description="Steps after this one are locked (hold, or bring-and-hold)")
    token: str = Field(description="Changes whenever the banner would change; the poll sends it back")
    class_token: str = Field(default="", description="The class's part of the token: what a waiting poll waits on")
    locked: bool = Field(description="This step is after the step the class is held at")
    bring_pending: bool = Field(default=False, description="Asked to go to the bring's step and not there yet")
    pending_move: bool = Field(description="The instructor moves the class and this learner is elsewhere")
    message: str = Field(default="", description="The instructor's message to the room, until cleared")


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
    pace_hold: bool = False
    idle_minutes: int = IDLE_MINUTES
    message: str = ""
    bring_version: int = 0

    @property
    def hold_step(self) -> int | None:
        """The step after which everything is locked: a hold, or a bring that also holds."""
        held = self.pace_mode == "hold" or (self.pace_mode == "bring" and self.pace_hold)
        return self.pace_step if held else None

    @property
    def bring_open(self) -> bool:
        """A bring this learner has not reached yet (reaching the step once ends it for them)."""
        return self.pace_mode == "bring" and self.pace_step is not None and self.moved_version < self.bring_version


SEAT_COLUMNS = (Classroom.id, Classroom.code, Classroom.title, Classroom.lesson, Classroom.pace_mode,
                Classroom.pace_step, Classroom.pace_move, Classroom.pace_version, Classroom.closed_at,
                Classroom.ends_at, Member.id, Member.name, Member.step, Member.counted_at, Member.moved_version,
                Classroom.pace_hold, Classroom.idle_minutes, Classroom.message, Classroom.bring_version)


def class_token(pace_version: int, open_: bool) -> str:
    """Changes whenever every learner's banner in the class may change (pacing, a message, closing, the roster,
    the end time passing): what app/classroom/bell.py watches."""
    return f"{pace_version}.{int(open_)}"


def banner_token(seat: Seat, open_: bool) -> str:
    """The class's token, and whether this learner still has a bring to follow."""
    return f"{class_token(seat.pace_version, open_)}.{int(open_ and seat.bring_open)}"


def _banner(seat: Seat, page_step: int, now: datetime) -> ClassBanner:
    open_ = is_open(seat, now)
    mode = seat.pace_mode if open_ else "free"
    hold = seat.hold_step if open_ else None
    bring = open_ and seat.bring_open
    return ClassBanner(code=seat.code, title=seat.title, name=seat.name, lesson=seat.lesson,
                       page_step=page_step, open=open_, mode=mode, pace_step=seat.pace_step, move=seat.pace_move,
                       hold_step=hold, token=banner_token(seat, open_),
                       class_token=class_token(seat.pace_version, open_),
                       locked=hold is not None and page_step > hold,
                       bring_pending=bring and page_step != seat.pace_step,
                       pending_move=bring and seat.pace_move and page_step != seat.pace_step,
                       message=seat.message if open_ else "")


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
    for their class while it is open, end a bring they now reached, and say what the class banner shows. One
    transaction, one commit; the statements go through the session's Core connection (SQLAlchemy's ORM step
    costs ~0.3 ms a statement)."""
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
        reached = seat.bring_open and number == seat.pace_step
        if reached:  # the bring is done for them: the steps it took them past leave no hole
            await pass_steps(s, seat.member_id, learner_id, lesson, seat.step or 1, number)
        await _count_time(s, seat, number, now, {"moved_version": seat.bring_version} if reached else {})
        if reached:
            banner.bring_pending = banner.pending_move = False
            banner.token = f"{banner.class_token}.0"
    return banner


async def pass_steps(s: AsyncConnection, member_id: int, learner_id: str, lesson: str, first: int, target: int
                     ) -> None:
    """Steps first .. target-1 that the learner has not done were passed with the class (a bring, a move, a late
    join): they read "passed with the class" and count neither done nor against them."""
    if target <= first:
        return
    done = {step for (step,) in await s.execute(select(StepProgress.step).where(
        StepProgress.learner_id == learner_id, StepProgress.lesson == lesson, StepProgress.step >= first,
        StepProgress.step < target, StepProgress.completed_at.is_not(None)))}
    rows = [{"member_id": member_id, "step": n, "seconds": 0.0, "visits": 0, "passed": True}
            for n in range(first, target) if n not in done]
    if rows:
        stmt = _insert(s, StepTime).values(rows)
        await s.execute(stmt.on_conflict_do_update(index_elements=["member_id", "step"], set_={"passed": True}))


def active_seconds(gap: float, idle_minutes: int) -> float:
    """The part of a gap between two signs of activity that counts as time on task: all of it, or none when it is
    longer than the class's idle threshold (a tab reopened two hours later adds nothing)."""
    return gap if 0.0 <= gap <= idle_minutes * 60 else 0.0


async def _count_time(s: AsyncConnection, member: Seat, number: int, now: datetime,
                      extra: dict[str, object] | None = None) -> None:
    """Add the active time since the last sign of activity to the step they were on; note arrival on a new step.

    Two statements, both writes: SQLite holds its write lock for as short a time as possible."""
    counted = aware(member.counted_at)
    rows: dict[int, dict[str, float]] = {}
    if member.step is not None and counted is not None:
        elapsed = active_seconds((now - counted).total_seconds(), member.idle_minutes)
        rows[member.step] = {"seconds": elapsed, "visits": 0}
    values: dict[str, object] = {"counted_at": now, **(extra or {})}
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
    class_id: int | None = None


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
        return Poll(banner=banner, changed=True, move_to=seat.pace_step, class_id=seat.class_id)
    if banner.locked != was_locked:
        return Poll(banner=banner, changed=True, refresh=True, class_id=seat.class_id)
    return Poll(banner=banner, changed=banner.token != token, class_id=seat.class_id)


async def record_activity(db: Database, learner_id: str, lesson: str) -> bool:
    """The learner touched a widget: they are active, not stuck, and the time since their last sign of activity
    counts on their step (when it is short enough). False when not in an open class."""
    async with db.session() as session:
        return await active_in(await session.connection(), learner_id, lesson)


async def active_in(s: AsyncConnection, learner_id: str, lesson: str) -> bool:
    """record_activity inside a caller's transaction: one indexed read, then two writes when in an open class."""
    now = utcnow()
    seat = await _latest(s, learner_id, lesson)
    if seat is None or not is_open(seat, now):
        return False
    if seat.step is None:
        await s.execute(update(Member).where(Member.id == seat.member_id).values(last_active=now))
    else:
        await _count_time(s, seat, seat.step, now)
    return True
