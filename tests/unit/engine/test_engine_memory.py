"""Memory: quantization scales, training state, activations, sharding, and the smallest change that fits."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from app.engine.activations import (
    korthikanti_activation_bytes,
    layer_activation_bytes,
    loss_head_bytes,
    training_activation_bytes,
)
from app.engine.errors import EngineError
from app.engine.fixes import fixes
from app.engine.memory import (
    QUANTIZATION,
    RUNTIME_BYTES,
    bytes_per_parameter,
    per_gpu,
    scale_bytes,
    weight_bytes,
)
from app.engine.models import get_model
from app.engine.plan import PlanRequest, make_plan
from app.engine.training_state import training_bytes_per_parameter
from app.engine.units import GB

LLAMA_8B = get_model("llama-3.1-8b")


def test_bytes_per_parameter_are_4_2_2_1_1_and_a_half() -> None:
    """The storage widths, scales aside (docs/lesson-format.md)."""
    widths = [bytes_per_parameter(p) for p in ("fp32", "bf16", "fp16", "fp8", "int8", "int4")]
    assert widths == [4, 2, 2, 1, 1, 0.5]


def test_an_unknown_precision_is_refused_in_words() -> None:
    with pytest.raises(EngineError, match="Unknown precision 'fp6'"):
        bytes_per_parameter("fp6")


def test_int4_carries_one_fp16_scale_and_a_4_bit_zero_point_per_128_quantized_weights() -> None:
    """AWQ/GPTQ group size 128: 2.5 B per 128 block-matrix weights; embeddings and head are not quantized."""
    assert QUANTIZATION["int4"].group_size == 128
    quantized = LLAMA_8B.block_matrix_parameters
    # rel 1e-3: the last group of the model is rounded up to a whole group.
    assert scale_bytes(LLAMA_8B, "int4") / quantized == pytest.approx(2.5 / 128, rel=1e-3)
    kept = LLAMA_8B.parameters - quantized
    assert weight_bytes(LLAMA_8B, "int4") == quantized // 2 + 2 * kept + scale_bytes(LLAMA_8B, "int4")


def test_quantized_checkpoints_keep_embeddings_and_lm_head_in_16_bits() -> None:
    """What is kept: 2 x 128,256 x 4,096 (embedding and head) + norms, 1.05 B parameters at 2 B."""
    kept = LLAMA_8B.parameters - LLAMA_8B.block_matrix_parameters
    assert kept == 2 * 128_256 * 4096 + (2 * 32 + 1) * 4096
    for precision in ("fp8", "int8", "int4"):
        assert weight_bytes(LLAMA_8B, precision) > 2 * kept + LLAMA_8B.block_matrix_parameters * (
            0.5 if precision == "int4" else 1
        )


def test_the_whole_model_form_is_the_lessons_parameters_times_bits_over_8() -> None:
    """The companion calculator's assumption (every parameter at the precision) is still available."""
    assert weight_bytes(LLAMA_8B, "fp8", whole_model=True) == LLAMA_8B.parameters + 4 * (32 * 7 + 2)
    assert weight_bytes(LLAMA_8B, "fp8", whole_model=True) < weight_bytes(LLAMA_8B, "fp8")


def test_fp8_per_tensor_scales_are_a_few_kilobytes() -> None:
    """One fp32 scale per quantized weight matrix: 7 a layer (embedding and head stay bf16)."""
    assert scale_bytes(LLAMA_8B, "fp8") == 4 * 32 * 7


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
    assert plan.per_gpu.weights == pytest.approx(LLAMA_8B.parameters * 4 / 8, abs=1)  # whole bytes


def test_a_llama_layer_keeps_41_h_bytes_a_token_without_checkpointing() -> None:
    """The engine's tensor table, summed by hand for Llama 3.1 8B in bf16 (d 4,096, q 4,096, kv 1,024, f 14,336):

    x, norm 1 output, attention output, x + attention, norm 2 output: 5 x 2d; Q, K, V: 2 x 6,144;
    gate, up, SiLU(gate), SiLU x up: 4 x 2f; two fp32 norm statistics and 32 fp32 log-sum-exps.
    """
    by_hand = 5 * 2 * 4096 + 2 * 6144 + 4 * 2 * 14_336 + 2 * 4 + 32 * 4
    assert layer_activation_bytes(LLAMA_8B, "bf16", "none") == by_hand == 168_072  # ≈ 41·h
    assert layer_activation_bytes(LLAMA_8B, "bf16", "selective") == 2 * (4096 + 6144 + 4096 + 2 * 14_336)
    assert layer_activation_bytes(LLAMA_8B, "bf16", "full") == 2 * 4096


