"""Step 8's arrivals chart keeps its bars for the whole five simulated minutes (issue 13, item 4): past two minutes
the chart's time axis starts after 60 s and every bar used to be drawn zero wide, leaving only the capacity line."""

from __future__ import annotations

import re

import pytest
from fastapi.testclient import TestClient

from tests.web.live_clock import Clock, clock_fixture
from tests.web.test_widget_serving_run import HX, URL, hidden

__all__ = ["clock_fixture"]

BAR = re.compile(r"M([\d.]+) ([\d.]+)V([\d.]+)h([\d.]+)V")


def bars(html: str) -> list[tuple[float, float]]:
    """(x, width) of every arrivals bar drawn."""
    path = re.search(r'<path class="bar-arrivals" d="([^"]*)"', html)
    assert path, "no arrivals bars drawn"
    return [(float(m[0]), float(m[3])) for m in BAR.findall(path.group(1))]


@pytest.mark.parametrize("wall_seconds", [6, 20, 30, 45, 59])  # 30 s to 295 s of simulated time
def test_every_arrivals_bar_keeps_its_width_late_in_the_run(client: TestClient, clock: Clock,
                                                            wall_seconds: int) -> None:
    started = client.get(f"{URL}&arrival_rate=5&action=start", headers=HX)
    clock.now += wall_seconds
    html = client.get(f"{URL}&arrival_rate=5&{hidden(started.text)}", headers=HX).text
    drawn = bars(html)
    assert len(drawn) >= min(60, wall_seconds * 5)
    assert all(width > 3 for _, width in drawn), "bars drawn zero wide"
    xs = [x for x, _ in drawn]
    assert xs == sorted(xs) and len(set(xs)) == len(xs), "bars piled on one spot"
