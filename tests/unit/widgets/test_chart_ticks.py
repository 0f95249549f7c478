"""Chart axes read as their data: no two ticks of an axis carry the same label (issue 27, W25: a queue of at most
one request was labelled "1, 0, 0", a 0.5 rounded by its formatter)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from app.engine.text import num, seconds
from app.widgets._chart import Plot


@given(top=st.floats(min_value=0.01, max_value=1e7), digits=st.sampled_from([0, 1]), count=st.integers(1, 8))
def test_no_two_ticks_of_an_axis_read_the_same(top: float, digits: int, count: int) -> None:
    frame = Plot(480, 170, x_max=top, y_max=top).frame("x", "y", seconds, lambda v: num(v, digits), y_count=count)
    for ticks in (frame.x_ticks, frame.y_ticks):
        labels = [t.label for t in ticks]
        assert len(labels) == len(set(labels)) >= 1, labels
    positions = [t.pos for t in frame.y_ticks]
    assert positions == sorted(positions, reverse=True)  # from the bottom up, each above the last


def test_a_queue_of_at_most_one_request_is_labelled_0_and_1() -> None:
    """The serving run's waiting chart at 1 request a second (its axis tops out at 1): whole requests."""
    frame = Plot(480, 170, x_max=60, y_max=1).frame("Simulated time (s)", "Waiting (requests)", seconds, num)
    assert [t.label for t in frame.y_ticks] == ["0", "1"]
