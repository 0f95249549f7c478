"""Classes as services: codes, keys, names, joining, time on task, pacing, closing and deleting."""

from __future__ import annotations

import random
import sqlite3
import uuid
from datetime import timedelta

import pytest
from sqlalchemy import func, select

from app.classroom import classes, dashboard, seat
from app.classroom.class_models import Classroom, Member, StepTime
from app.classroom.db import Database
from app.classroom.models import DrillAttempt, utcnow
from app.classroom.ratelimit import RateLimited
from tests.unit.classroom.classroom_helpers import (
    OUTLINE,
    answer,
    join,
    new_class,
    open_step,
    reload,
    rewind,
    run,
)


def test_class_codes_are_six_symbols_from_an_alphabet_without_look_alikes() -> None:
    codes = {classes.new_code() for _ in range(500)}
    assert all(len(c) == 6 and set(c) <= set(classes.CODE_ALPHABET) for c in codes)
    assert not set("0O1IL") & set("".join(codes))
    assert len(classes.CODE_ALPHABET) == 31 and 31**6 == 887_503_681
    assert len(codes) == 500  # no repeats among a few hundred


def test_a_typed_code_forgives_case_spaces_and_dashes_but_not_look_alikes() -> None:
    assert classes.normalise_code(" k7m-3qx ") == "K7M3QX"
    assert classes.normalise_code("K7M 3QX") == "K7M3QX"
    assert classes.normalise_code("K7M3Q") is None
    assert classes.normalise_code("K7M3Q0") is None  # 0 is never in a code
    assert classes.normalise_code("<script>") is None


def test_names_are_trimmed_limited_and_case_folded_for_uniqueness() -> None:
    assert classes.clean_name("  Ada   Lovelace ") == ("Ada Lovelace", "ada lovelace")
    with pytest.raises(classes.ClassError, match="40 characters"):
        classes.clean_name("x" * 41)
    with pytest.raises(classes.ClassError, match="Enter the name"):
        classes.clean_name("   ")
    with pytest.raises(classes.ClassError):
        classes.clean_name("bell\x07")


def test_the_instructor_key_is_kept_only_as_a_hash(url: str, tmp_path: object) -> None:
    klass, key = run(url, new_class)
    assert klass.key_hash != key and len(key) >= 32
    assert classes.key_ok(klass, key)
    assert not classes.key_ok(klass, key[:-1] + ("A" if key[-1] != "A" else "B"))
    assert not classes.key_ok(klass, None) and not classes.key_ok(klass, "")
    dump = "\n".join(sqlite3.connect(url.split("///")[1]).iterdump())
    assert key not in dump and klass.key_hash in dump


def test_rejoining_from_the_same_browser_resumes_under_the_first_name(url: str) -> None:
    async def scenario(db: Database) -> tuple[Member, Member, int]:
        klass, _ = await new_class(db)
        learner = str(uuid.uuid4())
        first = await join(db, klass, "Ada", learner)
        again = await join(db, klass, "Somebody else", learner)
        async with db.session() as s:
            count = (await s.execute(select(func.count()).select_from(Member))).scalar_one()
        return first, again, count

    first, again, count = run(url, scenario)
    assert again.id == first.id and again.name == "Ada" and count == 1


def test_two_learners_cannot_share_a_name_in_one_class_whatever_the_case(url: str) -> None:
    async def scenario(db: Database) -> str:
        klass, _ = await new_class(db)
        other, _ = await new_class(db, "Another class")
        await join(db, klass, "Ada")
        await join(db, other, "ada")  # another class: fine
        with pytest.raises(classes.ClassError) as caught:
            await join(db, klass, " ADA ")
        return caught.value.message

    assert "already called 'ADA'" in run(url, scenario)


def test_joining_keeps_what_the_learner_had_done_alone(url: str) -> None:
    async def scenario(db: Database) -> dashboard.Dashboard:
        from app.classroom import progress

        learner = str(uuid.uuid4())
        await progress.mark_done(db, learner, OUTLINE.slug, 1)
        await progress.mark_done(db, learner, OUTLINE.slug, 2)
        klass, _ = await new_class(db)
        await join(db, klass, "Grace", learner)
        return await dashboard.build_dashboard(db, klass)

    board = run(url, scenario)
    assert board.rows[0].cells[:2] == ["done", "done"] and board.rows[0].done == 2


