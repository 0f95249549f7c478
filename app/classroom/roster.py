"""The instructor's roster: rename a learner, merge two rows of one person, remove a learner, replace a resume code.
Every change shows on the board, the learner's banner and the exports (they read the same rows)."""

from __future__ import annotations

import re
import secrets
from datetime import datetime

from sqlalchemy import ColumnElement, Update, delete, func, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncConnection

from app.classroom.attempts import DrillState
from app.classroom.class_models import Classroom, FlagMark, Member, StepTime
from app.classroom.classes import ClassError, clean_name
from app.classroom.db import Database
from app.classroom.models import DrillAttempt, StepProgress, utcnow
from app.classroom.progress import _insert
from app.classroom.seat import aware, horizon


def _bump(klass: Classroom) -> Update:
    """Banners change (a name, a learner gone): wake the class's waiting polls."""
    return update(Classroom).where(Classroom.id == klass.id).values(pace_version=Classroom.pace_version + 1)


async def rename(db: Database, klass: Classroom, member: Member, text: str) -> str:
    """Give a learner another display name (unique in the class, like a name typed at joining)."""
    name, name_key = clean_name(text)
    try:
        async with db.session() as s:
            await s.execute(update(Member).where(Member.id == member.id).values(name=name, name_key=name_key))
            await s.execute(_bump(klass))
    except IntegrityError:
        raise ClassError("name", f"Someone else in this class is already called '{name}'. Merge the two rows if "
                         "they are one person, or add an initial.", status=409) from None
    return name


async def replace_resume(db: Database, member: Member) -> None:
    """A new resume code for a learner (the old one stops working), say when it was shared by mistake."""
    async with db.session() as s:
        await s.execute(update(Member).where(Member.id == member.id).values(resume_salt=secrets.token_hex(4)))


def _in_class(klass: Classroom, member: Member) -> list[ColumnElement[bool]]:
    """The attempts a member made while in the class: what a removal deletes and a merge moves."""
    where: list[ColumnElement[bool]] = [
        DrillAttempt.learner_id == member.learner_id, DrillAttempt.lesson == klass.lesson,
        DrillAttempt.created_at >= member.joined_at]
    end = horizon(klass)
    if end is not None:
        where.append(DrillAttempt.created_at <= end)
    return where


async def remove(db: Database, klass: Classroom, member: Member) -> None:
    """Take a learner out of the class: their name, time on task and the answers they gave in it go; their own
    progress in the lesson (which carries no name) stays with their browser. They may join again."""
    async with db.session() as s:
        await s.execute(delete(DrillAttempt).where(*_in_class(klass, member)))
        await s.execute(delete(StepTime).where(StepTime.member_id == member.id))
        await s.execute(delete(Member).where(Member.id == member.id))
        await s.execute(_bump(klass))


async def merge(db: Database, klass: Classroom, gone: Member, kept: Member, name: str) -> None:
    """One person, two rows (a new device before the resume code): `gone`'s steps, time and class answers move to
    `kept`, whose browser goes on; `gone`'s row leaves the class and `kept` takes `name` (one of the two names)."""
    if gone.id == kept.id:
        raise ClassError("into", "Choose another learner to merge with.")
    if name not in (gone.name, kept.name):
        raise ClassError("name", "Keep one of the two names.")
    async with db.session() as session:
        s = await session.connection()
        await _merge_progress(s, klass.lesson, gone.learner_id, kept.learner_id)
        await _merge_times(s, gone.id, kept.id)
        await _move_attempts(s, klass, gone, kept)
        await s.execute(delete(Member).where(Member.id == gone.id))
        _, name_key = clean_name(name)
        await s.execute(update(Member).where(Member.id == kept.id).values(
            name=name, name_key=name_key, joined_at=_earliest(gone.joined_at, kept.joined_at),
            seat=min(gone.seat, kept.seat)))
        await s.execute(_bump(klass))


def _earliest(a: datetime | None, b: datetime | None) -> datetime | None:
    known = [t for t in (aware(a), aware(b)) if t is not None]
    return min(known) if known else None


async def _merge_progress(s: AsyncConnection, lesson: str, gone: str, kept: str) -> None:
    """Each step: seen at the earlier first visit, done at the earlier completion (the gone device keeps its own)."""
    rows = {learner: {r.step: r for r in (await s.execute(select(StepProgress).where(
        StepProgress.learner_id == learner, StepProgress.lesson == lesson))).all()} for learner in (gone, kept)}
    for step, g in rows[gone].items():
        k = rows[kept].get(step)
        values = {"first_seen": _earliest(g.first_seen, k.first_seen if k else None),
                  "last_seen": max(t for t in (aware(g.last_seen), aware(k.last_seen) if k else None) if t),
                  "completed_at": _earliest(g.completed_at, k.completed_at if k else None),
                  "visits": g.visits + (k.visits if k else 0)}
        stmt = _insert(s, StepProgress).values(learner_id=kept, lesson=lesson, step=step, **values)
        await s.execute(stmt.on_conflict_do_update(index_elements=["learner_id", "lesson", "step"], set_=values))


