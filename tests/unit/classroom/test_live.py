"""The dashboard's poll by increments (app/classroom/live.py): only the rows that changed, the same figures."""

from __future__ import annotations

from datetime import timedelta

from app.classroom import dashboard, live
from app.classroom.db import Database
from app.classroom.models import utcnow
from tests.unit.classroom.classroom_helpers import join, new_class, open_step, rewind, run
from tests.unit.classroom.live_scenario import figures, rounds, shown


def test_a_poll_sends_only_the_rows_changed_since_the_pages_stamp(url: str) -> None:
    async def scenario(db: Database) -> tuple[dashboard.Dashboard, dashboard.Dashboard, dashboard.Dashboard]:
        klass, _ = await new_class(db)
        people = [await join(db, klass, n) for n in ("Ada", "Bo", "Cy")]
        for member in people:
            await open_step(db, member, 1)
            await rewind(db, member, 60)
        first = await live.dashboard(db, klass)
        await open_step(db, people[1], 2)  # Bo moves on; Ada and Cy do nothing
        polled = await live.dashboard(db, klass, first.stamp)
        return first, polled, await dashboard.build_dashboard(db, klass)

    first, polled, full = run(url, scenario)
    assert not first.partial and [r.name for r in first.rows] == ["Ada", "Bo", "Cy"]
    assert polled.partial and [shown(r) for r in polled.rows] == [shown(full.rows[1])]
    assert polled.rows[0].step == 2
    assert figures(polled) == figures(full)


def test_a_page_that_applies_every_poll_shows_what_a_full_read_shows(url: str) -> None:
    result = run(url, lambda db: rounds(db, seed=18))
    assert result["first"] == 8
    assert result["sent"] == [True] * 6  # rows of the learners who acted, no one else's
    assert result["same"] == [(True, True, True)] * 6


def test_a_stamp_from_the_future_or_nonsense_gets_every_row(url: str) -> None:
    async def scenario(db: Database) -> list[int]:
        klass, _ = await new_class(db)
        for n in ("Ada", "Bo"):
            await rewind(db, await join(db, klass, n), 60)
        future = live.stamp_of(utcnow() + timedelta(hours=1))
        return [len((await live.dashboard(db, klass, since)).rows) for since in (future, "nonsense", "")]

    assert run(url, scenario) == [2, 2, 2]
