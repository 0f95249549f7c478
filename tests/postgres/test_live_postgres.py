"""The dashboard's poll by increments on PostgreSQL: a page that applies every poll shows what a full read shows."""

from __future__ import annotations

import pytest

from app.classroom.db import upgrade
from tests.postgres.pg import fresh_database
from tests.unit.classroom.classroom_helpers import run
from tests.unit.classroom.live_scenario import rounds

pytestmark = pytest.mark.postgres


def test_polled_increments_equal_a_full_read_on_postgresql() -> None:
    with fresh_database() as url:
        upgrade(url)
        result = run(url, lambda db: rounds(db, seed=18))
    assert result["first"] == 8
    assert result["sent"] == [True] * 6
    assert result["same"] == [(True, True, True)] * 6
