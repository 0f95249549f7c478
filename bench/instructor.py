"""The instructor's walk, timed against a real server, as the walk of 2026-12-04 timed it (issue 28's speeds):

    a join, a step and a dashboard load      each under 0.3 s
    moving learners ("bring everyone to step N", *Move learners there*), learners in real Chromium pages
                                             every learner on the step within 2 s, every time
    deleting a class of 30 learners          under 0.5 s

One server process (uvicorn, SQLite unless --database-url, as the walk ran it). An instructor (httpx) creates a
class; --learners learners (httpx) join it, open steps, mark some done and answer the first drill, so the class
has what a real one has to delete; --browsers learners in Chromium sit on their steps while the instructor moves
the class --moves times, each at a random moment of their polls; then the class is deleted. Prints each figure's
median and worst against its target, and ends with one line:

    join_p99_ms=N step_p99_ms=N dashboard_p99_ms=N move_worst_ms=N delete_ms=N ok=yes|no

Run: .venv/bin/python bench/instructor.py [--learners 30] [--browsers 5] [--moves 10] [--url http://host:port]
The machine is shared: take final figures on a quiet one (the load average is printed before and after).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import re
import statistics
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from classroom import LESSON, own_server, read_forms  # noqa: E402

TARGETS = {"join": 0.3, "step": 0.3, "dashboard": 0.3, "move": 2.0, "delete": 0.5}
CHROMIUM = "/usr/bin/chromium"


def csrf(html: str) -> str:
    found = re.search(r'name="csrf_token" value="([^"]+)"', html)
    assert found, "no CSRF token on the page"
    return found.group(1)


@dataclass
class Timings:
    seen: dict[str, list[float]] = field(default_factory=dict)

    def add(self, what: str, seconds: float) -> None:
        self.seen.setdefault(what, []).append(seconds)

    def line(self, what: str) -> str:
        t = sorted(self.seen.get(what, []))
        if not t:
            return f"{what:10} (none)"
        p99 = t[max(0, round(0.99 * len(t)) - 1)]
        ok = "ok" if t[-1] < TARGETS[what] else "OVER"
        return (f"{what:10} n={len(t):4d} median={statistics.median(t) * 1000:7.1f} ms  p99={p99 * 1000:7.1f} ms  "
                f"worst={t[-1] * 1000:7.1f} ms  target<{TARGETS[what] * 1000:.0f} ms {ok}")

    def worst(self, what: str) -> float:
        return max(self.seen.get(what, [0.0]))


async def timed(timings: Timings, what: str, request: object) -> httpx.Response:
    start = time.perf_counter()
    r: httpx.Response = await request  # type: ignore[misc]
    timings.add(what, time.perf_counter() - start)
    return r


async def create_class(base: str, title: str) -> tuple[httpx.AsyncClient, str]:
    teacher = httpx.AsyncClient(base_url=base, timeout=30)
    page = (await teacher.get("/teach")).text
    r = await teacher.post("/teach", data={"csrf_token": csrf(page), "title": title, "lesson": LESSON, "ends": ""})
    assert r.status_code == 303, r.text[:300]
    code = r.headers["location"].split("/")[2]
    await teacher.get(r.headers["location"])
    return teacher, code


async def learner(base: str, code: str, n: int, timings: Timings) -> None:
    """Join, open steps 1 to 3 (marking two done) and answer the first drill twice."""
    async with httpx.AsyncClient(base_url=base, timeout=30) as c:
        page = (await c.get(f"/join/{code}")).text
        r = await timed(timings, "join", c.post("/join", data={"csrf_token": csrf(page), "code": code,
                                                                "name": f"Learner {n}"}))
        url = r.headers["location"]
        for _ in range(3):
            r = await timed(timings, "step", c.get(url))
            done = next((f for f in read_forms(r.text).forms if f.kind == "done"), None)
            if done is None:
                break
            url = (await c.post(done.action, data=done.fields)).headers["location"]
        r = await timed(timings, "step", c.get(f"/lessons/{LESSON}/7"))
        drill = next(f for f in read_forms(r.text).forms if f.kind == "drill")
        for guess in ("16", "8"):
            data = {k: (guess if k.startswith("answer-") else v) for k, v in drill.fields.items()}
            await c.post(drill.action, data=data, headers={"HX-Request": "true"})


def moves(base: str, code: str, teacher_cookies: dict[str, str], browsers: int, rounds: int, seed: int,
          timings: Timings) -> None:
    """Learners in Chromium on their steps; the instructor moves the class `rounds` times, alternating steps 5 and
    9, each at a random moment (0 to 6 s after the last); each learner's move is timed from the instructor's
    click to their page's address on the step."""
    from playwright.sync_api import sync_playwright

    rng = random.Random(seed)
    with sync_playwright() as p, httpx.Client(base_url=base, timeout=30, cookies=teacher_cookies) as teacher:
        browser = p.chromium.launch(executable_path=CHROMIUM if os.path.exists(CHROMIUM) else None, headless=True,
                                    args=["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"])
        pages = []
        for n in range(browsers):
            page = browser.new_context().new_page()
            page.goto(f"{base}/join/{code}")
            page.get_by_label("Your name").fill(f"Browser {n}")
            page.get_by_role("button", name="Join").click()
            page.wait_for_url(re.compile(rf"/lessons/{LESSON}/\d+$"))
            pages.append(page)
        for round_ in range(rounds):
            step = 5 if round_ % 2 == 0 else 9
            for page in pages:  # somewhere else first, each on its own step
                page.goto(f"{base}/lessons/{LESSON}/{rng.randint(1, 3)}")
            time.sleep(rng.uniform(0, 6))
            token = csrf(teacher.get(f"/teach/{code}").text)
            clicked = time.perf_counter()
            r = teacher.post(f"/teach/{code}/pace", data={"csrf_token": token, "mode": "bring", "step": str(step),
                                                          "move": "on"})
            assert r.status_code == 303, r.text[:300]
            waiting = set(range(len(pages)))
            deadline = clicked + 15
            while waiting and time.perf_counter() < deadline:
                for i in list(waiting):
                    if pages[i].url.endswith(f"/{step}"):
                        timings.add("move", time.perf_counter() - clicked)
                        waiting.discard(i)
                pages[0].wait_for_timeout(20)
            for _ in waiting:
                timings.add("move", 15.0)  # never arrived: counted as 15 s
        browser.close()