def test_time_on_a_step_is_the_time_between_page_views(url: str) -> None:
    async def scenario(db: Database) -> dict[int, float]:
        klass, _ = await new_class(db)
        member = await join(db, klass, "Ada")
        await open_step(db, member, 1)
        await rewind(db, member, 90)
        await open_step(db, member, 2)
        await rewind(db, member, 30)
        await open_step(db, member, 2)  # a reload of the same step adds to it
        async with db.session() as s:
            rows = (await s.execute(select(StepTime.step, StepTime.seconds))).all()
        return {step: secs for step, secs in rows}

    seconds = run(url, scenario)
    assert seconds[1] == pytest.approx(90, abs=2)  # 2 s tolerance for the test's own run time
    assert seconds[2] == pytest.approx(30, abs=2)


def test_a_tab_reopened_after_an_hour_adds_no_time_on_task(url: str) -> None:
    """Time on task is active time: a gap between two signs of activity longer than the class's idle minutes (5)
    counts nothing, one just under it counts whole (the walk saw a tab reopened two hours later add 20 minutes)."""
    async def scenario(db: Database) -> tuple[float, float]:
        klass, _ = await new_class(db)
        member = await join(db, klass, "Ada")
        await open_step(db, member, 1)
        await rewind(db, member, 3600)
        await open_step(db, member, 2)
        await rewind(db, member, 4 * 60 + 50)
        await open_step(db, member, 3)
        async with db.session() as s:
            times = dict((await s.execute(select(StepTime.step, StepTime.seconds))).all())
        return times[1], times[2]

    away, reading = run(url, scenario)
    assert away == 0.0
    assert reading == pytest.approx(290, abs=2)  # 2 s tolerance for the test's own run time


def test_widget_moves_count_time_on_the_step_between_page_views(url: str) -> None:
    """Activity is a page view, an answer or a widget move: reading a step for 12 minutes while moving a widget
    every 4 counts all 12, though no two page views are closer than the idle minutes."""
    async def scenario(db: Database) -> float:
        klass, _ = await new_class(db)
        member = await join(db, klass, "Ada")
        await open_step(db, member, 1)
        for _ in range(3):
            await rewind(db, member, 240)
            assert await seat.record_activity(db, member.learner_id, OUTLINE.slug)
        async with db.session() as s:
            return float((await s.execute(select(StepTime.seconds).where(StepTime.step == 1))).scalar_one())

    assert run(url, scenario) == pytest.approx(720, abs=3)


def test_hold_locks_the_steps_after_n_and_release_opens_them(url: str) -> None:
    async def scenario(db: Database) -> list[bool]:
        klass, _ = await new_class(db)
        member = await join(db, klass, "Ada")
        await classes.set_pace(db, klass, "hold", 2, False, 4)
        seen = [(await open_step(db, member, n)).locked for n in (2, 3)]  # type: ignore[union-attr]
        await classes.set_pace(db, await reload(db, klass), "free", None, False, 4)
        seen.append((await open_step(db, member, 3)).locked)  # type: ignore[union-attr]
        return seen

    assert run(url, scenario) == [False, True, False]


def test_a_held_step_is_not_recorded_as_visited(url: str) -> None:
    async def scenario(db: Database) -> list[str]:
        klass, _ = await new_class(db)
        member = await join(db, klass, "Ada")
        await classes.set_pace(db, klass, "hold", 1, False, 4)
        await open_step(db, member, 1)
        await open_step(db, member, 3)
        return (await dashboard.build_dashboard(db, await reload(db, klass))).rows[0].cells

    assert run(url, scenario) == ["current", "todo", "todo", "todo"]


def test_bring_everyone_moves_each_learner_once_then_lets_them_go_on(url: str) -> None:
    async def scenario(db: Database) -> list[object]:
        klass, _ = await new_class(db)
        member = await join(db, klass, "Ada")
        await open_step(db, member, 1)
        await classes.set_pace(db, klass, "bring", 3, True, 4)
        first = await seat.poll(db, member.learner_id, OUTLINE.slug, 1, "0.1.0", False)
        await open_step(db, member, 3)  # the browser follows the move: the bring is done for them
        banner = await open_step(db, member, 4)
        assert banner is not None and not banner.bring_pending
        later = await seat.poll(db, member.learner_id, OUTLINE.slug, 4, banner.token, False)
        return [first.move_to, later.move_to, later.changed]

    assert run(url, scenario) == [3, None, False]


