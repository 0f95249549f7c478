"""SQLite on the event loop's own thread, behind SQLAlchemy's aiosqlite adapter.

aiosqlite runs every call (execute, fetch, commit, close) on a thread of its own and hands the result back
to the event loop: two thread switches a call, about 1 ms of CPU a statement through SQLAlchemy, which is
more than the statement itself costs SQLite on a local file. Our statements are small (a learner's rows,
a class's members), so this module runs them directly and returns already-finished awaitables: SQLAlchemy's
adapter (`create_async_engine(..., async_creator=...)`) sees the driver it expects, and nothing changes for
the services.

What it trades: a query blocks the event loop while it runs, as any CPU work does. Two waits do not:
- a write that finds another *process* holding SQLite's write lock gets SQLITE_BUSY at once (no busy
  handler: busy_timeout is 0) and is tried again after an asyncio.sleep of 1, 2, 4 ... 20 ms, up to the
  connection's timeout, so the loop serves this process's other requests meanwhile (SQLite's own busy
  handler would sleep on the loop's thread, holding every request of the process behind the other's commit);
- the commit of a transaction that wrote (its fsync, synchronous=FULL) runs on a worker thread.
Inside one process writers already queue on an asyncio.Lock (see Database), so only one connection per
process ever waits for SQLite's lock, and a transaction here yields to the loop only while it waits.
"""

from __future__ import annotations

import asyncio
import sqlite3
import time
from collections.abc import Iterable
from typing import Any


class Cursor:
    """An awaitable face on a sqlite3 cursor: every coroutine finishes without suspending."""

    def __init__(self, cursor: sqlite3.Cursor, timeout: float = 0.0) -> None:
        self._cursor = cursor
        self._timeout = timeout

    async def __aenter__(self) -> Cursor:
        return self

    async def __aexit__(self, *_exc: object) -> None:
        self._cursor.close()

    @property
    def description(self) -> Any:
        return self._cursor.description

    @property
    def rowcount(self) -> int:
        return self._cursor.rowcount

    @property
    def lastrowid(self) -> int | None:
        return self._cursor.lastrowid

    @property
    def arraysize(self) -> int:
        return self._cursor.arraysize

    @arraysize.setter
    def arraysize(self, value: int) -> None:
        self._cursor.arraysize = value

    async def execute(self, operation: str, parameters: Any = None) -> Cursor:
        args = () if parameters is None else (parameters,)
        delay, deadline = 0.001, 0.0
        while True:
            try:
                self._cursor.execute(operation, *args)
                return self
            except sqlite3.OperationalError as error:
                # SQLITE_BUSY only: SQLITE_BUSY_SNAPSHOT (a stale read snapshot) cannot succeed by waiting
                if getattr(error, "sqlite_errorcode", None) != sqlite3.SQLITE_BUSY:
                    raise
                deadline = deadline or time.monotonic() + self._timeout
                if time.monotonic() >= deadline:
                    raise
            await asyncio.sleep(delay)  # another process holds the write lock: let this one's loop run
            delay = min(delay * 2, 0.02)

    async def executemany(self, operation: str, seq_of_parameters: Iterable[Any]) -> Cursor:
        self._cursor.executemany(operation, seq_of_parameters)
        return self

    async def fetchone(self) -> Any:
        return self._cursor.fetchone()

    async def fetchmany(self, size: int | None = None) -> list[Any]:
        return self._cursor.fetchmany(size if size is not None else self._cursor.arraysize)

    async def fetchall(self) -> list[Any]:
        return self._cursor.fetchall()

    async def close(self) -> None:
        self._cursor.close()


class _RunNow:
    """Stands in for aiosqlite's work queue, which the adapter's isolation-level setter feeds directly."""

    def put_nowait(self, item: tuple[Any, Any]) -> None:
        future, function = item
        try:
            future.set_result(function())
        except Exception as error:  # noqa: BLE001 - handed to the awaiting adapter, as aiosqlite does
            future.set_exception(error)


class Connection:
    """The parts of aiosqlite.Connection that SQLAlchemy's adapter uses, on the calling thread."""

    def __init__(self, connection: sqlite3.Connection, timeout: float = 0.0) -> None:
        self._conn = connection
        self._timeout = timeout
        self._connection: sqlite3.Connection | None = connection  # the adapter checks it before commit
        self._tx = _RunNow()

    def cursor(self) -> Cursor:
        return Cursor(self._conn.cursor(), self._timeout)

    async def execute(self, operation: str, parameters: Any = None) -> Cursor:
        return await self.cursor().execute(operation, parameters)

    async def commit(self) -> None:
        if self._conn.in_transaction:  # it wrote (reads open no transaction): the fsync off the loop's thread
            await asyncio.to_thread(self._conn.commit)

    async def rollback(self) -> None:
        self._conn.rollback()

    async def close(self) -> None:
        if self._connection is not None:
            self._connection = None
            self._conn.close()

    def stop(self) -> None:
        """aiosqlite's forced close (the pool's terminate)."""
        if self._connection is not None:
            self._connection = None
            self._conn.close()

    async def create_function(self, *args: Any, **kw: Any) -> None:
        self._conn.create_function(*args, **kw)

    @property
    def isolation_level(self) -> str | None:
        return self._conn.isolation_level

    @isolation_level.setter
    def isolation_level(self, value: Any) -> None:
        self._conn.isolation_level = value


def connector(path: str, timeout: float) -> Any:
    """An `async_creator` for create_async_engine: opens the file on the calling (event loop) thread."""

    async def connect() -> Connection:
        # A pooled connection serves one session at a time, but not always on the thread that opened it
        # (test clients run the app on a thread each); Python's sqlite3 is built serialized, so that is safe.
        # timeout=0: no busy handler sleeping on the loop's thread; Cursor.execute waits for the lock instead
        return Connection(sqlite3.connect(path, timeout=0, check_same_thread=False), timeout)

    return connect
