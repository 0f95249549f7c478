"""On PostgreSQL too, the projector's GROUP BY figures are the dashboard's."""

from __future__ import annotations

import pytest

from app.classroom.db import upgrade
from tests.postgres.pg import fresh_database
from tests.unit.classroom.classroom_helpers import run
from tests.unit.classroom.test_projection import a_class

pytestmark = pytest.mark.postgres


@pytest.mark.parametrize("seed", range(3))
def test_the_projector_counts_what_the_dashboard_counts_on_postgresql(seed: int) -> None:
    with fresh_database() as url:
        upgrade(url)
        for on_dashboard, on_projector in run(url, lambda db: a_class(db, seed)):
            assert on_projector == on_dashboard