def test_bring_without_move_changes_the_banner_but_moves_nobody(url: str) -> None:
    async def scenario(db: Database) -> tuple[seat.Poll, seat.Poll]:
        klass, _ = await new_class(db)
        member = await join(db, klass, "Ada")
        banner = await open_step(db, member, 1)
        assert banner is not None
        await classes.set_pace(db, klass, "bring", 2, False, 4)
        changed = await seat.poll(db, member.learner_id, OUTLINE.slug, 1, banner.token, False)
        assert changed.banner is not None
        same = await seat.poll(db, member.learner_id, OUTLINE.slug, 1, changed.banner.token, False)
        return changed, same

    changed, same = run(url, scenario)
    assert changed.changed and changed.move_to is None and changed.banner and changed.banner.mode == "bring"
    assert not same.changed


def test_pacing_refuses_a_step_the_lesson_does_not_have(url: str) -> None:
    async def scenario(db: Database) -> None:
        klass, _ = await new_class(db)
        await classes.set_pace(db, klass, "hold", 9, False, 4)

    with pytest.raises(classes.ClassError, match="from 1 to 4"):
        run(url, scenario)


def test_a_closed_class_records_nothing_more_and_accepts_nobody(url: str) -> None:
    async def scenario(db: Database) -> tuple[dashboard.Dashboard, int]:
        klass, _ = await new_class(db)
        member = await join(db, klass, "Ada")
        await open_step(db, member, 1)
        await answer(db, member.learner_id, "8", False)
        await classes.close(db, klass)
        klass = await reload(db, klass)
        await answer(db, member.learner_id, "16", True, at=utcnow() + timedelta(seconds=1))
        banner = await open_step(db, member, 2)
        assert banner is not None and not banner.open
        with pytest.raises(classes.ClassError) as caught:
            await join(db, klass, "Late")
        board = await dashboard.build_dashboard(db, klass)
        return board, caught.value.status

    board, status = run(url, scenario)
    assert status == 410
    assert board.counts.attempts == 1 and board.drills[0].correct == 0
    assert board.rows[0].step == 1  # the visit to step 2 came after the close
    assert not board.info.open and board.counts.stuck == 0


def test_a_class_past_its_end_time_is_closed(url: str) -> None:
    async def scenario(db: Database) -> bool:
        klass, _ = await classes.create_class(db, "Short", OUTLINE, 1.0)
        return seat.is_open(klass, utcnow() + timedelta(hours=1, seconds=1))

    assert run(url, scenario) is False


def test_deleting_a_class_removes_its_names_times_and_answers_and_nothing_else(url: str) -> None:
    solo_time = utcnow() - timedelta(hours=1)

    async def scenario(db: Database) -> tuple[dict[str, int], int]:
        klass, _ = await new_class(db)
        other, _ = await new_class(db, "Kept class")
        ada = str(uuid.uuid4())
        await answer(db, ada, "solo answer", True, at=solo_time)  # before joining: hers, kept
        member = await join(db, klass, "Zanzibar Quux", ada)
        await open_step(db, member, 1)
        await rewind(db, member, 60)
        await open_step(db, member, 2)
        await answer(db, ada, "answer in class", False)
        bob = await join(db, other, "Bob")
        await open_step(db, bob, 1)
        await answer(db, bob.learner_id, "answer of Bob", True)
        await classes.delete_class(db, klass)
        async with db.session() as s:
            counts = {
                "classes": (await s.execute(select(func.count()).select_from(Classroom))).scalar_one(),
                "members": (await s.execute(select(func.count()).select_from(Member))).scalar_one(),
                "times": (await s.execute(select(func.count()).select_from(StepTime))).scalar_one(),
            }
            ada_attempts = (await s.execute(select(func.count()).select_from(DrillAttempt)
                                            .where(DrillAttempt.learner_id == ada))).scalar_one()
        assert await classes.get_class(db, klass.code) is None
        return counts, ada_attempts

    counts, ada_attempts = run(url, scenario)
    assert counts == {"classes": 1, "members": 1, "times": 1}  # only the other class and Bob remain
    assert ada_attempts == 1  # the answer she gave alone, before joining
    dump = "\n".join(sqlite3.connect(url.split("///")[1]).iterdump())
    assert "Zanzibar Quux" not in dump and "answer in class" not in dump
    assert "Kept class" in dump and "answer of Bob" in dump and "solo answer" in dump


