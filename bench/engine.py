"""How fast the engine plans: plans per second in-process, and POST /api/plan through the ASGI app.

Run: .venv/bin/python bench/engine.py [--seconds 2] [--requests 2000]

Targets (issue 3): a plan in under 100 µs in-process; the API under 2 ms median. The API is measured
twice through httpx.ASGITransport in one event loop: the /api router alone on a bare app, and the whole
app from create_app (its middleware: learner cookie, security headers, gzip), its lifespan run first.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import httpx
from fastapi import FastAPI

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from app.engine.plan import PlanRequest, make_plan  # noqa: E402
from app.main import create_app  # noqa: E402
from app.settings import Settings  # noqa: E402
from app.web import api, errors  # noqa: E402

# Typical plans a slider produces: one that fits, one that does not (it also searches for a fix),
# and training (ZeRO-3 with activation checkpointing so that it fits, and one that does not).
CHECKPOINTED: dict[str, object] = {"activation_checkpointing": True}
REQUESTS: dict[str, dict[str, object]] = {
    "serve 8B, fits": {},
    "serve 70B on 1 GPU, does not fit": {"model": "llama-3.1-70b"},
    "train 8B on dgx-1, ZeRO-3": {"mode": "train", "gpus": 8, "sharding": "zero3"} | CHECKPOINTED,
    "train 8B on 1 GPU, does not fit": {"mode": "train"},
    "train 405B, FSDP 8 x TP 8 x PP 8": {"mode": "train", "model": "llama-3.1-405b", "gpus": 512, "sharding": "zero3",
                                       "tensor_parallel": 8, "pipeline_parallel": 8} | CHECKPOINTED,
}


def plans_per_second(fields: dict[str, object], seconds: float) -> float:
    """Validate a request and plan it, over and over, for about `seconds`."""
    count, start = 0, time.perf_counter()
    while time.perf_counter() - start < seconds:
        for _ in range(100):
            make_plan(PlanRequest.model_validate(fields))
        count += 100
    return count / (time.perf_counter() - start)


def percentiles(samples: list[float]) -> tuple[float, float]:
    """Median and 99th percentile, in milliseconds."""
    ordered = sorted(samples)
    return statistics.median(ordered) * 1e3, ordered[min(len(ordered) - 1, int(0.99 * len(ordered)))] * 1e3


async def _router_latencies(n: int) -> list[float]:
    """POST /api/plan on an app holding only the /api router and the error handlers."""
    app = FastAPI()
    errors.install(app)
    app.include_router(api.router)
    api.install(app)
    return await _latencies(app, n)


async def _app_latencies(n: int) -> list[float]:
    """POST /api/plan through the whole app (its middleware included), its lifespan run first."""
    app = create_app(Settings(data_dir=Path(tempfile.mkdtemp()), secret_key="bench-secret-key"))
    async with app.router.lifespan_context(app):
        return await _latencies(app, n)


async def _latencies(app: FastAPI, n: int) -> list[float]:
    """POST /api/plan n times through httpx.ASGITransport, after 100 warm-up requests."""
    samples: list[float] = []
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://bench") as client:
        for i in range(n + 100):
            body = {"model": "llama-3.1-8b", "batch_size": 1 + i % 32}
            start = time.perf_counter()
            response = await client.post("/api/plan", json=body)
            elapsed = time.perf_counter() - start
            assert response.status_code == 200, response.text
            if i >= 100:  # the first hundred warm the caches
                samples.append(elapsed)
    return samples


def report(label: str, measure: Callable[[], list[float]]) -> None:
    """One line: median and p99 of a latency series."""
    median, p99 = percentiles(measure())
    print(f"  {label:58} median {median:6.3f} ms   p99 {p99:6.3f} ms")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--seconds", type=float, default=2.0, help="time per in-process measurement")
    parser.add_argument("--requests", type=int, default=2000, help="API requests per measurement")
    args = parser.parse_args()
    print("make_plan(PlanRequest(...)) in-process:")
    for label, fields in REQUESTS.items():
        rate = plans_per_second(fields, args.seconds)
        print(f"  {label:40} {rate:10,.0f} plans/s   {1e6 / rate:7.1f} µs a plan")
    print(f"POST /api/plan, {args.requests:,} requests after 100 warm-up:")
    n = args.requests
    report("/api router on a bare app (httpx.ASGITransport)", lambda: asyncio.run(_router_latencies(n)))
    report("whole app from create_app (middleware, lifespan run)", lambda: asyncio.run(_app_latencies(n)))


if __name__ == "__main__":
    main()
