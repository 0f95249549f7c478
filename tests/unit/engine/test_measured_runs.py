"""Published measurements of real runs against the engine's figure for the same job (measured-runs.md).

torchtitan's Llama 3.1 8B runs (pytorch/torchtitan, benchmarks/llama3_h100_202412_torchtitan.md, 2024-12)
ran on H100s with 96 GB of HBM2e at 500 W, not dgx-1's 80 GB parts. Their batch 2 × 8,192 with selective
checkpointing needs more than our 80 GB planning budget, so these tests compare the engine's bytes a GPU,
never its fit verdict.

What the measured figure holds that the engine does not: torchtitan logs the PyTorch caching allocator's
peak *reserved* memory, which is the live tensors plus blocks the allocator keeps cached but free
(fragmentation: often 5-20 %, more when 8-17 GB logit tensors come and go), plus FSDP's gathered
(unsharded) weights and gradients of the layer being computed. It does not hold the CUDA context, which
the engine counts in its 1.8 GB of runtime. Hence 20 % tolerances.
"""

from __future__ import annotations

import pytest

from app.engine.memory import per_gpu, weight_bytes
from app.engine.models import get_model
from app.engine.plan import PlanRequest, make_plan
from app.engine.units import GB, GiB

LLAMA_8B = get_model("llama-3.1-8b")
FSDP_8 = {"model": "llama-3.1-8b", "mode": "train", "gpus": 8, "sharding": "zero3"}


@pytest.mark.parametrize("measured_gib", [77.0, 82.4])  # with and without torch.compile
def test_8b_fsdp_8_batch_2_by_8192_selective_is_within_20_percent_of_the_measured_peak(
    measured_gib: float,
) -> None:
    """16.06 GB of sharded state + 46.4 GB of activations + 21.3 GB of loss head + 1.8 GB runtime = 85.6 GB."""
    mem = per_gpu(PlanRequest(**FSDP_8, batch_size=2, context_tokens=8192, activation_checkpointing="selective"))
    assert mem.total / GiB == pytest.approx(measured_gib, rel=0.20)  # a plan against a measured run: 20 % is the claim


def test_8b_fsdp_8_one_32768_token_sequence_with_full_checkpointing_is_within_20_percent_of_83_9_gib() -> None:
    """Layer inputs (8.3 GB) + one layer rebuilt (5.5 GB) + 42.6 GB of loss head + state and runtime.

    The engine says 69.2 GiB, 18 % under: the run's reserved memory keeps freed 17 GB logit blocks cached.
    """
    mem = per_gpu(PlanRequest(**FSDP_8, batch_size=1, context_tokens=32_768, activation_checkpointing="full"))
    assert mem.total / GiB == pytest.approx(83.9, rel=0.20)
    assert mem.loss_head > mem.activations  # at 32k tokens the logits, not the layers, dominate


def test_the_same_job_with_the_old_textbook_formula_would_have_been_ten_times_off() -> None:
    """Without checkpointing the engine now says 88 GB of activations for 2 × 8,192 tokens, not 760 GB."""
    mem = per_gpu(PlanRequest(**FSDP_8, batch_size=2, context_tokens=8192))
    assert mem.activations / GB == pytest.approx(88.1, abs=0.05)  # the figure the CLI prints


def test_fp8_over_bf16_tokens_a_second_is_within_0_15_of_the_measured_1_28() -> None:
    """torchtitan, compile on: 6,667 tokens/s a GPU in bf16, 8,532 with Float8."""
    job = {**FSDP_8, "batch_size": 2, "context_tokens": 8192, "activation_checkpointing": "selective"}
    bf16, fp8 = make_plan(PlanRequest(**job)).train, make_plan(PlanRequest(**job, precision="fp8")).train
    assert bf16 is not None and fp8 is not None
    # the measured speed-up against the engine's 1.3
    assert fp8.tokens_per_second / bf16.tokens_per_second == pytest.approx(8532 / 6667, abs=0.15)


@pytest.mark.parametrize(("precision", "published_gb"), [("fp8", 9.08), ("int4", 5.73)])
def test_quantized_llama_8b_checkpoints_are_within_2_percent_of_the_published_files(
    precision: str, published_gb: float
) -> None:
    """neuralmagic/Meta-Llama-3.1-8B-Instruct-FP8: 9.08 GB; hugging-quants/...-AWQ-INT4 (group 128): 5.73 GB."""
    # published file sizes carry metadata
    assert weight_bytes(LLAMA_8B, precision) / GB == pytest.approx(published_gb, rel=0.02)


@pytest.mark.parametrize(
    ("flag", "activations_gb"),
    [(["--activation-checkpointing", "selective"], "46.44"), (["--activation-checkpointing"], "6.91")],
)
def test_the_cli_takes_the_checkpointing_mode_and_prints_the_loss_head_as_its_own_row(
    flag: list[str], activations_gb: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """The issue's own command; a bare --activation-checkpointing means full, as before."""
    from app.cli import main

    args = ["plan", "--model", "llama-3.1-8b", "--mode", "train", "--gpus", "8", "--sharding", "zero3",
            "--batch-size", "2", "--context-tokens", "8192", *flag]
    assert main(args) == 0
    out = capsys.readouterr().out
    assert f"{activations_gb} GB" in out.split("activations", 1)[1].splitlines()[0]
    assert "21.28 GB" in out.split("loss head", 1)[1].splitlines()[0]


def test_every_gpu_keeps_its_budget_its_physical_memory_and_what_cuda_reports_apart() -> None:
    """A100 80GB: 80 GiB, nvidia-smi 81,920 MiB; H200: 143,771 MiB reported; budgets 80 and 141 GB."""
    from app.engine.hardware import GPUS
    from app.engine.units import MiB

    assert (GPUS["a100"].memory_bytes, GPUS["a100"].cuda_memory_bytes) == (80 * GB, 81_920 * MiB)
    assert (GPUS["h200"].memory_bytes, GPUS["h200"].cuda_memory_bytes) == (141 * GB, 143_771 * MiB)
    assert all(g.memory_bytes < g.cuda_memory_bytes <= g.physical_memory_bytes for g in GPUS.values())
