"""Before `gpu-classroom serve` or `migrate` starts: can the server reach and write its database and data folder?

Each problem is one sentence naming the host or the path and what to do, so an operator reads one line
instead of a traceback; the server refuses to start on a database it cannot write.
"""

from __future__ import annotations

import asyncio
import sqlite3
import uuid
from pathlib import Path
from urllib.parse import urlsplit

from app.settings import Settings


class StartupProblem(Exception):
    """Something outside the program is wrong; the message says what and what to do."""


def check(settings: Settings) -> None:
    """StartupProblem when the data folder or the database cannot be used for writing."""
    if not settings.secret_key:  # the generated key lives in data_dir
        writable_folder(settings.data_dir, "the data folder (GPU_CLASSROOM_DATA_DIR)")
    url = settings.resolved_database_url()
    if url.startswith("sqlite"):
        check_sqlite(Path(url.split("///", 1)[1]))
    elif url.startswith("postgresql"):
        asyncio.run(check_postgres(url))


def writable_folder(folder: Path, what: str) -> None:
    try:
        folder.mkdir(parents=True, exist_ok=True)
        probe = folder / f".write-probe-{uuid.uuid4().hex}"
        probe.write_bytes(b"")
        probe.unlink()
    except OSError as exc:
        raise StartupProblem(f"cannot write to {what} at {folder.resolve()}: {exc.strerror or exc}. Give the "
                             "server's user write access to it, or point the setting at a folder it can "
                             "write.") from None


def check_sqlite(path: Path) -> None:
    """The folder and the database file take a write (a write lock, rolled back: nothing changes)."""
    writable_folder(path.parent, "the SQLite database's folder")
    try:
        conn = sqlite3.connect(path, timeout=5)
        try:
            conn.execute("BEGIN IMMEDIATE")
            conn.execute("ROLLBACK")
        finally:
            conn.close()
    except sqlite3.Error as exc:
        raise StartupProblem(f"cannot write the SQLite database {path.resolve()}: {exc}. Give the server's user "
                             "write access to the file and its folder (SQLite writes a journal beside it).") from None


async def check_postgres(url: str) -> None:
    """Connect (5 s at most) and check the database takes writes."""
    import asyncpg  # type: ignore[import-untyped]

    parts = urlsplit(url.replace("postgresql+asyncpg://", "postgresql://", 1))
    where = f"{parts.hostname or 'localhost'}:{parts.port or 5432}"
    name = parts.path.lstrip("/") or "(default)"
    dsn = parts._replace(scheme="postgresql").geturl()
    try:
        conn = await asyncpg.connect(dsn, timeout=5)
    except asyncpg.InvalidCatalogNameError:
        raise StartupProblem(f"PostgreSQL at {where} has no database '{name}'. Create it (createdb -h "
                             f"{parts.hostname or 'localhost'} {name}) or fix DATABASE_URL.") from None
    except asyncpg.InvalidPasswordError:
        raise StartupProblem(f"PostgreSQL at {where} refused the user or password in DATABASE_URL.") from None
    except (TimeoutError, OSError) as exc:
        reason = getattr(exc, "strerror", None) or type(exc).__name__
        raise StartupProblem(f"cannot reach PostgreSQL at {where} ({reason}). Start it, or fix the host and port "
                             "in DATABASE_URL.") from None
    except asyncpg.PostgresError as exc:
        raise StartupProblem(f"PostgreSQL at {where} refused the connection: {exc}.") from None
    try:
        read_only = await conn.fetchval("SHOW transaction_read_only")
    finally:
        await conn.close()
    if read_only == "on":
        raise StartupProblem(f"PostgreSQL database '{name}' at {where} is read-only (a standby?). Point "
                             "DATABASE_URL at the primary.")

