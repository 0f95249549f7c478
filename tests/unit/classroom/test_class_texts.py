"""How the class pages say times: one way everywhere (the walk saw "2.19 minutes" beside "72.7 s", and "ends in
2.98 hours")."""

from __future__ import annotations

from datetime import timedelta

import pytest

from app.classroom.models import utcnow
from app.pages.class_pages import duration, until


@pytest.mark.parametrize(("seconds", "said"), [(0, "0 s"), (44.6, "45 s"), (72.7, "1 min 13 s"),
                                               (131.4, "2 min 11 s"), (600, "10 min"), (3600, "1 h 00 min"),
                                               (10_740, "2 h 59 min")])
def test_a_time_on_task_is_written_in_minutes_and_seconds(seconds: float, said: str) -> None:
    assert duration(seconds) == said


def test_an_end_time_ahead_reads_in_hours_and_minutes_never_decimal_hours() -> None:
    now = utcnow()
    assert until(now + timedelta(hours=2, minutes=59, seconds=30), now) == "in 2 h 59 min"
    assert until(now + timedelta(minutes=4, seconds=59), now) == "in 4 min"
    assert until(now + timedelta(seconds=20), now) == "in under a minute"
