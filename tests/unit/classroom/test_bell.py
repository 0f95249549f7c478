"""Waiting banner polls (app/classroom/bell.py): a poll that finds nothing new waits for its class to change, and
wakes within about a second of any change, made by any process; a quiet class lets it go after its hold."""

from __future__ import annotations

import asyncio
import time

from app.classroom import classes, seat
from app.classroom.bell import Bell
from app.classroom.db import Database
from tests.unit.classroom.classroom_helpers import join, new_class, open_step, reload, run


def test_polls_waiting_on_a_class_wake_together_within_a_second_of_a_change(url: str) -> None:
    async def scenario(db: Database) -> tuple[list[int], float, int]:
        klass, _ = await new_class(db)
        ada = await join(db, klass, "Ada")
        banner = await open_step(db, ada, 1)
        assert banner is not None
        bell = Bell(Database(db.url), every=0.2)  # another process's bell: it sees the change in the database
        waiting = [asyncio.create_task(bell.wait(klass.id, banner.class_token, timeout=10)) for _ in range(3)]
        await asyncio.sleep(0.3)
        changed = time.perf_counter()
        await classes.set_pace(db, await reload(db, klass), "bring", 2, True, 4)
        woken = await asyncio.gather(*waiting)
        took = time.perf_counter() - changed
        other = await bell.wait(klass.id, "no such token", timeout=5)  # an old token: wakes at the next look
        await bell.db.close()
        return woken, took, other

    woken, took, other = run(url, scenario)
    assert woken == [3, 3, 3] and took < 1.0 and other == 1


def test_a_quiet_class_lets_a_poll_go_after_its_hold_and_a_client_that_hung_up_goes_at_once(url: str) -> None:
    async def scenario(db: Database) -> tuple[int, float, int, float]:
        klass, _ = await new_class(db)
        ada = await join(db, klass, "Ada")
        banner = await seat.note_step(db, ada.learner_id, "tiny-class", 1)
        assert banner is not None
        bell = Bell(db, every=0.1)
        start = time.perf_counter()
        quiet = await bell.wait(klass.id, banner.class_token, timeout=0.5)
        held = time.perf_counter() - start
        gone: asyncio.Future[object] = asyncio.get_running_loop().create_future()
        asyncio.get_running_loop().call_later(0.2, gone.set_result, None)
        start = time.perf_counter()
        left = await bell.wait(klass.id, banner.class_token, timeout=5, gone=gone)
        return quiet, held, left, time.perf_counter() - start

    quiet, held, left, after = run(url, scenario)
    assert quiet == 0 and 0.45 < held < 1.5
    assert left == 0 and after < 1.0


def test_one_learner_holds_at_most_two_polls_open_and_a_third_is_answered_at_once(url: str) -> None:
    async def scenario(db: Database) -> tuple[list[int], float, float]:
        klass, _ = await new_class(db)
        ada = await join(db, klass, "Ada")
        banner = await open_step(db, ada, 1)
        assert banner is not None
        bell = Bell(db, every=0.1)
        held = [asyncio.create_task(bell.wait(klass.id, banner.class_token, timeout=1.0, who="ada"))
                for _ in range(2)]
        await asyncio.sleep(0.05)
        start = time.perf_counter()
        third = await bell.wait(klass.id, banner.class_token, timeout=1.0, who="ada")
        refused_in = time.perf_counter() - start
        start = time.perf_counter()
        await bell.wait(klass.id, banner.class_token, timeout=0.3, who="bo")  # another learner still waits
        return [*await asyncio.gather(*held), third], refused_in, time.perf_counter() - start

    answers, refused_in, other_waited = run(url, scenario)
    assert answers == [0, 0, 0] and refused_in < 0.05 and other_waited > 0.25


def test_a_window_counts_each_key_apart_lets_old_hits_go_and_forgets_the_oldest_key_past_its_bound() -> None:
    """The count behind the held poll's and the event stream's rate limits (app.classroom.ratelimit.Window)."""
    import pytest

    from app.classroom.ratelimit import RateLimited, Window

    window = Window(limit=3, window_seconds=60, keys_max=100)
    for t in (0.0, 1.0, 2.0):
        window.hit("ada", now=t)
    with pytest.raises(RateLimited) as refused:
        window.hit("ada", now=30.0)
    assert refused.value.retry_after == 30  # the first hit leaves the window at 60 s
    window.hit("cy", now=30.0)  # another key is counted apart
    window.hit("ada", now=60.5)  # the first hit has left
    for n in range(150):
        window.hit(f"visitor-{n}", now=61.0)
    assert len(window.hits) == 100 and "ada" not in window.hits and "visitor-149" in window.hits
