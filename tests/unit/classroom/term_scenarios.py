"""Scenarios of a class run all term (issue 28), each an async function of a migrated database: the unit tests
run them on SQLite, tests/postgres/test_term_postgres.py on PostgreSQL."""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from sqlalchemy import select, update

from app.classroom import classes, dashboard, export, owners, projection, room, roster, seat
from app.classroom.class_models import Classroom, FlagMark, Member, StepTime
from app.classroom.db import Database
from app.classroom.models import DrillAttempt, StepProgress, utcnow
from app.classroom.report import learner_report
from tests.unit.classroom.classroom_helpers import (
    DRILL,
    OUTLINE,
    answer,
    finish_step,
    join,
    new_class,
    open_step,
    reload,
    rewind,
)

SECRET = "term-secret"


async def resume_on_a_new_device(db: Database) -> dict[str, Any]:
    """Cy joins, works, then comes back on a new browser: the name alone is refused, the name and the resume code
    give that browser Cy's seat; a wrong code is refused beside its field; a new code replaces the old."""
    klass, _ = await new_class(db)
    cy = await join(db, klass, "Cy")
    await open_step(db, cy, 2)
    code = classes.resume_code(SECRET, cy)
    new_browser = "a1b2c3d4-0000-4000-8000-000000000001"
    out: dict[str, Any] = {"code": code}
    try:
        await classes.join(db, klass.code, "cy", new_browser, "10.0.0.9")
    except classes.ClassError as exc:
        out["taken"] = (exc.field, exc.status, exc.message)
    try:
        await classes.join(db, klass.code, "Cy", new_browser, "10.0.0.9", resume="ZZZZZZ", secret=SECRET)
    except classes.ClassError as exc:
        out["wrong"] = (exc.field, exc.status)
    back = await classes.join(db, klass.code, " cy ", new_browser, "10.0.0.9", resume=code.lower(), secret=SECRET)
    out["back"] = (back.resumed, back.member.id == cy.id, back.member.learner_id == cy.learner_id, back.step)
    await roster.replace_resume(db, cy)
    fresh = await _member(db, cy.id)
    out["replaced"] = classes.resume_code(SECRET, fresh) != code
    try:
        await classes.join(db, klass.code, "Cy", new_browser, "10.0.0.9", resume=code, secret=SECRET)
    except classes.ClassError as exc:
        out["old_code"] = exc.field
    return out


async def _member(db: Database, member_id: int) -> Member:
    async with db.session() as s:
        found = await s.get(Member, member_id)
        assert found is not None
        return found


async def wrong_resume_codes_are_limited(db: Database) -> int:
    """Guessing a resume code meets the same limit as guessing a class code: 10 wrong ones from one browser."""
    klass, _ = await new_class(db)
    await join(db, klass, "Cy")
    guesser = "a1b2c3d4-0000-4000-8000-000000000002"
    for n in range(30):
        try:
            await classes.join(db, klass.code, "Cy", guesser, "10.0.0.8", resume=f"AAAA{n:02d}", secret=SECRET)
        except classes.RateLimited:
            return n
        except classes.ClassError:
            continue
    return -1


@dataclass
class Pacing:
    landing: list[int]
    banners: list[tuple[bool, bool]]
    cells: dict[str, list[str]]
    counts: Any


async def pacing_that_ends(db: Database) -> Pacing:
    """Bring the class to step 3: Ada on step 1 is asked until she reaches it, then goes on to 4 with no banner;
    a late joiner during the bring lands on 3, with steps 1 and 2 passed with the class (no hole)."""
    klass, _ = await new_class(db)
    ada = await join(db, klass, "Ada")
    await open_step(db, ada, 1)
    await classes.set_pace(db, klass, "bring", 3, False, 4)
    before = await open_step(db, ada, 1)
    on_it = await open_step(db, ada, 3)
    await classes.set_message(db, await reload(db, klass), "Read step 4 next")  # the bring is not given again
    after = await open_step(db, ada, 4)
    late = await classes.join(db, klass.code, "Dee", "a1b2c3d4-0000-4000-8000-000000000003", "10.0.0.7")
    await open_step(db, late.member, late.step)
    board = await dashboard.build_dashboard(db, await reload(db, klass))
    return Pacing(landing=[late.step],
                  banners=[(b.bring_pending, b.locked) for b in (before, on_it, after) if b is not None],
                  cells={r.name: r.cells for r in board.rows}, counts=board.counts)


