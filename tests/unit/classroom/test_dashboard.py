"""The instructor's view: who is where, who is stuck and why, how each drill goes, at any class size."""

from __future__ import annotations

import uuid
from datetime import timedelta

import pytest
from sqlalchemy import event, insert

from app.classroom import classes, dashboard, figures, seat
from app.classroom.class_models import Member, StepTime
from app.classroom.db import Database
from app.classroom.models import DrillAttempt, Learner, StepProgress, utcnow
from app.pages.class_pages import DashboardPage, class_head
from app.web.templating import Templates
from tests.unit.classroom.classroom_helpers import (
    DRILL,
    OUTLINE,
    answer,
    finish_after,
    finish_step,
    join,
    new_class,
    open_step,
    reload,
    rewind,
    run,
    spend,
)


def test_the_grid_shows_done_current_and_not_reached_per_learner(url: str) -> None:
    async def scenario(db: Database) -> dashboard.Dashboard:
        klass, _ = await new_class(db)
        ada = await join(db, klass, "Ada")
        await join(db, klass, "Bob")
        await open_step(db, ada, 1)
        await finish_step(db, ada, 1)
        await open_step(db, ada, 2)
        return await dashboard.build_dashboard(db, klass)

    board = run(url, scenario)
    rows = {r.name: r for r in board.rows}
    assert rows["Ada"].cells == ["done", "current", "todo", "todo"]
    assert rows["Bob"].cells == ["todo"] * 4 and rows["Bob"].step is None
    assert board.counts.joined == 2
    assert [s.on_step for s in board.steps] == [0, 1, 0, 0] and board.steps[0].done == 1


def test_drill_stats_give_share_right_and_the_commonest_wrong_answers_as_typed(url: str) -> None:
    async def scenario(db: Database) -> figures.DrillStats:
        klass, _ = await new_class(db)
        people = [await join(db, klass, f"L{i}") for i in range(4)]
        for typed, right, who in [("16", True, 0), ("8 ", False, 1), ("8", False, 2), ("2", False, 3),
                                  ("16", True, 1), ("eight", False, 3)]:
            await answer(db, people[who].learner_id, typed, right)
        return (await dashboard.build_dashboard(db, klass)).drills[0]

    d = run(url, scenario)
    assert (d.key, d.attempts, d.learners, d.correct) == (DRILL, 6, 4, 2)
    assert d.correct_share == pytest.approx(2 / 6, rel=1e-9)  # two of six: float rounding only
    assert [(w.text, w.count) for w in d.wrong][0] == ("8", 2)  # "8 " and "8" are the same answer, trimmed
    assert {w.text for w in d.wrong} == {"8", "2", "eight"} and d.other_wrong == 0


def test_three_wrong_answers_on_a_drill_flag_a_learner_while_the_latest_is_wrong(url: str) -> None:
    async def scenario(db: Database) -> list[list[str]]:
        klass, _ = await new_class(db)
        ada = await join(db, klass, "Ada")
        await open_step(db, ada, 3)
        seen = []
        for typed, right in (("1", False), ("2", False), ("16", True), ("3", False), ("4", False), ("16", True)):
            await answer(db, ada.learner_id, typed, right)
            seen.append((await dashboard.build_dashboard(db, klass)).rows[0].reasons)
        return seen

    one, two, right, three, four, right_again = run(url, scenario)
    assert one == two == right == []  # two wrong, then right: not stuck
    assert three == ["3 wrong answers on the drill of step 3, the latest too"]  # wrong, wrong, right, wrong
    assert four == ["4 wrong answers on the drill of step 3, the latest too"]
    assert right_again == []


def test_long_on_a_step_is_judged_by_its_own_minutes_and_the_active_classs_pace(url: str) -> None:
    """Step 2 should take 2 minutes; four active learners finished it in 2 to 4 (75th percentile 3): the limit is
    twice the slower of the two, 6 minutes. Nine active minutes are flagged, five are not."""
    async def scenario(db: Database) -> dashboard.Dashboard:
        klass, _ = await new_class(db)
        for i, minutes in enumerate((2, 3, 3, 4)):
            m = await join(db, klass, f"Quick {i}")
            await finish_after(db, m, 2, minutes * 60)
            await open_step(db, m, 3)
        for name, minutes in (("Slow", 9), ("Steady", 5)):
            m = await join(db, klass, name)
            await open_step(db, m, 2)
            await spend(db, m, 2, minutes * 60)  # active all along: widget moves, no idle gap
        return await dashboard.build_dashboard(db, klass)

    board = run(url, scenario)
    assert board.steps[1].p75_seconds == pytest.approx(180, abs=3)
    flagged = {r.name: r.reasons for r in board.stuck}
    assert list(flagged) == ["Slow"]
    assert flagged["Slow"] == ["long on step 2: 9 min active, against about 3 min expected; active classmates "
                               "took 3 min"]


