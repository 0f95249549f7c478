"""A fresh PostgreSQL database per test at 127.0.0.1:5432 (user postgres, trust auth), dropped afterwards."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Iterator
from contextlib import contextmanager

import asyncpg  # type: ignore[import-untyped]

ADMIN_DSN = "postgresql://postgres@127.0.0.1:5432/test"


async def _admin(sql: str) -> None:
    conn = await asyncpg.connect(ADMIN_DSN)
    try:
        await conn.execute(sql)
    finally:
        await conn.close()


@contextmanager
def fresh_database() -> Iterator[str]:
    """Create gc_<random>, yield its SQLAlchemy URL, drop it (even with servers still connected)."""
    name = f"gc_{uuid.uuid4().hex[:12]}"
    asyncio.run(_admin(f'CREATE DATABASE "{name}"'))
    try:
        yield f"postgresql+asyncpg://postgres@127.0.0.1:5432/{name}"
    finally:
        asyncio.run(_admin(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
