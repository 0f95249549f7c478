"""Migration 0006 on PostgreSQL: sheets marked per heading become sheets marked per number, and lose nothing."""

from __future__ import annotations

import pytest

from tests.postgres.pg import fresh_database
from tests.sheet_migration_case import check, run

pytestmark = pytest.mark.postgres


def test_an_existing_sheet_keeps_its_text_and_marks_through_the_migration_on_postgresql() -> None:
    with fresh_database() as url:
        check(run(url))
