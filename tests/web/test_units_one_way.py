"""Every step of every lesson and every widget at its defaults writes each kind of quantity one way: durations in
one ladder of units, sizes in one ladder of byte units, and no non-zero time shown as zero."""

from __future__ import annotations

import html
import re
from collections.abc import Iterator

import pytest
from fastapi.testclient import TestClient

from app.lessons.loader import load_lessons
from app.widgets.registry import all_widgets
from tests.conftest import LESSONS

NUMBER = r"(\d[\d,]*(?:\.\d+)?)"
LONG_DURATION = re.compile(rf"{NUMBER}\s(minutes?|hours?|mins?|hrs?|h)\b")
BYTES = re.compile(rf"{NUMBER}\s(kB|MB|GB|TB)(?!/)")
MICROSECONDS = re.compile(rf"(?<![\d.]){NUMBER}\sµs")
TB_FROM_GB = 100_000  # the formatter's ladder: from 100,000 GB on, a size is written in TB


def visible_text(page: str) -> str:
    """What a learner reads: tags and scripts gone, entities decoded."""
    page = re.sub(r"<(script|style)\b.*?</\1>", " ", page, flags=re.S)
    return html.unescape(re.sub(r"<[^>]+>", " ", page))


def pages(client: TestClient) -> Iterator[tuple[str, str]]:
    lessons, _ = load_lessons(LESSONS, strict=False)
    for lesson in lessons:
        for step in lesson.steps:
            url = f"/lessons/{lesson.slug}/{step.number}"
            yield url, client.get(url).text
    for name in all_widgets():
        url = f"/widgets/{name}"
        yield url, client.get(url).text


@pytest.fixture(scope="module")
def rendered(tmp_path_factory: pytest.TempPathFactory) -> list[tuple[str, str]]:
    """Each step and each widget at its defaults, as a learner reads it (rendered once for the module)."""
    from app.main import create_app
    from tests.conftest import make_settings

    with TestClient(create_app(make_settings(tmp_path_factory.mktemp("units"), LESSONS))) as client:
        return [(url, visible_text(page)) for url, page in pages(client)]


def test_every_step_and_widget_was_rendered(rendered: list[tuple[str, str]]) -> None:
    assert len(rendered) > 30 and all(text.strip() for _, text in rendered)


def test_minutes_and_hours_are_spelled_out_never_min_or_h(
    rendered: list[tuple[str, str]],
) -> None:
    units = {(url, m[2]) for url, text in rendered for m in LONG_DURATION.finditer(text)}
    spelled = sorted({unit for _, unit in units})
    assert set(spelled) <= {"minute", "minutes", "hour", "hours"}, sorted(units)
    assert {"minutes", "hours"} <= set(spelled)  # the pages do show such durations: the check is not vacuous


def test_sizes_climb_one_byte_ladder(rendered: list[tuple[str, str]]) -> None:
    too_many_gb = [(url, m[0]) for url, text in rendered for m in BYTES.finditer(text)
                   if m[2] == "GB" and float(m[1].replace(",", "")) >= TB_FROM_GB]
    assert too_many_gb == []
    assert any(m[2] == "TB" for _, text in rendered for m in BYTES.finditer(text))


def test_no_non_zero_time_reads_as_zero_microseconds(rendered: list[tuple[str, str]]) -> None:
    zeros = [(url, m[0]) for url, text in rendered for m in MICROSECONDS.finditer(text)
             if float(m[1].replace(",", "")) == 0]
    assert zeros == []


def test_a_rate_of_arithmetic_is_written_flops_never_flop_per_second(rendered: list[tuple[str, str]]) -> None:
    """The formatter writes 989 TFLOPS; the prose, axes and sentences say FLOPS too, not FLOP/s or TFLOPs."""
    other = sorted({(url, m[0]) for url, text in rendered for m in re.finditer(r"\b[TPGE]?FLOP/s\b|\b[TPGE]FLOPs\b",
                                                                                 text)})
    assert other == []
    assert any("TFLOPS" in text for _, text in rendered)