def test_the_layer_being_recomputed_holds_its_full_set_on_top_of_the_kept_ones() -> None:
    """(L - 1) layers at what the mode keeps, one at everything: 31 x 8,192 + 168,072 B a token for full."""
    tokens = 8192
    assert training_activation_bytes(LLAMA_8B, tokens, 1, "full", "bf16") == (31 * 8192 + 168_072) * tokens
    assert training_activation_bytes(LLAMA_8B, tokens, 1, "none", "bf16") == 32 * 168_072 * tokens


def test_flash_era_activations_are_far_below_the_pre_flash_textbook_formula() -> None:
    """One 8,192-token sequence: about 45 GB with FlashAttention against 380 GB with the score matrix stored."""
    flash = training_activation_bytes(LLAMA_8B, 8192, 1, "none", "bf16")
    assert flash / GB == pytest.approx(44.06, abs=0.01)  # printed to two decimals in step 4
    assert korthikanti_activation_bytes(LLAMA_8B, 8192, 1, False) == 32 * 8192 * 4096 * 354
    assert korthikanti_activation_bytes(LLAMA_8B, 8192, 1, True) == 2 * 8192 * 4096 * 32


def test_the_loss_head_is_fp32_logits_and_their_gradient_for_every_token() -> None:
    """32,768 tokens x 128,256 x (4 + 4) B of fp32 logits and gradient, plus the 16-bit logits and final norm."""
    head = loss_head_bytes(LLAMA_8B, 32_768, 1, "bf16")
    assert head == 32_768 * (128_256 * (2 + 4 + 4) + 2 * 4096 * 2)
    assert 32_768 * 128_256 * 4 / GB == pytest.approx(16.8, abs=0.05)  # the 16.8 GB of fp32 logits
    plan = per_gpu(PlanRequest(mode="train", context_tokens=32_768, activation_checkpointing="full"))
    assert plan.loss_head == head and plan.total == sum(
        (plan.weights, plan.activations, plan.loss_head, plan.gradients, plan.optimizer, plan.runtime)
    )


def test_mixture_of_experts_activations_count_the_k_routed_experts() -> None:
    """Mixtral routes each token to 2 experts: the MLP tensors are kept twice, plus 8 router logits."""
    mixtral, mistral = get_model("mixtral-8x7b"), get_model("mistral-7b")
    extra = layer_activation_bytes(mixtral, "bf16", "none") - layer_activation_bytes(mistral, "bf16", "none")
    assert extra == 4 * 2 * 14_336 + 8 * 4


def test_checkpointing_accepts_the_old_booleans() -> None:
    assert PlanRequest(mode="train", activation_checkpointing=True).activation_checkpointing == "full"
    assert PlanRequest(mode="train", activation_checkpointing=False).activation_checkpointing == "none"
    with pytest.raises(ValidationError, match="none"):
        PlanRequest(mode="train", activation_checkpointing="some")


def test_training_memory_grows_with_batch_and_sequence_length() -> None:
    base = per_gpu(PlanRequest(mode="train", batch_size=1, context_tokens=2048)).activations
    assert per_gpu(PlanRequest(mode="train", batch_size=2, context_tokens=2048)).activations == 2 * base
    # With FlashAttention nothing stored is s x s: twice the tokens is exactly twice the activations.
    assert per_gpu(PlanRequest(mode="train", batch_size=1, context_tokens=4096)).activations == 2 * base


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
    assert eight.weights == pytest.approx(one.weights / 8, abs=1)  # whole bytes
    assert eight.kv_cache == pytest.approx(one.kv_cache / 8, abs=1)  # whole bytes


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
    fix = fixes(PlanRequest(mode="train", gpus=8, sharding="zero1"))[0]  # the first: the least change to the plan
    assert fix.changes == {"activation_checkpointing": "selective"}
    assert "selective activation checkpointing" in fix.sentence


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
