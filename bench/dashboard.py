"""The instructor's dashboard poll at several class sizes, in one process on a quiet SQLite file: a class of N
learners spread over the flagship lesson's steps (each has visited and finished the steps before theirs, spent
time on them and answered the drills they passed, some wrongly), then the dashboard's and the projector's htmx
poll, timed through the ASGI app (CPU seconds of this process, median of --repeat).

Run: .venv/bin/python bench/dashboard.py [--sizes 30,300,600,1000] [--repeat 15]
     [--database-url postgresql+asyncpg://postgres@127.0.0.1:5432/test]   a fresh database beside it
Prints figures only; nothing here asserts a time.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import statistics
import sys
import tempfile
import time
import uuid
from datetime import timedelta
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from app.classroom import classes  # noqa: E402
from app.classroom.class_models import Member, StepTime  # noqa: E402
from app.classroom.db import Database  # noqa: E402
from app.classroom.models import DrillAttempt, Learner, StepProgress, utcnow  # noqa: E402
from app.main import create_app  # noqa: E402
from app.settings import Settings  # noqa: E402
from app.web.classroom import outline_for  # noqa: E402

LESSON = "what-ai-workloads-need"


async def seed(db: Database, lesson: object, learners: int, rng: random.Random) -> tuple[str, str]:
    """A class of `learners`, each somewhere in the lesson; returns its code and key."""
    outline = outline_for(lesson)  # type: ignore[arg-type]
    klass, key = await classes.create_class(db, "Bench class", outline, None)
    now = utcnow()
    async with db.session() as s:
        for i in range(learners):
            learner = str(uuid.uuid4())
            at = rng.randint(1, len(outline.steps))
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
    return klass.code, key


async def run(sizes: list[int], repeat: int, database_url: str) -> None:
    with tempfile.TemporaryDirectory(prefix="gc-dash-") as folder:
        settings = Settings(data_dir=Path(folder), lessons_dir=ROOT / "lessons", secret_key="bench",
                            database_url=database_url)
        app = create_app(settings)
        async with app.router.lifespan_context(app):
            db: Database = app.state.db
            lesson = next(le for le in app.state.lessons if le.slug == LESSON)
            print(f"{'learners':>8} {'view':10} {'median ms':>10} {'min ms':>8} {'max ms':>8} {'bytes':>8}")
            for size in sizes:
                code, key = await seed(db, lesson, size, random.Random(size))
                transport = httpx.ASGITransport(app=app)
                async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as c:
                    await c.get(f"/teach/{code}?key={key}", follow_redirects=True)
                    for view, path in (("dashboard", ""), ("projector", "/projector")):
                        took, size_bytes = [], 0
                        for _ in range(repeat):
                            start = time.process_time()
                            r = await c.get(f"/teach/{code}{path}", headers={"HX-Request": "true"})
                            took.append(time.process_time() - start)
                            assert r.status_code == 200, r.text[:300]
                            size_bytes = len(r.content)
                            await asyncio.sleep(0.01)
                        print(f"{size:8d} {view:10} {statistics.median(took) * 1000:10.1f} {min(took) * 1000:8.1f} "
                              f"{max(took) * 1000:8.1f} {size_bytes:8d}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="30,300,600,1000")
    parser.add_argument("--repeat", type=int, default=15)
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
            asyncio.run(run(sizes, args.repeat, url))
    else:
        asyncio.run(run(sizes, args.repeat, ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
