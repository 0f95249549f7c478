"""The database: SQLAlchemy 2 async, SQLite (WAL) by default, PostgreSQL through DATABASE_URL."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from sqlalchemy import event, text
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker, create_async_engine
from sqlalchemy.orm import DeclarativeBase
from sqlalchemy.util import await_only

from app.classroom.sqlite_inloop import connector

MIGRATIONS = Path(__file__).parent / "migrations"


class Base(DeclarativeBase):
    """Base class of every table."""


def _sqlite_pragmas(dbapi_conn: Any, _record: Any) -> None:
    cur = dbapi_conn.cursor()
    cur.execute("PRAGMA journal_mode=WAL")
    cur.execute("PRAGMA synchronous=FULL")  # an acknowledged answer is on disk
    cur.execute("PRAGMA foreign_keys=ON")
    # busy_timeout stays 0: a write that finds another process's lock waits on the event loop, not in SQLite's busy
    # handler on its thread (sqlite_inloop.Cursor.execute), up to 30 s: a writer starved of CPU may hold it a while
    cur.close()


READS = ("SELECT", "PRAGMA", "WITH")
WRITER = "gc_writer"


class Database:
    """An async engine and its session factory; created in the app's lifespan, never at import.

    SQLite lets one connection write at a time, and a connection that finds the lock taken polls for it,
    sleeping 1, 2, 5, 10, 15, 20, 25, 25, 25, 50, 50, 100 ms between tries: under a class's load, waits of
    hundreds of milliseconds. So in each process writers queue on an asyncio.Lock instead (taken at a
    transaction's first write, given back when its connection returns to the pool): only one connection
    per process ever waits on SQLite's lock, and only for another process's writer. The statements run on
    the event loop's thread (app/classroom/sqlite_inloop.py), not on aiosqlite's."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.is_sqlite = url.startswith("sqlite")
        if self.is_sqlite:
            path = url.split("///", 1)[1] if "///" in url else ""
            if path and path != ":memory:":
                Path(path).parent.mkdir(parents=True, exist_ok=True)
            self.engine: AsyncEngine = create_async_engine(
                url, async_creator=connector(path or ":memory:", timeout=30)
            )
            self._writer = asyncio.Lock()
            event.listen(self.engine.sync_engine, "connect", _sqlite_pragmas)
            event.listen(self.engine.sync_engine, "before_cursor_execute", self._take_write_turn)
            event.listen(self.engine.sync_engine.pool, "checkin", self._end_write_turn)
        else:
            self.engine = create_async_engine(url, pool_size=10, max_overflow=20, pool_pre_ping=True)
        self.sessions = async_sessionmaker(self.engine, expire_on_commit=False)

    def _take_write_turn(self, conn: Any, _cursor: Any, statement: str, *_args: Any) -> None:
        """Before a transaction's first write: wait for this process's turn (inside SQLAlchemy's greenlet)."""
        if conn.info.get(WRITER) or statement.lstrip()[:6].upper().startswith(READS):
            return
        await_only(self._writer.acquire())
        conn.info[WRITER] = True

    def _end_write_turn(self, _dbapi_conn: Any, record: Any) -> None:
        """The connection is back in the pool, its transaction committed or rolled back: the next writer's turn."""
        if record is not None and record.info.pop(WRITER, False):
            self._writer.release()

    @asynccontextmanager
    async def session(self) -> AsyncIterator[AsyncSession]:
        """A session that commits on success and rolls back on error."""
        async with self.sessions() as session:
            try:
                yield session
                await session.commit()
            except BaseException:
                await session.rollback()
                raise

    async def ping(self) -> bool:
        """True when the database answers a trivial query."""
        try:
            async with self.engine.connect() as conn:
                await conn.execute(text("SELECT 1"))
            return True
        except Exception:  # noqa: BLE001 - any failure means "not healthy"
            return False

    async def migrate(self) -> None:
        """Bring the schema to the newest revision (Alembic, every head)."""
        await asyncio.to_thread(upgrade, self.url)

    async def close(self) -> None:
        await self.engine.dispose()


def alembic_config(url: str) -> Any:
    """An Alembic Config pointing at our migrations and the given URL."""
    from alembic.config import Config

    cfg = Config()
    cfg.set_main_option("script_location", str(MIGRATIONS))
    cfg.set_main_option("sqlalchemy.url", url.replace("%", "%%"))
    return cfg


def upgrade(url: str) -> None:
    """Run `alembic upgrade heads` against url (blocking; call from a thread in async code)."""
    from alembic import command

    command.upgrade(alembic_config(url), "heads")
