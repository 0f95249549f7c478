"""One rounding rule for GB: a figure shown with fewer decimals is the two-decimal figure rounded half up, so the
panel's one decimal never contradicts the widget's two (12.05 GB is 12.1 GB on the panel, never 12.0)."""

from __future__ import annotations

from decimal import ROUND_HALF_UP, Decimal

from hypothesis import given
from hypothesis import strategies as st

from app.engine.text import gb
from tests.unit.engine.engine_strategies import LAW


def _shorter(two_decimals: str, digits: int) -> str:
    """The two-decimal figure as a learner would round it by hand: half up."""
    number = Decimal(two_decimals.removesuffix(" GB").replace(",", ""))
    return f"{number.quantize(Decimal(1).scaleb(-digits), rounding=ROUND_HALF_UP):,.{digits}f} GB"


@LAW
@given(st.floats(min_value=0, max_value=99_999e9, allow_nan=False))
def test_a_shorter_gb_figure_rounds_the_two_decimal_one_half_up(nbytes: float) -> None:
    shown = gb(nbytes)
    assert gb(nbytes, 1) == _shorter(shown, 1) and gb(nbytes, 0) == _shorter(shown, 0)


def test_the_walks_12_05_gb_reads_12_1_gb_whichever_side_of_the_half_it_lies() -> None:
    for nbytes in (12.049_6e9, 12.050_4e9):
        assert gb(nbytes) == "12.05 GB" and gb(nbytes, 1) == "12.1 GB"
    assert gb(80e9, 0) == "80 GB" and gb(6_493.7e12) == "6,493.7 TB"
