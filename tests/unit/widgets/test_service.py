"""The widget lifecycle (app/widgets/service.py): one call from the lesson's values and a query to a result."""

from __future__ import annotations

import pytest

from app.widgets import _live
from app.widgets.base import Widget
from app.widgets.registry import get_widget
from app.widgets.service import W_MAX, WidgetAddress, render


def widget(name: str) -> Widget:
    found = get_widget(name)
    assert found is not None
    return found


def test_the_query_is_laid_over_the_lessons_values_and_both_are_kept_as_text() -> None:
    inst = render(widget("plan"), {"model": "llama-3.1-8b", "gpus": 1}, {"gpus": "2"})
    assert inst.values["gpus"] == "2" and inst.defaults["gpus"] == "1"
    assert inst.params.gpus == 2  # type: ignore[attr-defined]
    assert inst.errors == {} and inst.node is not None and inst.running is None


def test_a_refused_field_keeps_what_was_typed_and_computes_the_lessons_own_values() -> None:
    inst = render(widget("plan"), {"model": "llama-3.1-8b", "gpus": 1}, {"gpus": "three"})
    assert "gpus" in inst.errors
    assert inst.values["gpus"] == "three"
    assert inst.params.gpus == 1  # type: ignore[attr-defined]


def test_a_live_run_says_it_is_running_and_writes_its_start_time_into_the_form(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(_live, "clock", lambda: 1_000.0)
    ready = render(widget("serving-run"), {}, {})
    started = render(widget("serving-run"), {}, {"action": "start"})
    assert ready.running is False and ready.stopped
    assert started.running is True and not started.stopped
    assert started.values["started_at"] == "1000.000" and started.values["action"] == ""
    assert started.node is not None  # the run's memory is on dgx-1 (LiveRun.placement)


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ({"w": "2", "lesson": "what-ai-workloads-need", "step": "5"}, (2, "what-ai-workloads-need", 5)),
        ({"w": str(W_MAX + 1), "lesson": "what-ai-workloads-need", "step": "5"}, (1, "what-ai-workloads-need", 5)),
        ({"w": "0", "lesson": "no spaces", "step": "x"}, (1, "", 0)),
        ({}, (1, "", 0)),
    ],
)
def test_the_envelope_falls_back_field_by_field(query: dict[str, str], expected: tuple[int, str, int]) -> None:
    at = WidgetAddress.from_query(query)
    assert (at.w, at.lesson, at.step) == expected
    assert at.in_lesson == bool(expected[1] and expected[2])
