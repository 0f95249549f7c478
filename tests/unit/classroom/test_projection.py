"""The projector's figures, counted by the database, are the dashboard's figures for the same class."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest

from app.classroom import classes, dashboard, projection
from app.classroom.db import Database, upgrade
from tests.unit.classroom.classroom_helpers import answer, finish_step, join, new_class, open_step, reload, run


def figures(view: dashboard.Dashboard | projection.Projection) -> dict[str, Any]:
    """Everything the projector shows."""
    return {
        "joined": view.counts.joined, "finished": view.counts.finished,
        "steps": [(s.number, s.on_step, s.done, s.done_width) for s in view.steps],
        "drills": [(d.key, d.attempts, d.learners, d.correct, d.correct_share, d.correct_width, d.other_wrong,
                    d.other_width, d.revealed, [(w.text, w.count, w.width) for w in d.wrong]) for d in view.drills],
    }


async def a_class(db: Database, seed: int) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """A class where learners wander the steps, finish some, answer rightly and wrongly; figures while it is
    open, then after it closed with one more answer (which neither view counts)."""
    rng = random.Random(seed)
    klass, _ = await new_class(db)
    members = [await join(db, klass, f"Learner {i}") for i in range(rng.randint(1, 9))]
    for member in members:
        for number in range(1, rng.randint(1, 4) + 1):
            await open_step(db, member, number)
            if rng.random() < 0.7:
                await finish_step(db, member, number)
        for _ in range(rng.randint(0, 4)):
            await answer(db, member.learner_id, rng.choice(["14", "16", "2", " 2 ", ""]), rng.random() < 0.4)
    await classes.reveal(db, klass, "3:bytes-per-parameter", rng.random() < 0.5)
    seen = []
    for _ in range(2):
        klass = await reload(db, klass)
        seen.append((figures(await dashboard.build_dashboard(db, klass)),
                     figures(await projection.build_projection(db, klass))))
        await classes.close(db, klass)
        await answer(db, members[0].learner_id, "99", False)
    return seen


@pytest.mark.parametrize("seed", range(6))
def test_the_projector_counts_what_the_dashboard_counts(tmp_path: Path, seed: int) -> None:
    url = f"sqlite+aiosqlite:///{(tmp_path / 'class.db').as_posix()}"
    upgrade(url)
    for on_dashboard, on_projector in run(url, lambda db: a_class(db, seed)):
        assert on_projector == on_dashboard