async def late_joiners_land_where_the_class_is(db: Database) -> list[int]:
    """At their own pace a newcomer starts at 1; during a bring most have not reached, at its step; once most
    reached it and moved on, at the middle of the active learners' steps; never past a hold."""
    klass, _ = await new_class(db)
    landed = [(await classes.join(db, klass.code, "First", "a1b2c3d4-0000-4000-8000-000000000010",
                                   "10.0.0.1")).step]
    people = [await join(db, klass, f"P{n}") for n in range(3)]
    for p in people:
        await open_step(db, p, 1)
    await classes.set_pace(db, klass, "bring", 2, False, 4)
    klass = await reload(db, klass)
    landed.append((await classes.join(db, klass.code, "Second", "a1b2c3d4-0000-4000-8000-000000000011",
                                      "10.0.0.1")).step)
    for p in people:  # everyone reaches step 2, then moves on to 4
        await open_step(db, p, 2)
        await open_step(db, p, 4)
    landed.append((await classes.join(db, klass.code, "Third", "a1b2c3d4-0000-4000-8000-000000000012",
                                      "10.0.0.1")).step)
    await classes.set_pace(db, klass, "hold", 3, False, 4)
    klass = await reload(db, klass)
    landed.append((await classes.join(db, klass.code, "Fourth", "a1b2c3d4-0000-4000-8000-000000000013",
                                      "10.0.0.1")).step)
    return landed


async def bring_and_hold_in_one(db: Database) -> list[tuple[bool, bool, int | None]]:
    """"Bring everyone to step 2 and hold": a learner on 1 is asked to go to 2; steps after 2 are locked."""
    klass, _ = await new_class(db)
    ada = await join(db, klass, "Ada")
    await open_step(db, ada, 1)
    await classes.set_pace(db, klass, "bring", 2, True, 4, hold=True)
    seen = []
    for n in (1, 3, 2):
        b = await open_step(db, ada, n)
        assert b is not None
        seen.append((b.bring_pending, b.locked, b.hold_step))
    return seen


# What scenarios give, on SQLite (tests/unit/classroom/test_term.py) and on PostgreSQL alike
LANDINGS = [1, 2, 4, 3]  # own pace: 1; a bring most have not reached: its step; the class moved on: with it; a hold
# on step 1: asked to go to 2; on 3: locked, and still asked; on 2: there
BRING_AND_HOLD = [(True, False, 2), (True, True, 2), (False, False, 2)]
ROOM_MESSAGES = {"message": "Five minutes left", "token_changed": True, "cleared": "",
                 "refusals": [("message", 422)] * 2 + [("timer_minutes", 422)] * 3,
                 "timer": ("3:bytes-per-parameter", True)}
# step 3, a drill, opened and not mastered: the lesson is not finished (a step passed with the class is no hole)
PASSED_IN_THE_REPORT = {"states": ["done", "passed", "skipped", "done"], "done": 2, "passed": 1, "counted": 3,
                        "finished": False}
PROJECTOR_BRING = [(2, 0, False), (2, 1, False), (2, 2, True)]
ANSWER_SHOWN = [({DRILL: 1}, [DRILL]), ({DRILL: 9}, [DRILL]), ({}, [DRILL]), ({DRILL: 7}, [DRILL]), ({}, [])]
ANSWER_LISTED = {DRILL: [(1, {"bytes": "8"})]}


async def the_projector_counts_a_bring(db: Database) -> list[tuple[int, int, bool]]:
    """The projector's bring line, as (active learners, those there, everyone there): Cy, quiet for half an hour,
    is not counted; Ada reaches step 2; Bo goes past it to 3."""
    klass, _ = await new_class(db)
    ada, bo, cy = [await join(db, klass, name) for name in ("Ada", "Bo", "Cy")]
    for member in (ada, bo, cy):
        await open_step(db, member, 1)
    await rewind(db, cy, 30 * 60)
    await classes.set_pace(db, klass, "bring", 2, False, 4)
    seen = []
    for member, step in ((None, 0), (ada, 2), (bo, 3)):
        if member is not None:
            await open_step(db, member, step)
        counts = (await projection.build_projection(db, await reload(db, klass))).counts
        seen.append((counts.active, counts.reached, counts.everyone_there))
    return seen


