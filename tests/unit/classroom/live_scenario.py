"""A class that acts in rounds while its dashboard polls by increments: the page that applies each poll's rows
must show what a full read of the class shows. Shared by the SQLite test and the PostgreSQL one."""

from __future__ import annotations

import random
from typing import Any

from app.classroom import dashboard, live, seat
from app.classroom.dashboard import Dashboard, LearnerRow
from app.classroom.db import Database
from tests.unit.classroom.classroom_helpers import (
    OUTLINE,
    answer,
    finish_step,
    join,
    new_class,
    open_step,
    reload,
    rewind,
)


def shown(r: LearnerRow) -> tuple[Any, ...]:
    """What a row shows that does not change with the clock."""
    return r.name, r.step, tuple(r.cells), r.done, r.attempts, r.correct


def figures(d: Dashboard) -> dict[str, Any]:
    return {
        "counts": d.counts.model_dump(include={"joined", "active", "finished", "stuck", "attempts", "correct_share"}),
        "steps": [(s.number, s.on_step, s.done, s.p75_seconds) for s in d.steps],
        "drills": [(x.key, x.attempts, x.learners, x.correct, [(w.text, w.count) for w in x.wrong]) for x in d.drills],
        "stuck": [(r.name, [x.split(":")[0] for x in r.reasons]) for r in d.stuck],
    }


async def act(db: Database, rng: random.Random, klass: Any, member: Any) -> None:
    step = rng.randint(1, len(OUTLINE.steps))
    what = rng.choice(("open", "finish", "answer", "activity"))
    if what == "open":
        await open_step(db, member, step)
    elif what == "finish":
        await finish_step(db, member, step)
    elif what == "answer":
        await answer(db, member.learner_id, rng.choice(("2", "14", "16")), rng.random() < 0.4)
    else:
        await seat.record_activity(db, member.learner_id, OUTLINE.slug)


async def rounds(db: Database, seed: int, learners: int = 8, per_round: int = 3, count: int = 6) -> dict[str, Any]:
    """Returns the page's first rows, per poll whether it sent only rows of learners who acted since the first
    load (within live.GRACE a row comes again), and per round whether the page (first load plus every poll's
    rows) and the poll's figures equal a full read's."""
    rng = random.Random(seed)
    klass, _ = await new_class(db)
    people = [await join(db, klass, f"Learner {i}") for i in range(learners)]
    for member in people:
        await rewind(db, member, 60)  # joined a minute ago: before the first page's stamp and its grace
    page = await live.dashboard(db, klass)
    rows = {r.member_id: shown(r) for r in page.rows}
    first, sent, same, acted = len(page.rows), [], [], set()
    for _ in range(count):
        for member in rng.sample(people, per_round):
            await act(db, rng, klass, member)
            acted.add(member.id)
        klass = await reload(db, klass)
        polled = await live.dashboard(db, klass, page.stamp)
        rows.update({r.member_id: shown(r) for r in polled.rows})
        full = await dashboard.build_dashboard(db, klass)
        sent.append({r.member_id for r in polled.rows} <= acted)
        same.append((polled.partial, figures(polled) == figures(full),
                     rows == {r.member_id: shown(r) for r in full.rows}))
        page = polled
    return {"first": first, "sent": sent, "same": same}
