"""Memory: quantization scales, training state, activations, sharding, and the smallest change that fits."""

from __future__ import annotations

import pytest

from app.engine.errors import EngineError
from app.engine.fixes import fixes, smallest_fix
from app.engine.memory import (
    QUANTIZATION,
    RUNTIME_BYTES,
    bytes_per_parameter,
    per_gpu,
    scale_bytes,
    training_activation_bytes,
    training_bytes_per_parameter,
    weight_bytes,
)
from app.engine.models import get_model
from app.engine.plan import PlanRequest, make_plan
from app.engine.units import GB

LLAMA_8B = get_model("llama-3.1-8b")


def test_bytes_per_parameter_are_4_2_2_1_1_and_a_half() -> None:
    """The storage widths, scales aside (docs/lesson-format.md)."""
    widths = [bytes_per_parameter(p) for p in ("fp32", "bf16", "fp16", "fp8", "int8", "int4")]
    assert widths == [4, 2, 2, 1, 1, 0.5]


def test_an_unknown_precision_is_refused_in_words() -> None:
    with pytest.raises(EngineError, match="Unknown precision 'fp6'"):
        bytes_per_parameter("fp6")


def test_int4_carries_one_fp16_scale_per_128_weights() -> None:
    """GPTQ/AWQ group size 128: 2 B per 128 weights = +3.1 % over 0.5 B a weight."""
    assert QUANTIZATION["int4"].group_size == 128
    assert scale_bytes(LLAMA_8B, "int4") / LLAMA_8B.parameters == pytest.approx(2 / 128, rel=1e-3)
    assert weight_bytes(LLAMA_8B, "int4") / (LLAMA_8B.parameters * 0.5) == pytest.approx(1 + 1 / 32, rel=1e-3)


def test_fp8_per_tensor_scales_are_a_few_kilobytes() -> None:
    """One fp32 scale per weight matrix: 7 a layer plus embedding and head."""
    assert scale_bytes(LLAMA_8B, "fp8") == 4 * (32 * 7 + 2)


def test_int8_per_channel_scales_are_below_a_tenth_of_a_percent() -> None:
    assert 0 < scale_bytes(LLAMA_8B, "int8") / weight_bytes(LLAMA_8B, "int8") < 0.001


@pytest.mark.parametrize(
    ("optimizer", "total"), [("adam", 16), ("adam-fp32", 16), ("sgd-momentum", 12), ("adam-8bit", 10)]
)
def test_training_bytes_per_parameter_are_the_sum_of_weights_gradients_and_state(
    optimizer: str, total: float
) -> None:
    """Mixed precision 2 + 2 + 4 master + moments (8, 4, or 2 for 8-bit Adam); fp32 Adam 4 + 4 + 8."""
    assert training_bytes_per_parameter(optimizer) == total


def test_adam_fp32_trains_fp32_weights_whatever_precision_the_plan_asks() -> None:
    plan = make_plan(
        PlanRequest(mode="train", optimizer="adam-fp32", precision="bf16", gpus=8, sharding="zero3")
    )
    assert plan.per_gpu.weights == pytest.approx(LLAMA_8B.parameters * 4 / 8, abs=1)


def test_activations_without_recomputation_follow_korthikanti() -> None:
    """L·s·b·h·(34 + 5·a·s/h) for Llama 3.1 8B, s = 8,192, b = 1: 32 × 8192 × 4096 × 354 B."""
    assert training_activation_bytes(LLAMA_8B, 8192, 1, False, "bf16") == 32 * 8192 * 4096 * 354


def test_full_recomputation_keeps_only_2_s_b_h_l() -> None:
    assert training_activation_bytes(LLAMA_8B, 8192, 1, True, "bf16") == 2 * 8192 * 4096 * 32


def test_training_memory_grows_with_batch_and_sequence_length() -> None:
    base = per_gpu(PlanRequest(mode="train", batch_size=1, context_tokens=2048)).activations
    assert per_gpu(PlanRequest(mode="train", batch_size=2, context_tokens=2048)).activations == 2 * base
    assert per_gpu(PlanRequest(mode="train", batch_size=1, context_tokens=4096)).activations > 2 * base


def test_serving_workspace_grows_with_batch_times_tokens_in_flight() -> None:
    one = per_gpu(PlanRequest(batch_size=1, prompt_tokens=1000)).activations
    assert per_gpu(PlanRequest(batch_size=8, prompt_tokens=1000)).activations > 7 * one
    assert per_gpu(PlanRequest(batch_size=1, prompt_tokens=4000)).activations > 3 * one


def test_runtime_is_the_cuda_context_and_libraries_on_every_gpu() -> None:
    """engine-cases.md: CUDA context and kernels take 1-2 GB."""
    assert 1 * GB <= RUNTIME_BYTES <= 2 * GB
    assert per_gpu(PlanRequest(gpus=8)).runtime == RUNTIME_BYTES


def test_tensor_parallel_serving_splits_weights_and_kv_heads() -> None:
    one, eight = per_gpu(PlanRequest(gpus=1)), per_gpu(PlanRequest(gpus=8))
    assert eight.weights == pytest.approx(one.weights / 8, abs=1)
    assert eight.kv_cache == pytest.approx(one.kv_cache / 8, abs=1)


def test_past_the_kv_head_count_each_gpu_still_keeps_a_whole_head() -> None:
    sixteen = per_gpu(PlanRequest(gpus=16))
    assert sixteen.kv_cache == per_gpu(PlanRequest(gpus=8)).kv_cache


def test_a_plan_that_fits_needs_no_fix() -> None:
    assert fixes(PlanRequest()) == []


def test_a_70b_on_one_gpu_is_fixed_by_fewer_bits_or_a_second_gpu() -> None:
    found = {tuple(f.changes.items()) for f in fixes(PlanRequest(model="llama-3.1-70b"))}
    assert (("precision", "fp8"),) in found
    assert (("gpus", 2),) in found


def test_training_on_eight_gpus_is_fixed_first_by_activation_checkpointing() -> None:
    fix = smallest_fix(PlanRequest(mode="train", gpus=8, sharding="zero1"))
    assert fix is not None and fix.changes == {"activation_checkpointing": True}
    assert "activation checkpointing" in fix.sentence


def test_every_fix_really_fits() -> None:
    for req in (
        PlanRequest(mode="train"),
        PlanRequest(model="llama-3.1-70b", batch_size=64),
        PlanRequest(model="llama-3.1-8b", context_tokens=131_072, batch_size=16),
    ):
        for fix in fixes(req):
            changed = make_plan(req.model_copy(update=fix.changes))
            assert changed.fits and changed.per_gpu.total == fix.total


def test_a_batch_fix_picks_the_largest_batch_that_fits() -> None:
    req = PlanRequest(model="llama-3.1-8b", context_tokens=131_072, batch_size=16)
    fix = next(f for f in fixes(req) if "batch_size" in f.changes)
    best = fix.changes["batch_size"]
    assert isinstance(best, int)
    assert not make_plan(req.model_copy(update={"batch_size": best + 1})).fits


def test_a_plan_no_change_can_fit_says_so() -> None:
    plan = make_plan(
        PlanRequest(model="llama-3.1-405b", mode="train", sharding="none", context_tokens=16_777_216)
    )
    assert not plan.fits and plan.min_gpus is None
    assert any("No single change" in s or "Smallest change" in s for s in plan.explanation)
