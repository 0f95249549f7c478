"""The instructor's dashboard poll at several class sizes, in one process on a quiet SQLite file: a class of N
learners spread over the flagship lesson's steps (each has visited and finished the steps before theirs, spent
time on them and answered the drills they passed, some wrongly), then the dashboard's, the cockpit's and the
projector's htmx poll as their pages send it (the dashboard and cockpit with the stamp of their last answer), timed
through the ASGI app (CPU seconds of this process, median of --repeat), --interval apart. Before each poll --changes
learners open their next step (untimed), so each dashboard poll has that many rows to send; "first" is the page's
first load.

Run: .venv/bin/python bench/dashboard.py [--sizes 30,300,600,1000] [--repeat 15] [--changes 10 | --changes 5%]
     [--database-url postgresql+asyncpg://postgres@127.0.0.1:5432/test]   a fresh database beside it
Prints figures only; nothing here asserts a time.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import re
import statistics
import sys
import tempfile
import time
import uuid
from datetime import timedelta
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from app.classroom import classes, seat  # noqa: E402
from app.classroom.class_models import Member, StepTime  # noqa: E402
from app.classroom.db import Database  # noqa: E402
from app.classroom.models import DrillAttempt, Learner, StepProgress, utcnow  # noqa: E402
from app.main import create_app  # noqa: E402
from app.pages.class_drills import outline_for  # noqa: E402
from app.settings import Settings  # noqa: E402

LESSON = "what-ai-workloads-need"


async def seed(db: Database, lesson: object, learners: int, rng: random.Random) -> tuple[str, str, list[list[Any]]]:
    """A class of `learners`, each somewhere in the lesson; returns its code, key and [learner id, step]s."""
    outline = outline_for(lesson)  # type: ignore[arg-type]
    klass, key = await classes.create_class(db, "Bench class", outline, None)
    now = utcnow()
    people: list[list[Any]] = []
    async with db.session() as s:
        for i in range(learners):
            learner = str(uuid.uuid4())
            at = rng.randint(1, len(outline.steps))
            people.append([learner, at])
            joined = now - timedelta(minutes=rng.uniform(5, 40))
            s.add(Learner(id=learner, created_at=joined, last_seen=now))
            await s.flush()
            member = Member(class_id=klass.id, learner_id=learner, name=f"Learner {i}", name_key=f"learner {i}",
                            joined_at=joined, last_active=now - timedelta(seconds=rng.uniform(0, 600)),
                            moved_version=0, step=at, arrived_at=now - timedelta(seconds=rng.uniform(0, 300)),
                            counted_at=now - timedelta(seconds=rng.uniform(0, 120)))
            s.add(member)
            await s.flush()
            for step in outline.steps[:at]:
                done = step.number < at
                s.add(StepProgress(learner_id=learner, lesson=outline.slug, step=step.number, first_seen=joined,
                                   last_seen=now, completed_at=now if done else None, visits=1))
                s.add(StepTime(member_id=member.id, step=step.number, seconds=rng.uniform(20, 200), visits=1))
                for drill in step.drills:
                    for _ in range(rng.randint(1, 4)):
                        right = rng.random() < 0.6
                        typed = str(rng.choice([2, 4, 8, 16, 140]))
                        s.add(DrillAttempt(learner_id=learner, drill=drill, lesson=outline.slug, step=step.number,
                                           question=0, seed=1, answers={"bytes": typed}, parsed={"bytes": 2.0},
                                           correct_parts={"bytes": right}, score=float(right), correct=right,
                                           created_at=joined + timedelta(seconds=rng.uniform(0, 200))))
    return klass.code, key, people


async def act(db: Database, people: list[list[Any]], count: int, rng: random.Random) -> None:
    """`count` learners open their next step (the visit, time on task and change stamp, as a step page does)."""
    for person in rng.sample(people, min(count, len(people))):
        person[1] = person[1] % 21 + 1
        await seat.note_step(db, person[0], LESSON, person[1])


async def timed(c: httpx.AsyncClient, path: str) -> tuple[float, httpx.Response]:
    start = time.process_time()
    r = await c.get(path, headers={"HX-Request": "true"})
    took = time.process_time() - start
    assert r.status_code == 200, r.text[:300]
    return took, r


def stamp(r: httpx.Response) -> str:
    found = re.search(r"since=([0-9.]+)", r.text)
    return found.group(1) if found else ""


async def run(sizes: list[int], repeat: int, database_url: str, changes: str, interval: float) -> None:
    with tempfile.TemporaryDirectory(prefix="gc-dash-") as folder:
        settings = Settings(data_dir=Path(folder), lessons_dir=ROOT / "lessons", secret_key="bench",
                            database_url=database_url)
        app = create_app(settings)
        async with app.router.lifespan_context(app):
            db: Database = app.state.db
            lesson = next(le for le in app.state.lessons if le.slug == LESSON)
            print(f"{'learners':>8} {'view':10} {'median ms':>10} {'min ms':>8} {'max ms':>8} {'first ms':>9} "
                  f"{'rows':>5} {'bytes':>8}")
            for size in sizes:
                code, key, people = await seed(db, lesson, size, random.Random(size))
                count = round(size * float(changes[:-1]) / 100) if changes.endswith("%") else int(changes)
                async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://127.0.0.1") as c:
                    await c.get(f"/teach/{code}?key={key}", follow_redirects=True)
                    for view, path in (("dashboard", ""), ("cockpit", "/cockpit"), ("projector", "/projector")):
                        await poll_view(c, db, people, size, view, f"/teach/{code}{path}", repeat, count, interval)


async def poll_view(c: httpx.AsyncClient, db: Database, people: list[list[Any]], size: int, view: str, path: str,
                    repeat: int, count: int, interval: float) -> None:
    rng = random.Random(size + 1)
    first, r = await timed(c, path)
    took, rows = [], []
    for _ in range(repeat):
        await act(db, people, count, rng)
        since = stamp(r)
        one, r = await timed(c, f"{path}?since={since}" if since else path)
        took.append(one)
        rows.append(r.text.count("<tr data-learner"))
        await asyncio.sleep(interval)
    print(f"{size:8d} {view:10} {statistics.median(took) * 1000:10.1f} {min(took) * 1000:8.1f} "
          f"{max(took) * 1000:8.1f} {first * 1000:9.1f} {statistics.median(rows):5.0f} {len(r.content):8d}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="30,300,600,1000")
    parser.add_argument("--repeat", type=int, default=15)
    parser.add_argument("--changes", default="10",
                        help="learners who act between two polls: a number, or N%% of the class")
    parser.add_argument("--interval", type=float, default=2.0, help="seconds between polls, as the page polls")
    parser.add_argument("--database-url", default="", help="PostgreSQL (a fresh database is made beside it)")
    args = parser.parse_args()
    sizes = [int(x) for x in args.sizes.split(",")]
    if args.database_url:
        sys.path.insert(0, str(ROOT / "bench"))
        from classroom import fresh_postgres  # type: ignore[import-not-found]

        with fresh_postgres(args.database_url) as url:
            import subprocess

            subprocess.run([sys.executable, "-m", "app.cli", "migrate"], cwd=ROOT, check=True,
                           env={**__import__("os").environ, "DATABASE_URL": url}, stdout=subprocess.DEVNULL)
            asyncio.run(run(sizes, args.repeat, url, args.changes, args.interval))
    else:
        asyncio.run(run(sizes, args.repeat, "", args.changes, args.interval))
    return 0


if __name__ == "__main__":
    sys.exit(main())
