"""CPU per request by route, in one process: a class of N learners seeded in the database (bench/dashboard.py),
then one more learner joins and sends each route's request one at a time, timed on this process's CPU clock
(median of --repeat). Through the ASGI app, so uvicorn's HTTP parsing (about 0.1 ms a request) is not counted;
otherwise the whole stack: middleware, routing, dependencies, database, templates.

Run: .venv/bin/python bench/route_cpu.py [--learners 600] [--repeat 40]
     [--database-url postgresql+asyncpg://postgres@127.0.0.1:5432/test]   a fresh database beside it
Prints figures only; nothing here asserts a time.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import re
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

import httpx
from sqlalchemy import event

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from dashboard import LESSON, seed  # type: ignore[import-not-found]  # noqa: E402

from app.main import create_app  # noqa: E402
from app.settings import Settings  # noqa: E402


def csrf(html: str) -> str:
    match = re.search(r'name="csrf_token" value="([^"]+)"', html)
    return match.group(1) if match else ""


async def timed(repeat: int, call: Callable[[], Awaitable[httpx.Response]], ok: tuple[int, ...],
                statements: list[str]) -> tuple[float, float, float]:
    """Median CPU ms, and database statements and writes (not SELECT) per request."""
    took = []
    statements.clear()
    for _ in range(repeat):
        start = time.process_time()
        r = await call()
        took.append(time.process_time() - start)
        assert r.status_code in ok, (r.status_code, r.text[:300])
    writes = [s for s in statements if not s.lstrip().upper().startswith(("SELECT", "PRAGMA", "BEGIN", "WITH"))]
    return statistics.median(took) * 1000, len(statements) / repeat, len(writes) / repeat


async def run(learners: int, repeat: int, database_url: str) -> None:
    with tempfile.TemporaryDirectory(prefix="gc-cpu-") as folder:
        settings = Settings(data_dir=Path(folder), lessons_dir=ROOT / "lessons", secret_key="bench",
                            database_url=database_url)
        app = create_app(settings)
        async with app.router.lifespan_context(app):
            lesson = next(le for le in app.state.lessons if le.slug == LESSON)
            code, key = await seed(app.state.db, lesson, learners, random.Random(learners))
            transport = httpx.ASGITransport(app=app)
            base = "http://127.0.0.1"
            async with httpx.AsyncClient(transport=transport, base_url=base) as teacher, \
                    httpx.AsyncClient(transport=transport, base_url=base) as c:
                await teacher.get(f"/teach/{code}?key={key}", follow_redirects=True)
                page = (await c.get(f"/join/{code}")).text
                r = await c.post("/join", data={"csrf_token": csrf(page), "code": code, "name": "Probe"})
                step1 = (await c.get(str(r.headers["location"]))).text
                token = csrf(step1)
                banner = re.search(r'hx-get="(/class-banner\?[^"]+)"', step1).group(1)  # type: ignore[union-attr]
                tag = '"banner-' + re.search(r'data-token="([^"]+)"', step1).group(1) + '"'  # type: ignore[union-attr]
                widget = re.search(r'hx-get="(/widgets/weight-storage)"', step1)
                drill_page = (await c.get(f"/lessons/{LESSON}/7")).text
                drill_form = re.search(r'<form[^>]*class="[^"]*drill-form.*?</form>', drill_page, re.S)
                assert drill_form, "step 7 has no drill form"
                fields = dict(re.findall(r'<input type="hidden" name="([^"]+)" value="([^"]*)"', drill_form.group(0)))
                typed = dict.fromkeys(re.findall(r'name="(answer-[^"]+)"', drill_form.group(0)), "14")
                action = re.search(r'action="([^"]+)"', drill_form.group(0)).group(1)  # type: ignore[union-attr]
                hx = {"HX-Request": "true"}
                routes: list[tuple[str, Callable[[], Awaitable[httpx.Response]], tuple[int, ...]]] = [
                    ("GET /healthz (the floor: client, middleware, routing)", lambda: c.get("/healthz"), (200,)),
                    ("GET /class-banner (If-None-Match: 304)",
                     lambda: c.get(banner.replace("&amp;", "&"), headers={**hx, "If-None-Match": tag}), (304,)),
                    ("GET /class-banner (204, no ETag)", lambda: c.get(banner.replace("&amp;", "&"), headers=hx),
                     (204,)),
                    ("GET /lessons/{slug}/{n} (step 1)", lambda: c.get(f"/lessons/{LESSON}/1"), (200,)),
                    ("GET /lessons/{slug}/{n} (step 7, drill)", lambda: c.get(f"/lessons/{LESSON}/7"), (200,)),
                    ("POST /lessons/{slug}/{n}/done", lambda: c.post(f"/lessons/{LESSON}/1/done",
                                                                      data={"csrf_token": token}), (303,)),
                    ("POST /drills/{name}/answer (graded, stored)", lambda: c.post(action, data={**fields, **typed},
                                                                                    headers=hx), (200,)),
                    ("GET /join/{code} (a member: their page)", lambda: c.get(f"/join/{code}"), (200,)),
                    ("dashboard poll", lambda: teacher.get(f"/teach/{code}", headers=hx), (200,)),
                    ("projector poll", lambda: teacher.get(f"/teach/{code}/projector", headers=hx), (200,)),
                ]
                if widget:
                    url = f"{widget.group(1)}?lesson={LESSON}&step=1&w=1&parameters=7e9&bits=8"
                    routes.insert(3, ("GET /widgets/weight-storage (a moved slider)",
                                      lambda: c.get(url, headers=hx), (200,)))
                statements: list[str] = []
                event.listen(app.state.db.engine.sync_engine, "before_cursor_execute",
                             lambda *args: statements.append(args[2]))
                print(f"{learners} learners in the class; median CPU of {repeat} requests each")
                print(f"  {'route':54} {'CPU ms':>7} {'statements':>10} {'writes':>7}")
                for name, call, ok in routes:
                    count = min(repeat, 15) if "answer" in name else repeat  # 20 answers a minute per learner
                    cpu, per, writes = await timed(count, call, ok, statements)
                    print(f"  {name:54} {cpu:7.2f} {per:10.1f} {writes:7.1f}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--learners", type=int, default=600)
    parser.add_argument("--repeat", type=int, default=40)
    parser.add_argument("--database-url", default="", help="PostgreSQL (a fresh database is made beside it)")
    args = parser.parse_args()
    if args.database_url:
        from classroom import fresh_postgres  # type: ignore[import-not-found]

        with fresh_postgres(args.database_url) as url:
            subprocess.run([sys.executable, "-m", "app.cli", "migrate"], cwd=ROOT, check=True,
                           env={**os.environ, "DATABASE_URL": url}, stdout=subprocess.DEVNULL)
            asyncio.run(run(args.learners, args.repeat, url))
    else:
        asyncio.run(run(args.learners, args.repeat, ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
