"""Widget updates for other users while the heavy routes run.

Starts its own server (bench/classroom.py's own_server), fills a class with learners so its export is
heavy, then times widget updates from a few clients twice: with nothing else running, and while one client
hammers the heavy routes (every profile file size, the class's three exports, a 2 MB body). Prints one line:

    heavy: idle p50_ms=N p99_ms=N | heavy p50_ms=N p99_ms=N | ratio_p99=N heavy_requests=N

Run it beside a control (`--app` with another checkout) at the same load: the machine is shared, so the
absolute figures move with everyone else's work, the ratio much less.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import json
import re
import sys
import time
from pathlib import Path

import httpx

HERE = Path(__file__).resolve().parent
_spec = importlib.util.spec_from_file_location("bench_classroom", HERE / "classroom.py")
assert _spec and _spec.loader
classroom = importlib.util.module_from_spec(_spec)
sys.modules["bench_classroom"] = classroom  # its dataclasses look their module up
_spec.loader.exec_module(classroom)

WIDGET = "/widgets/weight-storage?parameters={p}e9&bits=16"


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q * len(ordered)) - 1))] * 1000 if ordered else 0.0


async def fill(base: str, code: str, learners: int) -> None:
    """`learners` join the class, 20 at a time."""
    sem = asyncio.Semaphore(20)

    async def one(n: int) -> None:
        async with sem, httpx.AsyncClient(base_url=base, timeout=60) as c:
            token = classroom.csrf((await c.get("/join")).text)
            await c.post("/join", data={"csrf_token": token, "code": code, "name": f"L{n}"})

    await asyncio.gather(*(one(n) for n in range(learners)))


async def updates(base: str, clients: int, each: int) -> list[float]:
    """`clients` users each moving a widget `each` times, back to back."""
    times: list[float] = []

    async def user(k: int) -> None:
        async with httpx.AsyncClient(base_url=base, timeout=60, headers={"HX-Request": "true"}) as c:
            for n in range(each):
                start = time.perf_counter()
                r = await c.get(WIDGET.format(p=1 + (n + k) % 90))
                times.append(time.perf_counter() - start)
                assert r.status_code == 200, r.text[:200]
                await asyncio.sleep(0.05)

    await asyncio.gather(*(user(k) for k in range(clients)))
    return times


async def hammer(base: str, code: str, key: str, stop: asyncio.Event) -> int:
    count = 0
    big = json.dumps({f"k{n}": n for n in range(200_000)})
    async with httpx.AsyncClient(base_url=base, timeout=120) as c:
        await c.get(f"/teach/{code}?key={key}", follow_redirects=True)
        while not stop.is_set():
            for size in (64, 32, 16, 8):
                async with c.stream("GET", f"/companion/profile-data.csv?size_mb={size}") as r:
                    async for _ in r.aiter_raw():
                        pass
                count += 1
            for name in ("class.json", "learners.csv", "attempts.csv"):
                await c.get(f"/teach/{code}/export/{name}")
                count += 1
            try:
                await c.post("/api/plan", content=big, headers={"content-type": "application/json"})
            except httpx.HTTPError:
                pass  # the 413 closes the connection under a sender still sending
            count += 1
    return count


async def run(base: str, learners: int, clients: int, each: int) -> str:
    code, key = await classroom.instructor(base, classroom.Stats(), asyncio.Event())
    await fill(base, code, learners)
    idle = await updates(base, clients, each)
    stop = asyncio.Event()
    heavy = asyncio.create_task(hammer(base, code, key, stop))
    await asyncio.sleep(1)  # the hammer is under way
    busy = await updates(base, clients, each)
    stop.set()
    count = await heavy
    ratio = pct(busy, .99) / max(pct(idle, .99), 1e-9)
    return (f"heavy: idle p50_ms={pct(idle, .5):.0f} p99_ms={pct(idle, .99):.0f} | heavy p50_ms={pct(busy, .5):.0f} "
            f"p99_ms={pct(busy, .99):.0f} | ratio_p99={ratio:.1f} heavy_requests={count}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--learners", type=int, default=300, help="members of the class whose export is read")
    parser.add_argument("--clients", type=int, default=5)
    parser.add_argument("--updates", type=int, default=60, help="widget updates per client per phase")
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--url", help="a running server (else one is started)")
    args = parser.parse_args()
    if args.url:
        line = asyncio.run(run(args.url.rstrip("/"), args.learners, args.clients, args.updates))
    else:
        with classroom.own_server(args.workers, "") as base:
            line = asyncio.run(run(base, args.learners, args.clients, args.updates))
    print(re.sub(r"\s+", " ", line))
    return 0


if __name__ == "__main__":
    sys.exit(main())