async def delete(base: str, teacher: httpx.AsyncClient, code: str, timings: Timings) -> None:
    token = csrf((await teacher.get(f"/teach/{code}")).text)
    r = await timed(timings, "delete", teacher.post(f"/teach/{code}/delete", data={"csrf_token": token,
                                                                                   "confirm": code}))
    assert r.status_code == 200 and "deleted" in r.text, r.text[:300]


async def run_async(base: str, learners: int, timings: Timings) -> tuple[httpx.AsyncClient, str]:
    teacher, code = await create_class(base, "Bench class")
    for n in range(learners):  # one after the other, as the walk timed them: a request's own time, not a queue's
        await learner(base, code, n, timings)
    for _ in range(10):
        await timed(timings, "dashboard", teacher.get(f"/teach/{code}"))
    return teacher, code


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--learners", type=int, default=30)
    parser.add_argument("--browsers", type=int, default=5)
    parser.add_argument("--moves", type=int, default=10)
    parser.add_argument("--seed", type=int, default=28)
    parser.add_argument("--url", help="a running server (else one is started)")
    parser.add_argument("--database-url", default="", help="PostgreSQL for the server started here")
    args = parser.parse_args()
    print(f"load average before: {os.getloadavg()[0]:.2f}")
    timings = Timings()

    def go(base: str) -> None:
        teacher, code = asyncio.run(run_async(base, args.learners, timings))
        cookies = dict(teacher.cookies)
        moves(base, code, cookies, args.browsers, args.moves, args.seed, timings)

        async def finish() -> None:
            async with httpx.AsyncClient(base_url=base, timeout=30, cookies=cookies) as t:
                await delete(base, t, code, timings)

        asyncio.run(finish())

    if args.url:
        go(args.url.rstrip("/"))
    else:
        with own_server(1, args.database_url) as base:
            go(base)
    for what in TARGETS:
        print(timings.line(what))
    print(f"load average after: {os.getloadavg()[0]:.2f}")
    seen = timings.seen
    ok = all(max(seen.get(w, [0.0])) < limit for w, limit in TARGETS.items())

    def p99(what: str) -> float:
        t = sorted(seen.get(what, [0.0]))
        return t[max(0, round(0.99 * len(t)) - 1)] * 1000

    print(f"join_p99_ms={p99('join'):.0f} step_p99_ms={p99('step'):.0f} dashboard_p99_ms={p99('dashboard'):.0f} "
          f"move_worst_ms={timings.worst('move') * 1000:.0f} delete_ms={timings.worst('delete') * 1000:.0f} "
          f"ok={'yes' if ok else 'no'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