def test_classmates_who_click_straight_through_do_not_make_a_busy_learner_look_stuck(url: str) -> None:
    """The walk: three learners clicked Done on step 2 within a second, so its 75th percentile was 0 s and a
    learner busy with the widget for 2 minutes was flagged. Rushed steps say nothing of a step's pace: the step's
    own 2 minutes set the limit (4 min), and the three are flagged as rushing instead."""
    async def scenario(db: Database) -> dashboard.Dashboard:
        klass, _ = await new_class(db)
        for i in range(3):
            m = await join(db, klass, f"Rush {i}")
            for n in (1, 2, 3):
                await open_step(db, m, n)
                await finish_step(db, m, n)
        busy = await join(db, klass, "Busy")
        await open_step(db, busy, 2)
        await spend(db, busy, 2, 150)
        return await dashboard.build_dashboard(db, klass)

    board = run(url, scenario)
    flags = {r.name: [(f.kind, f.text) for f in r.flags] for r in board.stuck}
    assert "Busy" not in flags and board.steps[1].p75_seconds is None
    assert flags["Rush 0"] == [("rushing", "clicked Done on 3 steps within a second of opening each (steps 1–3)")]
    assert board.counts.rushing == 3 and board.counts.stuck == 0


def test_no_percentile_and_no_flag_until_three_learners_finished_the_step(url: str) -> None:
    async def scenario(db: Database) -> dashboard.Dashboard:
        klass, _ = await new_class(db)
        quick = await join(db, klass, "Quick")
        await open_step(db, quick, 2)
        await rewind(db, quick, 60)
        await finish_step(db, quick, 2)
        await open_step(db, quick, 3)
        slow = await join(db, klass, "Slow")
        await open_step(db, slow, 2)
        await rewind(db, slow, 30 * 60, last_active=utcnow())
        return await dashboard.build_dashboard(db, klass)

    board = run(url, scenario)
    assert board.steps[1].p75_seconds is None and board.stuck == []


def test_no_activity_for_the_chosen_minutes_flags_a_learner(url: str) -> None:
    async def scenario(db: Database) -> list[list[str]]:
        klass, _ = await new_class(db)
        ada = await join(db, klass, "Ada")
        await open_step(db, ada, 1)
        klass = await reload(db, klass)
        later = utcnow() + timedelta(minutes=6)
        before = (await dashboard.build_dashboard(db, klass, now=utcnow())).rows[0].reasons
        after = (await dashboard.build_dashboard(db, klass, now=later)).rows[0].reasons
        await classes.set_idle(db, klass, 10)
        relaxed = (await dashboard.build_dashboard(db, await reload(db, klass), now=later)).rows[0].reasons
        return [before, after, relaxed]

    before, after, relaxed = run(url, scenario)
    assert before == []
    assert after == ["no activity for 6 min"]
    # with 10 idle minutes, those 6 quiet minutes are reading time: on a 1-minute step, long
    assert relaxed == ["long on step 1: 6 min active, against about 60 s expected"]


def test_a_widget_move_counts_as_activity(url: str) -> None:
    async def scenario(db: Database) -> tuple[float, bool]:
        klass, _ = await new_class(db)
        ada = await join(db, klass, "Ada")
        await open_step(db, ada, 1)
        await rewind(db, ada, 600)
        recorded = await seat.record_activity(db, ada.learner_id, OUTLINE.slug)
        return (await dashboard.build_dashboard(db, klass)).rows[0].idle_seconds, recorded

    idle, recorded = run(url, scenario)
    assert recorded and idle < 5


def test_a_learner_who_finished_is_never_flagged(url: str) -> None:
    async def scenario(db: Database) -> dashboard.Dashboard:
        klass, _ = await new_class(db)
        ada = await join(db, klass, "Ada")
        for n in (1, 2, 3, 4):
            await open_step(db, ada, n)
            await finish_step(db, ada, n)
        return await dashboard.build_dashboard(db, klass, now=utcnow() + timedelta(hours=1))

    board = run(url, scenario)
    assert board.counts.finished == 1 and board.stuck == []


def test_the_dashboard_reads_a_class_in_five_queries_whatever_its_size(url: str) -> None:
    """300 learners with progress and answers: no query per learner, so the 2 s poll stays cheap."""

    async def scenario(db: Database) -> tuple[dashboard.Dashboard, int]:
        klass, _ = await new_class(db)
        await _fill(db, klass.id, learners=300)
        statements: list[str] = []
        event.listen(db.engine.sync_engine, "before_cursor_execute",
                     lambda *args: statements.append(args[2]))
        board = await dashboard.build_dashboard(db, klass)
        return board, len([s for s in statements if s.lstrip().upper().startswith("SELECT")])

    board, selects = run(url, scenario)
    assert board.counts.joined == 300 and board.counts.attempts == 900
    assert selects == 6  # members, progress, time on task, attempts, last answers, the instructor's marks


