"""Waiting banner polls: a learner's poll that finds nothing new may wait (up to HOLD seconds) for its class to
change, so a bring, a move, a hold, a message or a close reaches every open page within about a second, while
a quiet class costs one request per learner every HOLD seconds instead of one every 5.

Each process keeps one Bell per database. While any poll waits, the bell reads the waited-on classes' tokens
(one indexed query for all of them) every EVERY seconds and wakes the polls whose class changed; with nobody
waiting it does nothing. The classes' state stays in the database, so any process, and several at once, see the
same change: nothing that matters lives here, only who is waiting on this process.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from dataclasses import dataclass, field
from typing import Any
from weakref import WeakKeyDictionary

from sqlalchemy import select

from app.classroom.class_models import Classroom
from app.classroom.db import Database
from app.classroom.models import utcnow
from app.classroom.seat import class_token, end_of

EVERY = 0.5  # seconds between two reads of the waited-on classes
HOLD = 10.0  # seconds a poll waits at most: under a proxy's idle timeout, and a server stops within it
# Held polls are connections: a process holds at most MAX_WAITING of them, and one learner at most
# MAX_PER_LEARNER (a page and a second tab); past either, a poll is answered at once, as an ordinary poll
# (the page then asks again at its usual pace), so no client can pile up open connections.
MAX_WAITING = 2000
MAX_PER_LEARNER = 2


@dataclass
class Waiter:
    token: str
    woken: asyncio.Future[int]


@dataclass
class Bell:
    """Wakes the polls waiting on a class when its token changes (or the class is gone)."""

    db: Database
    every: float = EVERY
    waiting: dict[int, list[Waiter]] = field(default_factory=dict)
    holders: Counter[str] = field(default_factory=Counter)
    task: asyncio.Task[None] | None = None
    loop: asyncio.AbstractEventLoop | None = None  # the event loop its polls wait in (one per process, in a server)

    def room_for(self, who: str) -> bool:
        """May `who` hold one more poll open here (the process's cap, and the learner's when one is named)?"""
        return sum(self.holders.values()) < MAX_WAITING and (not who or self.holders[who] < MAX_PER_LEARNER)

    async def wait(self, class_id: int, token: str, timeout: float = HOLD,
                   gone: asyncio.Future[Any] | None = None, who: str = "") -> int:
        """Wait until the class's token differs from `token`, at most `timeout` seconds, or until `gone` (the
        client hung up). Returns how many polls this change woke at once (0 otherwise): the caller spreads a
        crowd's next requests over time. Past the caps (`room_for`) it returns 0 at once."""
        if not self.room_for(who):
            return 0
        self.holders[who] += 1
        waiter = Waiter(token, asyncio.get_running_loop().create_future())
        self.waiting.setdefault(class_id, []).append(waiter)
        if self.task is None or self.task.done():
            self.task = asyncio.create_task(self._watch())
        try:
            watched: set[asyncio.Future[Any]] = {waiter.woken} | ({gone} if gone is not None else set())
            await asyncio.wait(watched, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
            return waiter.woken.result() if waiter.woken.done() else 0
        finally:
            self.holders[who] -= 1
            if self.holders[who] <= 0:
                del self.holders[who]
            rest = [w for w in self.waiting.get(class_id, []) if w is not waiter]
            if rest:
                self.waiting[class_id] = rest
            else:
                self.waiting.pop(class_id, None)

    async def _watch(self) -> None:
        while self.waiting:
            await asyncio.sleep(self.every)
            ids = list(self.waiting)
            if not ids:
                break
            try:
                tokens = await self._tokens(ids)
            except Exception:  # noqa: BLE001 - a database hiccup: the polls time out and ask again
                continue
            for class_id in ids:
                waiters = self.waiting.get(class_id, [])
                woken = [w for w in waiters if tokens.get(class_id) != w.token and not w.woken.done()]
                for w in woken:
                    w.woken.set_result(len(woken))

    async def _tokens(self, ids: list[int]) -> dict[int, str]:
        """Each class's token now; a deleted class has none, so its polls wake and find out."""
        query = select(Classroom.id, Classroom.pace_version, Classroom.closed_at, Classroom.ends_at).where(
            Classroom.id.in_(ids))
        async with self.db.engine.connect() as conn:
            rows = (await conn.execute(query)).all()
        now = utcnow()
        return {class_id: class_token(version, (end := end_of(closed, ends)) is None or end > now)
                for class_id, version, closed, ends in rows}


_bells: WeakKeyDictionary[Database, Bell] = WeakKeyDictionary()


def bell_for(db: Database) -> Bell:
    """This process's bell for a database (a new one for another event loop, as a test client may run)."""
    loop = asyncio.get_running_loop()
    bell = _bells.get(db)
    if bell is None or bell.loop is not loop:
        bell = _bells[db] = Bell(db, loop=loop)
    return bell
