"""The plan widget's inputs and layout: knobs, the predict switch, bars that stay on their axis."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from app.widgets._plot import LogAxis, linear_ticks, nice_step
from app.widgets.base import ParamErrors, parse_params
from app.widgets.plan import KNOBS, WIDGET, Params, compute, place


def _accepted(fields: dict[str, object]) -> Params | None:
    """The widget's params, or None where it refuses them (a serving split that does not divide the heads)."""
    try:
        return Params.model_validate(fields)
    except ValidationError:
        return None


plans = st.fixed_dictionaries(dict(
    model=st.sampled_from(["llama-3.1-8b", "llama-3.1-70b", "llama-3.1-405b", "mixtral-8x7b", "gpt-3-175b"]),
    mode=st.sampled_from(["serve", "train"]),
    precision=st.sampled_from(["bf16", "fp8", "fp32"]),
    gpus=st.integers(min_value=1, max_value=4096),
    sharding=st.sampled_from(["none", "zero1", "zero2", "zero3"]),
    batch_size=st.integers(min_value=1, max_value=256),
    context_tokens=st.integers(min_value=1, max_value=131_072),
    activation_checkpointing=st.booleans(),
    fixes=st.booleans(),
    launched=st.booleans(),
)).map(_accepted).filter(lambda p: p is not None)


@settings(max_examples=60, deadline=None, derandomize=True)
@given(params=plans)
def test_every_accepted_plan_lays_out_on_its_axis(params: Params) -> None:
    view = compute(params)
    assert 0 < view.capacity_x <= view.bar_width
    end = max(s.x + s.width for s in view.segments)
    assert end <= view.bar_width + 0.05
    scale = view.bar_width / (view.ticks[-1].value * 1e9)
    assert end == pytest.approx(
        view.plan.per_gpu.total * scale, abs=0.05 * len(view.segments)
    )  # every part drawn
    assert place(params, view).fits == view.plan.fits
    assert (view.launch is not None) == params.launched
    if view.plan.fits:
        assert view.fixes == []


def test_knobs_accept_a_list_a_comma_string_or_all() -> None:
    assert Params(knobs=["model", "gpus"]).shown() == ("model", "gpus")  # type: ignore[arg-type]
    assert Params(knobs="model, gpus").shown() == ("model", "gpus")
    assert Params(knobs="all").shown() == KNOBS
    assert Params(mode="train").shown() == ("model", "gpus", "sharding", "batch_size", "context_tokens",
                                            "activation_checkpointing")


def test_predict_true_asks_the_question_of_the_mode() -> None:
    assert Params(predict=True).predict_key() == "gpu0_gb"  # type: ignore[arg-type]
    assert Params(predict="true", mode="train").predict_key() == "launch"
    assert Params(predict=False).predict == ""  # type: ignore[arg-type]


def test_bad_settings_get_readable_messages() -> None:
    with pytest.raises(ParamErrors) as err:
        parse_params(WIDGET, {"mode": "train", "precision": "int4", "knobs": "gpus,warp", "predict": "maybe"})
    assert "Training needs fp32, bf16, fp16 or fp8" in err.value.errors["precision"]
    assert "Unknown knob warp" in err.value.errors["knobs"]
    assert "Choose one of: auto, gpu0_gb, launch" in err.value.errors["predict"]


def test_the_70b_plan_offers_fewer_bits_and_more_gpus() -> None:
    view = compute(Params(model="llama-3.1-70b", fixes=True))
    assert [f.fields for f in view.fixes] == ["precision", "gpus"]
    assert view.fixes[1].changes == {"gpus": 2, "launched": False}


@settings(deadline=None, derandomize=True)  # seeded: the same examples on every run
@given(top=st.floats(min_value=1e-3, max_value=1e12))
def test_linear_ticks_cover_the_top_value_with_round_steps(top: float) -> None:
    ticks = linear_ticks(top, 400, str)
    assert ticks[0].value == 0 and ticks[-1].value >= top * (1 - 1e-9) and ticks[-1].pos == 400
    step = nice_step(top)
    assert f"{step:.1e}"[0:3] in ("1.0", "2.0", "2.5", "5.0")


def test_a_log_axis_puts_each_decade_the_same_distance_apart() -> None:
    axis = LogAxis(lo=-1, hi=4, length=500)
    assert [t.pos for t in axis.ticks()] == [0, 100, 200, 300, 400, 500]
    assert axis.pos(1e9) == 500 and axis.pos(1e-9) == 0  # clamped
    assert LogAxis(lo=0, hi=2, length=100, flip=True).pos(10) == 50