async def _fill(db: Database, class_id: int, learners: int) -> None:
    """Bulk rows: each learner done with steps 1-2, on step 3, three answers."""
    now = utcnow()
    ids = [str(uuid.uuid4()) for _ in range(learners)]
    async with db.session() as s:
        await s.execute(insert(Learner), [{"id": i, "created_at": now, "last_seen": now} for i in ids])
        await s.execute(insert(Member), [
            {"class_id": class_id, "learner_id": i, "name": f"Learner {n}", "name_key": f"learner {n}",
             "joined_at": now, "step": 3, "arrived_at": now, "counted_at": now, "last_active": now,
             "moved_version": 0} for n, i in enumerate(ids)])
        await s.execute(insert(StepProgress), [
            {"learner_id": i, "lesson": OUTLINE.slug, "step": st, "first_seen": now, "last_seen": now,
             "completed_at": now if st < 3 else None, "visits": 1} for i in ids for st in (1, 2, 3)])
        await s.execute(insert(DrillAttempt), [
            {"learner_id": i, "drill": "bytes-per-parameter", "lesson": OUTLINE.slug, "step": 3, "question": q,
             "seed": q, "answers": {"bytes": str(q)}, "parsed": {"bytes": q}, "correct_parts": {"bytes": q == 2},
             "score": float(q == 2), "correct": q == 2, "mistake": None, "created_at": now}
            for i in ids for q in range(3)])
    async with db.session() as s:
        members = (await s.execute(Member.__table__.select())).all()
        await s.execute(insert(StepTime), [{"member_id": m.id, "step": st, "seconds": 60.0 * st, "visits": 1}
                                           for m in members for st in (1, 2)])


def test_a_hold_does_not_flag_learners_at_or_past_the_held_step(url: str) -> None:
    """Issue 13: held at step 2, a learner ahead on step 3 and one on step 2 wait for the class, however quiet;
    a learner behind on step 1 who does nothing may be stuck; released, the one ahead is judged again."""

    async def scenario(db: Database) -> tuple[dict[str, list[str]], dict[str, list[str]]]:
        klass, _ = await new_class(db)
        ada, bo, cy = [await join(db, klass, n) for n in ("Ada", "Bo", "Cy")]
        for member, step in ((ada, 3), (bo, 2), (cy, 1)):
            await open_step(db, member, step)
        await classes.set_pace(db, klass, "hold", 2, False, len(OUTLINE.steps))
        later = utcnow() + timedelta(minutes=10)
        held = await dashboard.build_dashboard(db, await reload(db, klass), now=later)
        await classes.set_pace(db, klass, "free", None, False, len(OUTLINE.steps))
        released = await dashboard.build_dashboard(db, await reload(db, klass), now=later)
        return {r.name: r.reasons for r in held.rows}, {r.name: r.reasons for r in released.rows}

    held, released = run(url, scenario)
    assert held == {"Ada": [], "Bo": [], "Cy": ["no activity for 10 min"]}
    assert released["Ada"] == ["no activity for 10 min"] and released["Bo"] == ["no activity for 10 min"]


def test_opening_a_held_step_counts_as_activity(url: str) -> None:
    """A learner ahead of a hold who opens a locked step is reading, not gone: no visit is recorded, but they
    are active."""

    async def scenario(db: Database) -> tuple[bool, float, int | None]:
        klass, _ = await new_class(db)
        ada = await join(db, klass, "Ada")
        await open_step(db, ada, 1)
        await classes.set_pace(db, klass, "hold", 1, False, len(OUTLINE.steps))
        await rewind(db, ada, 600, joined_at=utcnow() - timedelta(seconds=600))
        banner = await open_step(db, ada, 3)
        row = (await dashboard.build_dashboard(db, await reload(db, klass))).rows[0]
        return bool(banner and banner.locked), row.idle_seconds, row.step

    locked, idle, step = run(url, scenario)
    assert locked and idle < 5 and step == 1


def test_the_stuck_list_names_the_worst_fifty_and_counts_the_rest_while_the_grid_marks_all(url: str) -> None:
    """A class of 120 gone quiet: the summary names 50 with their reasons and says "and 70 more", and the ids of
    all 120 travel in one attribute the grid's marks read (static/dashboard.js), so no row loses its mark."""
    async def scenario(db: Database) -> tuple[dashboard.Dashboard, str]:
        klass, _ = await new_class(db)
        await _fill(db, klass.id, learners=120)
        board = await dashboard.build_dashboard(db, await reload(db, klass), now=utcnow() + timedelta(minutes=6))
        macro = Templates().env.get_template("classroom/_live.html").module.summary  # type: ignore[attr-defined]
        page = DashboardPage(head=class_head(board.info, "http://127.0.0.1/join"), d=board)
        return board, str(macro(page, "token"))

    board, html = run(url, scenario)
    assert board.counts.stuck == 120 and len(board.stuck) == 120
    assert html.count("<li data-stuck=") == dashboard.STUCK_SHOWN == 50
    assert "and 70 more, marked in the grid" in html
    ids = html.split('data-stuck-ids="')[1].split('"')[0].split()
    assert sorted(ids) == sorted(str(f.member_id) for f in board.stuck)
