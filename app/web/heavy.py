"""CPU-heavy work away from the event loop, a few at a time, so one visitor's download never stalls the room.

Widget updates are answered on the event loop in a few milliseconds; a class export or a profiling file takes
seconds of CPU. Both go through here: the profile file is generated in a worker process (pure-Python work in a
thread would still hold the GIL the loop needs), exports stream under a limiter, and each kind runs one at a
time per app process while later requests wait their turn.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import anyio
import anyio.to_process
from fastapi import FastAPI

T = TypeVar("T")
AT_ONCE = 1  # heavy jobs of each kind running together in one app process (the rest queue)


def _limiter(app: FastAPI, name: str) -> anyio.CapacityLimiter:
    limiters: dict[str, anyio.CapacityLimiter] = app.state.__dict__.setdefault("_heavy", {})
    if name not in limiters:
        limiters[name] = anyio.CapacityLimiter(AT_ONCE)
    return limiters[name]


async def in_process(app: FastAPI, fn: Callable[..., T], *args: Any) -> T:
    """Run fn(*args) in a worker process, one at a time per app (fn and args must pickle)."""
    return await anyio.to_process.run_sync(fn, *args, limiter=_limiter(app, "process"))


async def queued(app: FastAPI) -> anyio.CapacityLimiter:
    """The limiter of async heavy work (database reads of a whole class): `async with` it."""
    return _limiter(app, "async")
