"""A fresh, migrated SQLite database per test."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.classroom.db import upgrade


@pytest.fixture
def url(tmp_path: Path) -> str:
    address = f"sqlite+aiosqlite:///{(tmp_path / 'classroom.db').as_posix()}"
    upgrade(address)
    return address