async def the_answer_on_the_projector(db: Database) -> dict[str, Any]:
    """Showing the answer of the question on screen reveals its drill and pins that question (one answer on screen
    at a time); hiding the answer keeps the reveal; hiding the drill hides its answer too. A show without a seed
    takes the latest question answered in the class, which the projector lists with its answers."""
    klass, _ = await new_class(db)
    ada = await join(db, klass, "Ada")
    await answer(db, ada.learner_id, "8", False)
    latest = (await room.answers_of(db, klass, [DRILL], limit=1))[DRILL][0][0]
    seen = []
    for kind, seed in (("show", latest), ("show", 9), ("hide", None), ("show", 7), ("unreveal", None)):
        klass = await reload(db, klass)
        if kind == "unreveal":
            await classes.reveal(db, klass, DRILL, False)
        else:
            await classes.show_answer(db, klass, DRILL, seed)
        info = (await projection.build_projection(db, await reload(db, klass))).info
        seen.append((dict(info.answers_shown), list(info.revealed)))
        if len(seen) == 1:
            listed = await room.revealed_answers(db, await reload(db, klass))
    return {"latest": latest, "seen": seen, "listed": listed}


async def roster_changes(db: Database) -> dict[str, Any]:
    """Cy joined twice ("Cy" on the lost laptop, "Cy R" on the new one): merge the old row into the new, keeping
    the name Cy, then rename Bo and remove Eve. The board and the exports show one Cy with both devices' steps,
    time and answers, Bo's new name, and no Eve."""
    klass, _ = await new_class(db)
    old = await join(db, klass, "Cy")
    await open_step(db, old, 1)
    await rewind(db, old, 60)
    await finish_step(db, old, 1)
    await open_step(db, old, 2)
    await answer(db, old.learner_id, "8", False)
    new = await join(db, klass, "Cy R")
    await open_step(db, new, 3)
    bo = await join(db, klass, "Bo")
    eve = await join(db, klass, "Eve")
    await answer(db, eve.learner_id, "2", False)
    await roster.merge(db, klass, old, new, "Cy")
    await roster.rename(db, klass, await _member(db, bo.id), "Bo B")
    await roster.remove(db, klass, await _member(db, eve.id))
    klass = await reload(db, klass)
    board = await dashboard.build_dashboard(db, klass)
    learners = list(csv.DictReader(io.StringIO(await export.export(db, klass, "learners"))))
    attempts = list(csv.DictReader(io.StringIO(await export.export(db, klass, "attempts"))))
    async with db.session() as s:
        eve_answers = (await s.execute(select(DrillAttempt).where(DrillAttempt.learner_id == eve.learner_id))).all()
    try:
        await roster.rename(db, klass, await _member(db, bo.id), "cy")
    except classes.ClassError as exc:
        taken = (exc.field, exc.status)
    return {"rows": {r.name: (r.cells, r.attempts) for r in board.rows},
            "csv": {r["name"]: r for r in learners}, "attempts": [(r["name"], r["typed"]) for r in attempts],
            "eve_answers": len(eve_answers), "taken": taken}