async def _merge_times(s: AsyncConnection, gone: int, kept: int) -> None:
    """Time on task adds up; a step passed with the class on either row stays passed."""
    times = select(StepTime.step, StepTime.seconds, StepTime.visits, StepTime.passed).where(StepTime.member_id == gone)
    for step, seconds, visits, passed in await s.execute(times):
        stmt = _insert(s, StepTime).values(member_id=kept, step=step, seconds=seconds, visits=visits, passed=passed)
        await s.execute(stmt.on_conflict_do_update(index_elements=["member_id", "step"], set_={
            "seconds": StepTime.seconds + stmt.excluded.seconds, "visits": StepTime.visits + stmt.excluded.visits,
            "passed": StepTime.passed | stmt.excluded.passed}))
    await s.execute(delete(StepTime).where(StepTime.member_id == gone))


async def _move_attempts(s: AsyncConnection, klass: Classroom, gone: Member, kept: Member) -> None:
    """The gone row's class answers become the kept learner's. In a drill the kept learner has not started, they
    keep their question numbers and the drill's state (question, hints, mastery) comes along; in one both started,
    they are numbered before the kept learner's own (0, -1, ...), so the kept learner's current question stays
    theirs and their streak may run back into the earlier device's answers."""
    moved = (await s.execute(select(DrillAttempt.drill, DrillAttempt.question).where(
        *_in_class(klass, gone)))).all()
    for drill in sorted({d for d, _ in moved}):
        started = (await s.execute(select(DrillAttempt.id).where(
            DrillAttempt.learner_id == kept.learner_id, DrillAttempt.drill == drill).limit(1))).first() is not None
        state = (await s.execute(select(DrillState).where(
            DrillState.learner_id == kept.learner_id, DrillState.drill == drill))).first()
        mine = select(DrillAttempt.id).where(*_in_class(klass, gone), DrillAttempt.drill == drill)
        if started or state is not None:
            shift = max(q for d, q in moved if d == drill) + 1
            await s.execute(update(DrillAttempt).where(DrillAttempt.id.in_(mine)).values(
                learner_id=kept.learner_id, question=DrillAttempt.question - shift))
            await _carry_mastery(s, gone.learner_id, kept.learner_id, drill)
        else:
            await s.execute(update(DrillAttempt).where(DrillAttempt.id.in_(mine)).values(learner_id=kept.learner_id))
            await _copy_state(s, gone.learner_id, kept.learner_id, drill)


async def _copy_state(s: AsyncConnection, gone: str, kept: str, drill: str) -> None:
    row = (await s.execute(select(DrillState.question, DrillState.hints, DrillState.mastered_at, DrillState.updated_at)
                           .where(DrillState.learner_id == gone, DrillState.drill == drill))).first()
    if row is not None:
        await s.execute(_insert(s, DrillState).values(learner_id=kept, drill=drill, question=row.question,
                                                     hints=row.hints, mastered_at=row.mastered_at,
                                                     updated_at=row.updated_at)
                        .on_conflict_do_nothing(index_elements=["learner_id", "drill"]))


async def _carry_mastery(s: AsyncConnection, gone: str, kept: str, drill: str) -> None:
    """A drill the gone device mastered is mastered for the kept learner too."""
    mastered = (await s.execute(select(DrillState.mastered_at).where(
        DrillState.learner_id == gone, DrillState.drill == drill))).scalar_one_or_none()
    if mastered is not None:
        stmt = _insert(s, DrillState).values(learner_id=kept, drill=drill, question=0, hints=0, mastered_at=mastered,
                                             updated_at=mastered)
        await s.execute(stmt.on_conflict_do_update(index_elements=["learner_id", "drill"], set_={
            "mastered_at": func.coalesce(DrillState.mastered_at, stmt.excluded.mastered_at)}))


FLAG_KEY = re.compile(r"^(idle|rushing|long:[0-9]{1,4}|wrong:[0-9]{1,4}:[a-z0-9][a-z0-9/_-]{0,80})$")
OUTCOMES = ("helped", "dismissed")


async def mark_flag(db: Database, member: Member, flag: str, outcome: str) -> None:
    """The instructor helped a learner with a flag, or dismissed it: hidden until newer evidence of it (a new wrong
    answer, a new arrival on a step, a new quiet spell, a new rushed step)."""
    if not FLAG_KEY.match(flag):
        raise ClassError("flag", "That is not one of this learner's flags.", status=404)
    if outcome not in OUTCOMES:
        raise ClassError("outcome", "Mark the flag helped or dismissed.")
    now = utcnow()
    async with db.session() as session:
        s = await session.connection()
        stmt = _insert(s, FlagMark).values(member_id=member.id, flag=flag, outcome=outcome, marked_at=now)
        await s.execute(stmt.on_conflict_do_update(index_elements=["member_id", "flag"],
                                                   set_={"outcome": outcome, "marked_at": now}))
