"""Serving splits every layer's attention heads over the GPUs (tensor parallel): the engine refuses a serving GPU
count that does not divide them, for a catalog id or an architecture object; training (data parallel) takes any."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import ValidationError

from app.engine.models import Architecture, get_model
from app.engine.plan import make_plan
from app.engine.serving_run import ServingRun
from app.engine.workload import PlanRequest
from tests.unit.engine.engine_strategies import LAW, models

TWELVE_HEADS = Architecture(layers=4, hidden=768, heads=12, kv_heads=4, ffn=3072, vocab=32000)


def gpus_error(caught: pytest.ExceptionInfo[ValidationError]) -> str:
    """The one error's message, after checking it is located at `gpus`."""
    errors = caught.value.errors()
    assert [e["loc"] for e in errors] == [("gpus",)], errors
    return str(errors[0]["msg"])


def test_serving_70b_on_3_gpus_is_refused_at_gpus_naming_the_heads_and_the_counts_that_work() -> None:
    with pytest.raises(ValidationError) as caught:
        PlanRequest(model="llama-3.1-70b", gpus=3)
    message = gpus_error(caught)
    assert "a layer of Llama 3.1 70B is 64 attention heads" in message and "tensor parallel" in message
    assert message.endswith("use 1, 2, 4, 8, 16, 32 or 64 GPUs.")


def test_an_architecture_object_is_held_to_the_same_rule() -> None:
    with pytest.raises(ValidationError) as caught:
        PlanRequest(model=TWELVE_HEADS, gpus=8)
    assert gpus_error(caught).endswith("is 12 attention heads that cannot be cut: use 1, 2, 3, 4, 6 or 12 "
                                       "GPUs.")
    assert PlanRequest(model=TWELVE_HEADS, gpus=6).gpus == 6


def test_a_single_head_can_only_be_served_on_one_gpu() -> None:
    one_head = TWELVE_HEADS.model_copy(update={"heads": 1, "kv_heads": 1})
    with pytest.raises(ValidationError) as caught:
        PlanRequest(model=one_head, gpus=2)
    assert gpus_error(caught).endswith("use 1 GPU.")


def test_training_is_data_parallel_and_runs_on_any_count() -> None:
    plan = make_plan(PlanRequest(model="llama-3.1-70b", mode="train", gpus=3, sharding="zero3"))
    assert plan.train is not None


def test_a_serving_run_is_refused_at_gpus_too() -> None:
    with pytest.raises(ValidationError) as caught:
        ServingRun(model="llama-3.1-70b", gpus=6)
    assert "64 attention heads" in gpus_error(caught)
    assert ServingRun(model="llama-3.1-70b", gpus=8).gpus == 8


def test_a_refused_model_or_mode_adds_no_split_error_of_its_own() -> None:
    with pytest.raises(ValidationError) as caught:
        PlanRequest(model="gpt-5", gpus=3)  # the model's own error says what is wrong
    assert [e["loc"] for e in caught.value.errors()] == [("model",)]


@LAW
@given(model=models, gpus=st.one_of(st.integers(1, 16), st.integers(1, 2048)))
def test_every_accepted_serving_request_splits_the_heads_evenly(model: str | Architecture, gpus: int) -> None:
    """Accepted exactly when the count divides the heads; refused at `gpus` otherwise."""
    heads = get_model(model).heads
    try:
        req = PlanRequest(model=model, mode="serve", gpus=gpus)
    except ValidationError as exc:
        assert heads % gpus and [e["loc"] for e in exc.errors()] == [("gpus",)]
    else:
        assert heads % req.gpus == 0