async def flags_an_instructor_can_trust(db: Database) -> dict[str, Any]:
    """Wrong answers flag Ada; "helped" hides it until her next wrong answer. Bo, quiet past the idle minutes, is
    flagged; "dismissed" hides it until he is active and quiet again. Cy, quiet for three times the idle minutes,
    left the room: no flag, not counted active, marked left."""
    klass, _ = await new_class(db)
    ada, bo, cy = [await join(db, klass, n) for n in ("Ada", "Bo", "Cy")]
    for m in (ada, bo, cy):
        await open_step(db, m, 3)
    for typed in ("1", "2", "3"):
        await answer(db, ada.learner_id, typed, False)
    await rewind(db, bo, 6 * 60, joined_at=utcnow() - timedelta(minutes=7))
    await rewind(db, cy, 20 * 60, joined_at=utcnow() - timedelta(minutes=21))

    async def board(later: float = 0) -> dashboard.Dashboard:
        return await dashboard.build_dashboard(db, await reload(db, klass), now=utcnow() + timedelta(seconds=later))

    first = await board()
    flags = {f.name: [x.key for x in f.flags] for f in first.stuck}
    await roster.mark_flag(db, ada, "wrong:3:bytes-per-parameter", "helped")
    await roster.mark_flag(db, bo, "idle", "dismissed")
    marked = {f.name: [x.key for x in f.flags] for f in (await board()).stuck}
    await answer(db, ada.learner_id, "4", False, at=utcnow() + timedelta(seconds=1))
    await seat.record_activity(db, bo.learner_id, OUTLINE.slug)  # Bo is back, then quiet for 6 minutes
    again = {f.name: [x.key for x in f.flags] for f in (await board(later=6 * 60)).stuck}
    async with db.session() as s:
        outcomes = dict((await s.execute(select(FlagMark.flag, FlagMark.outcome))).all())
    return {"first": flags, "marked": marked, "again": again, "left": first.left_ids == [cy.id],
            "counts": first.counts, "outcomes": outcomes}


async def gradebook_exports(db: Database) -> dict[str, Any]:
    """learners.csv: mastered, first-try and best scores in whole percent; attempts.csv numbers questions from 1 and
    puts the mistake only on its own part (without the drill's words, only when one part was wrong)."""
    klass, _ = await new_class(db)
    ada = await join(db, klass, "Ada")
    await open_step(db, ada, 3)
    now = utcnow()
    async with db.session() as s:
        for q, parts, mistake in ((0, {"a": True, "b": False}, "weights-only"), (0, {"a": True, "b": True}, None),
                                  (1, {"a": True, "b": True}, None)):
            s.add(DrillAttempt(learner_id=ada.learner_id, drill="bytes-per-parameter", lesson=OUTLINE.slug, step=3,
                               question=q, seed=q, answers={"a": "16", "b": "2"}, parsed={"a": 16.0, "b": 2.0},
                               correct_parts=parts, score=sum(parts.values()) / 2, correct=all(parts.values()),
                               mistake=mistake, created_at=now))
    learners = next(csv.DictReader(io.StringIO(await export.export(db, klass, "learners"))))
    attempts = list(csv.DictReader(io.StringIO(await export.export(db, klass, "attempts"))))
    return {"learners": learners, "attempts": attempts}


async def active_time_and_passed_steps_in_the_report(db: Database) -> dict[str, Any]:
    """A learner moved by the class from step 1 to step 3 has step 2 passed, not a hole: "1 of 3 steps done, 1
    passed with the class" once step 1 is done; finishing the last step makes the report say finished."""
    klass, _ = await new_class(db)
    ada = await join(db, klass, "Ada")
    await open_step(db, ada, 1)
    await finish_step(db, ada, 1)
    await classes.set_pace(db, klass, "bring", 3, True, 4)
    await open_step(db, ada, 3)
    await open_step(db, ada, 4)
    await finish_step(db, ada, 4)
    member = await _member(db, ada.id)
    r = await learner_report(db, await reload(db, klass), member)
    return {"states": [s.state for s in r.steps], "done": r.done, "passed": r.passed, "counted": r.counted_steps,
            "finished": r.finished}


async def instructor_lists(db: Database) -> dict[str, Any]:
    """Classes made under an instructor key are listed newest first; a browser that opens another key's link
    brings its own classes along; a replaced key opens nothing."""
    me, key = await owners.new_instructor(db)
    other, _ = await owners.new_instructor(db)
    first, _ = await classes.create_class(db, "Monday", OUTLINE, None, owner_id=me.id)
    second, _ = await classes.create_class(db, "Tuesday", OUTLINE, None, owner_id=me.id)
    theirs, _ = await classes.create_class(db, "Theirs", OUTLINE, None, owner_id=other.id)
    listed = [k.title for k in await owners.classes_of(db, me)]
    found = await owners.instructor_by_key(db, key)
    moved = await owners.take_over(db, me, other)
    merged = [k.title for k in await owners.classes_of(db, me)]
    new_key = await owners.replace_key(db, me)
    return {"listed": listed, "found": found is not None and found.id == me.id, "moved": moved, "merged": merged,
            "old_key": await owners.instructor_by_key(db, key), "new_key": await owners.instructor_by_key(db, new_key)
            is not None, "ids": (first.id, second.id, theirs.id)}


