"""A sheet written before numbers were marked one by one, migrated: shared by the SQLite and PostgreSQL tests."""

from __future__ import annotations

import asyncio
import json
from datetime import UTC, datetime

import sqlalchemy as sa
from alembic import command
from sqlalchemy.ext.asyncio import create_async_engine

from app.classroom import sheets
from app.classroom.db import Database, alembic_config

OLD_FIELDS = {
    "input": {"value": "1,281,167 photos, 140 GB", "status": "known", "note": ""},
    "preparation": {"value": "decode and resize", "status": "to_measure", "note": ""},
    "outputs": {"value": "a checkpoint", "status": "to_measure", "note": "du -sh after the first save"},
}


def run(url: str) -> sheets.Sheet:
    """Migrate to the schema that marked headings, store OLD_FIELDS, migrate to the newest, read the sheet back."""
    cfg = alembic_config(url)
    command.upgrade(cfg, "0004")
    now = datetime(2026, 12, 1, 12, tzinfo=UTC)

    async def store() -> None:
        engine = create_async_engine(url)
        table = sa.table("workload_sheets", sa.column("learner_id", sa.String), sa.column("fields", sa.JSON),
                         sa.column("profiles", sa.JSON), sa.column("revision", sa.Integer),
                         sa.column("updated_at", sa.DateTime(timezone=True)))
        learners = sa.table("learners", sa.column("id", sa.String), sa.column("created_at", sa.DateTime(timezone=True)),
                            sa.column("last_seen", sa.DateTime(timezone=True)))
        async with engine.begin() as conn:
            await conn.execute(learners.insert().values(id="l1", created_at=now, last_seen=now))
            await conn.execute(table.insert().values(learner_id="l1", fields=json.loads(json.dumps(OLD_FIELDS)),
                                                     profiles=[], revision=3, updated_at=now))
        await engine.dispose()

    asyncio.run(store())
    command.upgrade(cfg, "heads")

    async def read() -> sheets.Sheet:
        db = Database(url)
        try:
            return await sheets.get_sheet(db, "l1")
        finally:
            await db.close()

    return asyncio.run(read())


def check(sheet: sheets.Sheet) -> None:
    """Nothing the learner wrote is lost, and each heading's mark now sits on a number."""
    assert sheet.revision == 3
    assert sheet.field("input").value == "1,281,167 photos, 140 GB"
    assert sheet.field("input").numbers == [sheets.SheetNumber(label="the figures above", status="known")]
    assert sheet.field("preparation") == sheets.SheetField(value="decode and resize")  # words only: no number
    assert sheet.field("outputs").numbers == [
        sheets.SheetNumber(label="the figures above", status="to_measure", note="du -sh after the first save")
    ]
    assert sheet.field("dependencies") == sheets.SheetField()
