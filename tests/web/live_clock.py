"""The wall clock the live widgets read, set by the test: a run is a function of its start time and now."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from app.widgets import _live


class Clock:
    def __init__(self, now: float) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


@pytest.fixture(name="clock")
def clock_fixture(monkeypatch: pytest.MonkeyPatch) -> Iterator[Clock]:
    c = Clock(1_000_000.0)
    monkeypatch.setattr(_live, "clock", c)
    yield c
