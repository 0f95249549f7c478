"""The engine's formatter (the templates' filters) writes each unit one way."""

from __future__ import annotations

import pytest

from app.engine import text as f


@pytest.mark.parametrize(
    ("fn", "value", "text"),
    [
        (f.gb, 16.06e9, "16.06 GB"),
        (f.gib, 14e9, "13.04 GiB"),
        (f.tb_s, 3.35e12, "3.35 TB/s"),
        (f.flops, 3.8e25, "3.8 × 10²⁵ FLOPs"),
        (f.flops_rate, 989e12, "989 TFLOPS"),
        (f.seconds, 0.00479, "4.79 ms"),
        (f.seconds, 66 * 86400, "66 days"),
        (f.seconds, 7.2 * 365.25 * 86400, "7.2 years"),
        (f.billions, 8.03e9, "8.03 B"),
        (f.pct, 0.4, "40 %"),
        (f.watts, 10200, "10.2 kW"),
        (f.ratio, 8.0, "8×"),
        (f.num, 8030261248, "8,030,261,248"),
    ],
)
def test_filter_writes_the_unit_one_way(fn, value, text) -> None:  # type: ignore[no-untyped-def]
    assert fn(value) == text


@pytest.mark.parametrize(
    ("value", "text"),
    [(5e-7, "0.5 µs"), (0.0, "0 s"), (5400, "90 minutes"), (34 * 3600, "34 hours"), (1000 * 365.25 * 86400,
                                                                                        "1,000 years")],
)
def test_one_duration_ladder_with_three_figures_so_no_small_time_reads_as_zero(value: float, text: str) -> None:
    assert f.seconds(value) == text


def test_sizes_past_100000_gb_are_written_in_tb() -> None:
    assert f.gb(6.4937e15) == "6,493.7 TB"
    assert f.gb(99_999e9, 0) == "99,999 GB"


def test_sci_carries_when_rounding_reaches_ten() -> None:
    assert f.sci(9.96e24) == "1.0 × 10²⁵"


@pytest.mark.parametrize(
    ("value", "text"), [(0.05425, "54.3 ms"), (0.0542, "54.2 ms"), (0.12, "120 ms"), (2.5, "2.5 s")]
)
def test_durations_round_ties_up_like_the_browser(value: float, text: str) -> None:
    assert f.seconds(value) == text
