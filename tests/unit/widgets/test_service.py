"""The widget lifecycle (app/widgets/service.py): one call from the lesson's values and a query to a result."""

from __future__ import annotations

import pytest

from app.widgets import _live
from app.widgets.base import Widget
from app.widgets.registry import get_widget
from app.widgets.service import USED_PREFIX, W_MAX, WidgetAddress, WidgetInstance, render


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
    assert inst.used["gpus"] == "1" and inst.stale


STEP_21 = {"model": "llama-3.1-8b", "precision": "bf16", "mode": "serve", "gpus": 1, "sharding": "none", "mfu": 0.4}


def then(inst: WidgetInstance, typed: dict[str, str]) -> dict[str, str]:
    """The next query the page sends: what the form shows now, and the values the shown result used."""
    return {**typed, **{f"{USED_PREFIX}{k}": v for k, v in inst.used.items()}}


def test_a_refused_field_keeps_its_last_valid_value_not_the_lessons() -> None:
    plan = widget("plan")
    typed = {"model": "llama-3.1-405b", "gpus": "8", "precision": "int4"}
    big = render(plan, STEP_21, typed)
    assert not big.errors and big.used["gpus"] == "8"
    refused = render(plan, STEP_21, then(big, {**typed, "gpus": "eight"}))
    assert refused.errors.keys() == {"gpus"} and refused.values["gpus"] == "eight"
    assert refused.params.gpus == 8 and refused.params.model == "llama-3.1-405b"  # type: ignore[attr-defined]
    assert refused.node == big.node  # the panel keeps the last valid plan


def test_one_refusal_never_makes_the_widget_ignore_the_other_fields() -> None:
    """Step 21: 405B on 8 GPUs at int4, then 8B, then Mode: Train (int4 cannot train), then MFU and sharding."""
    plan = widget("plan")
    typed = {"model": "llama-3.1-405b", "gpus": "8", "precision": "int4"}
    inst = render(plan, STEP_21, typed)
    typed = {**typed, "model": "llama-3.1-8b"}
    eight = inst = render(plan, STEP_21, then(inst, typed))
    typed = {**typed, "mode": "train"}
    inst = render(plan, STEP_21, then(inst, typed))
    assert "int4" in inst.errors["precision"] and inst.values["mode"] == "train"
    assert inst.used["mode"] == "serve" and inst.used["model"] == "llama-3.1-8b" and inst.node == eight.node
    typed = {**typed, "mfu": "0.6", "sharding": "zero3"}
    inst = render(plan, STEP_21, then(inst, typed))
    assert inst.errors and inst.used["mfu"] == "0.6" and inst.used["sharding"] == "zero3"
    typed = {**typed, "precision": "bf16"}
    inst = render(plan, STEP_21, then(inst, typed))
    assert not inst.errors and inst.used["mode"] == "train" and inst.params.mfu == 0.6  # type: ignore[attr-defined]


def test_typing_on_the_way_to_a_valid_number_keeps_the_last_one() -> None:
    """Step 1: typing "70" on the way to "70e9" keeps the result (and the panel) at the last valid count."""
    storage, lesson = widget("weight-storage"), {"parameters": 8.03e9, "bits": 16}
    first = render(storage, lesson, {"parameters": "70e9"})
    typed = render(storage, lesson, then(first, {"parameters": "70"}))
    assert "parameters" in typed.errors and typed.values["parameters"] == "70"
    assert typed.result == first.result and typed.node == first.node


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
