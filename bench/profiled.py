"""The app under cProfile, for `bench/classroom.py --profile`: each uvicorn worker profiles its event loop's
thread (on its CPU clock) from the end of startup to shutdown, and writes `worker-PID.prof` (pstats) and
`worker-PID.json` (its CPU seconds, from getrusage) into $GC_BENCH_PROFILE_DIR. Requests, SQLite statements (they
run on the loop's thread) and template rendering are all on that thread; only work handed to a thread pool is
missed. With GC_BENCH_CPROFILE=0 it only counts the CPU seconds (`--server-cpu`).

Run by the bench as `uvicorn --factory bench.profiled:create_app`; not imported by the app.
"""

from __future__ import annotations

import cProfile
import json
import os
import resource
import time
from pathlib import Path
from typing import Any

from app import main

Scope = dict[str, Any]


def _cpu() -> float:
    used = resource.getrusage(resource.RUSAGE_SELF)
    return used.ru_utime + used.ru_stime


class Profiled:
    """An ASGI wrapper: profile between lifespan startup and shutdown, then write the figures."""

    def __init__(self, app: Any, folder: Path) -> None:
        self.app, self.folder = app, folder
        self.profile = cProfile.Profile(time.thread_time)  # CPU, not wall time: an fsync is not CPU
        self.cpu_at = self.wall_at = 0.0

    async def __call__(self, scope: Scope, receive: Any, send: Any) -> None:
        if scope["type"] != "lifespan":
            await self.app(scope, receive, send)
            return

        async def watched(message: dict[str, Any]) -> None:
            if message["type"] == "lifespan.startup.complete":
                self.cpu_at, self.wall_at = _cpu(), time.monotonic()
                if os.environ.get("GC_BENCH_CPROFILE") == "1":
                    self.profile.enable()
            elif message["type"] == "lifespan.shutdown.complete":
                self.write()
            await send(message)

        await self.app(scope, receive, watched)

    def write(self) -> None:
        pid = os.getpid()
        if os.environ.get("GC_BENCH_CPROFILE") == "1":
            self.profile.disable()
            self.profile.dump_stats(self.folder / f"worker-{pid}.prof")
        figures = {"cpu_s": _cpu() - self.cpu_at, "wall_s": time.monotonic() - self.wall_at}
        (self.folder / f"worker-{pid}.json").write_text(json.dumps(figures))


def create_app() -> Profiled:
    """The app, built by its factory, under the profiler."""
    return Profiled(main.create_app(), Path(os.environ.get("GC_BENCH_PROFILE_DIR", ".")))


if __name__ == "__main__":  # `make bench` runs every script here: this one is a module for bench/classroom.py
    print("bench/profiled.py is the app under cProfile for `bench/classroom.py --profile`; nothing to run alone.")
