"""Migration 0006 on SQLite: sheets marked per heading become sheets marked per number, and lose nothing."""

from __future__ import annotations

from pathlib import Path

from tests.sheet_migration_case import check, run


def test_an_existing_sheet_keeps_its_text_and_marks_through_the_migration(tmp_path: Path) -> None:
    path = tmp_path / "gc.sqlite"
    check(run(f"sqlite+aiosqlite:///{path}"))
