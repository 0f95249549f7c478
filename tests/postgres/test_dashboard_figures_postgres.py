"""One scripted class gives the same dashboard on SQLite and on PostgreSQL, with the figures worked out by hand."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from app.classroom import dashboard
from app.classroom.db import Database, upgrade
from app.classroom.models import utcnow
from tests.postgres.pg import fresh_database
from tests.unit.classroom.classroom_helpers import (
    answer,
    finish_after,
    finish_step,
    join,
    new_class,
    open_step,
    rewind,
    run,
)

pytestmark = pytest.mark.postgres


async def scripted(db: Database) -> dict[str, Any]:
    """Ada finishes steps 1-3 and answers wrong, right; Bo is on step 3 after wrong, wrong, wrong; Cy and Di
    finish steps 1-2 in 60 and 90 s and stay on step 3; Ed joins and does nothing for ten minutes."""
    klass, _ = await new_class(db)
    ada, bo, cy, di, ed = [await join(db, klass, n) for n in ("Ada", "Bo", "Cy", "Di", "Ed")]
    for member, seconds in ((ada, 30), (bo, 40), (cy, 60), (di, 90)):
        await finish_after(db, member, 1, seconds)  # opened `seconds` ago, active all along, then Done
        await finish_after(db, member, 2, seconds)
        await open_step(db, member, 3)
    await answer(db, ada.learner_id, "14", False)
    await answer(db, ada.learner_id, "2", True)
    await finish_step(db, ada, 3)
    await open_step(db, ada, 4)
    for typed in ("14", "16", "14"):
        await answer(db, bo.learner_id, typed, False)
    await rewind(db, ed, 600, joined_at=utcnow() - timedelta(seconds=600))
    board = await dashboard.build_dashboard(db, klass)
    return {
        "counts": board.counts.model_dump(include={"joined", "active", "finished", "stuck", "attempts",
                                                   "correct_share"}),
        "steps": [(s.number, s.on_step, s.done, s.p75_seconds is not None) for s in board.steps],
        "drills": [(d.key, d.attempts, d.learners, d.correct, [(w.text, w.count) for w in d.wrong])
                   for d in board.drills],
        "rows": [(r.name, r.cells, r.step, r.done, r.attempts, r.correct, [x.split(":")[0] for x in r.reasons])
                 for r in board.rows],
    }


def test_the_dashboard_figures_are_the_same_on_sqlite_and_postgresql(tmp_path: Path) -> None:
    sqlite_url = f"sqlite+aiosqlite:///{(tmp_path / 'class.db').as_posix()}"
    upgrade(sqlite_url)
    on_sqlite = run(sqlite_url, scripted)
    with fresh_database() as url:
        upgrade(url)
        on_postgres = run(url, scripted)
    assert on_sqlite == on_postgres
    assert on_sqlite["counts"] == {"joined": 5, "active": 4, "finished": 0, "stuck": 2, "attempts": 5,
                                   "correct_share": 0.2}
    # steps 1 and 2: four done, a 75th percentile from them; step 3: Bo, Cy and Di are on it, Ada finished it
    assert on_sqlite["steps"] == [(1, 0, 4, True), (2, 0, 4, True), (3, 3, 1, False), (4, 1, 0, False)]
    assert on_sqlite["drills"] == [("3:bytes-per-parameter", 5, 2, 1, [("14", 3), ("16", 1)])]
    rows = {name: rest for name, *rest in on_sqlite["rows"]}
    assert rows["Ada"] == [["done", "done", "mastered", "current"], 4, 3, 2, 1, []]  # step 3 is a drill step
    assert rows["Bo"] == [["done", "done", "current", "todo"], 3, 2, 3, 0,
                          ["3 wrong answers on the drill of step 3, the latest too"]]
    assert rows["Ed"][0] == ["todo"] * 4 and rows["Ed"][5] == ["no activity for 10 min"]