async def reopen_and_copy(db: Database) -> dict[str, Any]:
    """A closed class reopens with a new end time (or none) and records again; its copy keeps lesson, idle minutes
    and pacing, has no learners, and its own code and key."""
    klass, _ = await new_class(db)
    ada = await join(db, klass, "Ada")
    await classes.set_idle(db, klass, 9)
    await classes.set_pace(db, klass, "hold", 2, False, 4)
    await classes.close(db, klass)
    klass = await reload(db, klass)
    try:
        await classes.reopen(db, await reload(db, await _open_class(db)), None)
    except classes.ClassError as exc:
        refused = (exc.field, exc.status)
    await classes.reopen(db, klass, 2.0)
    klass = await reload(db, klass)
    banner = await open_step(db, ada, 1)
    copy, key = await classes.create_class(db, "Next section", OUTLINE, None, like=klass)
    async with db.session() as s:
        members = (await s.execute(select(Member).where(Member.class_id == copy.id))).all()
    return {"open": seat.is_open(klass), "ends": klass.ends_at is not None, "recorded": banner is not None and
            banner.open, "refused": refused, "copy": (copy.lesson, copy.idle_minutes, copy.pace_mode, copy.pace_step,
                                                     len(members), copy.code != klass.code, bool(key))}


async def _open_class(db: Database) -> Classroom:
    klass, _ = await new_class(db, "Still open")
    return klass


async def room_messages_and_timers(db: Database) -> dict[str, Any]:
    """A message reaches every learner's banner (its token changes), until cleared; an empty or overlong message
    and a timer of 0 or 'two' minutes are refused beside their fields."""
    klass, _ = await new_class(db)
    ada = await join(db, klass, "Ada")
    before = await open_step(db, ada, 1)
    await classes.set_message(db, klass, "  Five   minutes left  ")
    shown = await open_step(db, ada, 1)
    refusals = []
    for text in ("   ", "x" * 201):
        try:
            await classes.set_message(db, await reload(db, klass), text)
        except classes.ClassError as exc:
            refusals.append((exc.field, exc.status))
    for minutes in ("0", "two", "61"):
        try:
            await classes.set_timer(db, klass, "3:bytes-per-parameter", minutes)
        except classes.ClassError as exc:
            refusals.append((exc.field, exc.status))
    await classes.set_timer(db, klass, "3:bytes-per-parameter", "2")
    timed = await reload(db, klass)
    await classes.set_message(db, klass, None)
    cleared = await open_step(db, ada, 1)
    assert before is not None and shown is not None and cleared is not None
    return {"message": shown.message, "token_changed": shown.token != before.token, "cleared": cleared.message,
            "refusals": refusals, "timer": (timed.timer_key, timed.timer_ends_at is not None)}


async def time_counts_only_while_active(db: Database) -> list[float]:
    """Seconds on step 1 after: a 2-minute gap (counts), a 30-minute gap (does not), a widget move 4 minutes after
    a page view (counts), with the class's idle minutes at 5."""
    klass, _ = await new_class(db)
    ada = await join(db, klass, "Ada")
    await open_step(db, ada, 1)
    seen = []
    for gap, act in ((120, "view"), (1800, "view"), (240, "widget")):
        await rewind(db, ada, gap)
        if act == "view":
            await open_step(db, ada, 1)
        else:
            await seat.record_activity(db, ada.learner_id, OUTLINE.slug)
        async with db.session() as s:
            seen.append(float((await s.execute(select(StepTime.seconds).where(
                StepTime.member_id == ada.id, StepTime.step == 1))).scalar_one()))
    return seen


async def progress_rows(db: Database, learner_id: str) -> dict[int, Any]:
    async with db.session() as s:
        return {r.step: r for r in (await s.execute(select(StepProgress).where(
            StepProgress.learner_id == learner_id))).scalars()}


async def touch(db: Database, member: Member, **values: Any) -> None:
    async with db.session() as s:
        await s.execute(update(Member).where(Member.id == member.id).values(**values))
