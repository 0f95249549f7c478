"""SQLite writers take turns inside a process: a transaction's first write waits for the process's turn, and
the turn comes back when the transaction ends, committed or rolled back. Reads never wait for it."""

from __future__ import annotations

import asyncio

import pytest
from sqlalchemy import func, select

from app.classroom.db import Database
from app.classroom.models import Learner, utcnow
from app.classroom.progress import touch_learner

GUARD = 10  # seconds: a hang guard only; nothing here measures time


async def _learners(db: Database) -> int:
    async with db.session() as s:
        return int(await s.scalar(select(func.count()).select_from(Learner)) or 0)


def test_a_second_writer_waits_for_the_first_to_commit_while_reads_go_on(url: str) -> None:
    async def scenario() -> None:
        db = Database(url)
        wrote, release, order = asyncio.Event(), asyncio.Event(), []

        async def first() -> None:
            async with db.session() as s:
                await touch_learner(s, "a" * 36)
                wrote.set()
                await release.wait()  # hold the write turn, transaction open

        async def second() -> None:
            await wrote.wait()
            async with db.session() as s:
                await touch_learner(s, "b" * 36)
                seen = int(await s.scalar(select(func.count()).select_from(Learner)) or 0)
                order.append(f"second wrote and saw {seen}")  # 2: the first had committed before

        tasks = [asyncio.create_task(first()), asyncio.create_task(second())]
        await asyncio.wait_for(wrote.wait(), GUARD)
        assert await asyncio.wait_for(_learners(db), GUARD) == 0  # a read during the open write: not blocked
        await asyncio.sleep(0.05)  # give the second writer every chance to cut in
        assert order == [] and db._writer.locked()
        release.set()
        await asyncio.wait_for(asyncio.gather(*tasks), GUARD)
        assert order == ["second wrote and saw 2"]
        assert await _learners(db) == 2 and not db._writer.locked()
        await db.close()

    asyncio.run(scenario())


def test_a_failed_transaction_gives_the_write_turn_back(url: str) -> None:
    async def scenario() -> None:
        db = Database(url)
        with pytest.raises(RuntimeError):
            async with db.session() as s:
                await touch_learner(s, "a" * 36)
                raise RuntimeError("the route failed after writing")
        assert not db._writer.locked()
        async with db.session() as s:  # the next writer is not stuck behind the failed one
            s.add(Learner(id="b" * 36, created_at=utcnow(), last_seen=utcnow()))
        assert await asyncio.wait_for(_learners(db), GUARD) == 1  # the failed write was rolled back
        await db.close()

    asyncio.run(scenario())


def test_sqlite_keeps_a_write_ahead_log_and_syncs_every_commit(url: str) -> None:
    """WAL lets the dashboard read while learners write; synchronous=FULL makes an acknowledged answer durable
    (the SIGKILL test checks the outcome; this pins the settings behind it)."""
    from sqlalchemy import text

    async def scenario() -> tuple[str, int]:
        db = Database(url)
        try:
            async with db.session() as s:
                mode = str(await s.scalar(text("PRAGMA journal_mode")))
                sync = int(await s.scalar(text("PRAGMA synchronous")) or 0)
            return mode, sync
        finally:
            await db.close()

    assert asyncio.run(scenario()) == ("wal", 2)  # 2 is FULL


def test_a_write_waiting_for_another_process_lets_the_event_loop_serve_reads(url: str) -> None:
    """Another process (here: a plain sqlite3 connection) holds SQLite's write lock. A write of this process waits
    for it without holding the event loop: reads of this process are answered meanwhile, and the write goes
    through once the other commits. (SQLite's busy handler used to sleep on the loop's thread instead.)"""
    import sqlite3

    path = url.split("///", 1)[1]

    async def scenario() -> list[str]:
        db = Database(url)
        await _learners(db)  # the app's first connection puts the file in WAL mode, as at startup
        other = sqlite3.connect(path, isolation_level=None)
        other.execute("BEGIN IMMEDIATE")  # the other process's write lock
        order: list[str] = []

        async def write() -> None:
            async with db.session() as s:
                await touch_learner(s, "c" * 36)
            order.append("write committed")

        try:
            writer = asyncio.create_task(write())
            await asyncio.sleep(0.2)  # the write is waiting for the lock by now
            order.append(f"read while waiting: {await asyncio.wait_for(_learners(db), GUARD)} learners")
            assert not writer.done()
            other.execute("COMMIT")
            await asyncio.wait_for(writer, GUARD)
            order.append(f"read after: {await _learners(db)} learners")
        finally:
            other.close()
            await db.close()
        return order

    assert asyncio.run(scenario()) == ["read while waiting: 0 learners", "write committed", "read after: 1 learners"]