def test_a_class_code_collision_is_retried(url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    sequence = iter(["AAAAAA", "AAAAAA", "BBBBBB"])
    monkeypatch.setattr(classes, "new_code", lambda: next(sequence))

    async def scenario(db: Database) -> list[str]:
        first, _ = await new_class(db)
        second, _ = await new_class(db)
        return [first.code, second.code]

    assert run(url, scenario) == ["AAAAAA", "BBBBBB"]


def test_rate_limits_count_across_processes_through_the_database(url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    import time

    middle = (time.time() // 600) * 600 + 300

    class MidWindow:  # a burst that never straddles two rate-limit windows
        def time(self) -> float:
            return middle

    monkeypatch.setattr("app.classroom.ratelimit.time", MidWindow())
    monkeypatch.setattr("app.classroom.classes.time", MidWindow())

    async def scenario(db: Database) -> int:
        for _ in range(classes.WRONG_CODE_ADDRESS_LIMIT[0]):  # a new browser each time: the address's limit
            with pytest.raises(classes.ClassError):
                await classes.join(db, "ZZZZZZ", "x", str(uuid.uuid4()), "10.9.9.9")
        second = Database(db.url)  # another process would open its own engine
        try:
            with pytest.raises(RateLimited) as caught:
                await classes.join(second, "ZZZZZZ", "x", str(uuid.uuid4()), "10.9.9.9")
        finally:
            await second.close()
        return caught.value.retry_after

    assert 0 < run(url, scenario) <= classes.WRONG_CODE_ADDRESS_LIMIT[1] + 1


def test_random_names_survive_joining_exactly_as_cleaned(url: str) -> None:
    rng = random.Random(6)
    alphabet = "abcXYZ éü-'.<>&\"=+@ 中文"
    names = ["".join(rng.choice(alphabet) for _ in range(rng.randint(1, 30))) for _ in range(40)]

    async def scenario(db: Database) -> list[tuple[str, str]]:
        klass, _ = await new_class(db)
        out = []
        for n in names:
            try:
                cleaned, _ = classes.clean_name(n)
            except classes.ClassError:
                continue
            try:
                member = await join(db, klass, n)
            except classes.ClassError:
                continue  # a duplicate after cleaning
            out.append((cleaned, member.name))
        return out

    pairs = run(url, scenario)
    assert pairs and all(a == b for a, b in pairs)


def test_a_burst_that_straddles_two_rate_limit_windows_is_counted_whole(url: str) -> None:
    from app.classroom.ratelimit import hit

    window = 60
    boundary = (1_900_000_000 // window + 1) * window  # a window's start, in the future of no real clock

    async def scenario(db: Database) -> int:
        for k in range(10):  # the last ten seconds of one window
            await hit(db, "burst", 12, window, now=boundary - 10 + k)
        for k in range(2):  # the first seconds of the next: 12 in 12 seconds, still within the limit
            await hit(db, "burst", 12, window, now=boundary + k)
        with pytest.raises(RateLimited) as caught:
            await hit(db, "burst", 12, window, now=boundary + 2)  # the 13th within a minute
        return caught.value.retry_after

    assert run(url, scenario) > 0


def test_a_rate_limit_forgets_a_burst_a_whole_window_later(url: str) -> None:
    from app.classroom.ratelimit import hit

    window = 60
    start = (1_900_000_000 // window) * window

    async def scenario(db: Database) -> int:
        for k in range(12):
            await hit(db, "calm", 12, window, now=start + k)
        return await hit(db, "calm", 12, window, now=start + 2 * window + 1)

    assert run(url, scenario) == 1
