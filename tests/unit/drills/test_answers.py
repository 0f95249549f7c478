"""Answers as people type them: every way of writing a size means what it says, and nonsense is refused."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from app.drills.answers import (
    SIZE_SPELLINGS,
    SIZE_UNITS,
    AnswerError,
    parse_count,
    parse_per_parameter,
    parse_size,
    parse_yes_no,
    write_size,
)

GB = 1e9


@pytest.mark.parametrize(
    ("typed", "gigabytes"),
    [
        ("128", 128),
        ("128 GB", 128),
        ("128.5GB", 128.5),
        ("1.2e11 bytes", 120),
        ("119.6 GiB", 119.6 * 2**30 / GB),
        ("128,000 MB", 128),
        ("0.128 TB", 128),
        ("128 gb", 128),
        ("1.2 × 10^11 B", 120),
        ("1.2×10¹¹ bytes", 120),
        ("128 billion bytes", 128),
        ("1024 Gbit", 128),
        ("~128 GB", 128),
        ("128 GB per GPU", 128),
        ("  128\u00a0GB ", 128),
    ],
)
def test_a_size_means_what_it_says_in_any_unit(typed: str, gigabytes: float) -> None:
    assert parse_size(typed) == pytest.approx(gigabytes * GB, rel=1e-12)  # float rounding only


@pytest.mark.parametrize(
    ("typed", "says"),
    [
        ("128 GB/s", "rate"),
        ("3.35 TB/s", "rate"),
        ("989 TFLOPS", "FLOPs"),
        ("700 W", "power"),
        ("4.8 ms", "time"),
        ("40 %", "percentage"),
        ("GB", "does not start with a number"),
        ("", "Enter an answer"),
        ("about right", "does not start with a number"),
        ("128,5", "point for decimals"),
        ("12 parsecs", "Unknown unit"),
        ("-3 GB", "negative"),
        ("128000000000", "Add the unit"),
    ],
)
def test_a_unit_of_the_wrong_kind_or_no_number_gets_a_clear_message(typed: str, says: str) -> None:
    with pytest.raises(AnswerError, match=says):
        parse_size(typed)


@given(
    nbytes=st.floats(min_value=1.0, max_value=1e16, allow_nan=False, allow_infinity=False),
    unit=st.sampled_from(SIZE_SPELLINGS),
)
def test_any_value_written_in_any_supported_unit_parses_back_to_the_same_bytes(nbytes: float, unit: str) -> None:
    assert parse_size(write_size(nbytes, unit)) == pytest.approx(nbytes, rel=1e-12)  # float rounding only


@given(whole=st.integers(min_value=1000, max_value=10**15), unit=st.sampled_from(["B", "MB", "KiB"]))
def test_thousands_separators_read_the_same_as_plain_digits(whole: int, unit: str) -> None:
    assert parse_size(f"{whole:,} {unit}") == parse_size(f"{whole} {unit}")
    # float rounding only
    assert parse_size(f"{whole:,} {unit}") == pytest.approx(whole * SIZE_UNITS[unit.lower()], rel=1e-15)


@given(value=st.floats(min_value=1e-3, max_value=1e5, allow_nan=False), unit=st.sampled_from(["GB", "GiB", "TB"]))
def test_scientific_notation_reads_like_the_plain_number(value: float, unit: str) -> None:
    # %e keeps six digits
    assert parse_size(f"{value:e} {unit}") == pytest.approx(parse_size(f"{value!r} {unit}"), rel=1e-6)


@pytest.mark.parametrize("typed", ["16", "16 B", "16 bytes", "16 bytes per parameter", "16 B/param", "16.0"])
def test_bytes_per_parameter_take_a_unit_or_none(typed: str) -> None:
    assert parse_per_parameter(typed) == 16


def test_a_total_size_where_bytes_per_parameter_are_asked_is_refused() -> None:
    with pytest.raises(AnswerError, match="bytes per parameter"):
        parse_per_parameter("128 GB")


@pytest.mark.parametrize(("typed", "count"), [("2", 2), ("2 GPUs", 2), ("two", 2), ("1 GPU", 1), ("1.6", 1.6)])
def test_a_count_reads_with_or_without_its_noun(typed: str, count: float) -> None:
    assert parse_count(typed, ("gpu", "gpus")) == count


def test_a_count_of_something_else_is_refused() -> None:
    with pytest.raises(AnswerError, match="number of gpus"):
        parse_count("2 nodes", ("gpu", "gpus"))


@pytest.mark.parametrize(("typed", "means"), [("Yes", "yes"), ("it fits", "yes"), ("n", "no"), ("doesn't fit", "no")])
def test_yes_and_no_in_the_ways_people_say_them(typed: str, means: str) -> None:
    assert parse_yes_no(typed) == means


def test_maybe_is_not_an_answer() -> None:
    with pytest.raises(AnswerError, match="yes or no"):
        parse_yes_no("maybe")


@pytest.mark.parametrize("typed", ["1e999999 GB", "9" * 300 + " GB", "1" + "0" * 5000 + "e5"])
def test_a_number_too_large_for_any_answer_is_refused(typed: str) -> None:
    with pytest.raises(AnswerError, match="too large"):
        parse_size(typed)


@given(text=st.text(max_size=60))
def test_any_text_is_read_or_refused_with_a_message_never_an_exception(text: str) -> None:
    for parse in (parse_size, parse_per_parameter, lambda t: parse_count(t, ("gpus",)), parse_yes_no):
        try:
            value = parse(text)
        except AnswerError as exc:
            assert str(exc)
        else:
            assert value in ("yes", "no") or (isinstance(value, float) and value >= 0 and value != float("inf"))
