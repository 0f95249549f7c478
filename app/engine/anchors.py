"""Measured anchors: published figures of real runs beside the engine's figure for the same job.

Each row is data: where the figure was published, the hardware it ran on and how that differs from
dgx-1, the measured value, and a function that asks the engine's public plan, memory and simulation
functions for the same job. Nothing here copies an engine figure: when the engine changes, the table does.
`bench/truth.py` prints the rows and `/numbers` shows them.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from app.engine import compute
from app.engine.memory import Knobs, parts
from app.engine.models import Architecture, get_model
from app.engine.plan import PlanRequest, make_plan
from app.engine.serving_run import ServingRun, simulate_serving
from app.engine.units import GB, GiB

Unit = Literal["GiB", "GB", "tokens/s", "tokens/s a GPU", "%"]

TORCHTITAN = (
    "pytorch/torchtitan, benchmarks/llama3_h100_202412_torchtitan.md (2024-12): peak memory as PyTorch's "
    "allocator reports it, tokens a second a GPU at iteration 90"
)
TORCHTITAN_HARDWARE = (
    "Grand Teton hosts: H100 with 96 GB HBM2e at 2.4 TB/s and a 500 W limit (dgx-1: 80 GB HBM3, 3.35 TB/s, "
    "700 W); the engine plans against its 80 GB budget, the run could use more"
)
# Llama 2 70B from its config.json (meta-llama/Llama-2-70b-hf): 80 layers, hidden 8,192, 64 heads, 8 KV
# heads of 128, FFN 28,672, vocab 32,000, 4,096 tokens of context. Not in the catalog: one anchor uses it.
LLAMA_2_70B = Architecture(
    id="custom", name="Llama 2 70B", layers=80, hidden=8192, heads=64, kv_heads=8, head_dim=128,
    ffn=28_672, vocab=32_000, context=4096,
)  # fmt: skip
# MLPerf's Llama 2 70B task (OpenOrca): outputs average 291.9 tokens (21,805.8 tokens/s ÷ 74.699
# samples/s in the log below). The mean prompt length is not in the log; the engine takes 1,024 tokens,
# the cap we understand the task's reference filter to apply (not re-checked against the data set), so
# its prefill is if anything too long.
MLPERF_OUTPUT_TOKENS = 292
MLPERF_PROMPT_TOKENS = 1024
# vLLM's default share of the GPU it takes (docs: EngineArgs gpu_memory_utilization = 0.9) of what CUDA
# reports for an H100 80GB: 81,559 MiB = 85.52 GB (nvidia-smi).
VLLM_GPU_MEMORY_UTILIZATION = 0.9
H100_CUDA_BYTES = 81_559 * 2**20


class Anchor(BaseModel):
    """One published measurement and how to ask the engine for the same figure."""

    model_config = ConfigDict(frozen=True, arbitrary_types_allowed=True)

    id: str = Field(description="Short id")
    job: str = Field(description="The job measured, in a phrase")
    quantity: str = Field(description="What is compared: memory a GPU, tokens a second, MFU")
    unit: Unit = Field(description="Unit of the measured and engine values")
    measured: float = Field(description="The published figure")
    source: str = Field(description="Where it is published")
    hardware: str = Field(description="The hardware it ran on, and how it differs from dgx-1")
    parameters: str = Field(description="The engine parameters used for the same job")
    engine: Callable[[], tuple[float, str]] = Field(
        exclude=True, description="Asks the engine: its figure and a note on what it could not match"
    )


class AnchorRow(BaseModel):
    """An anchor with the engine's figure beside it."""

    id: str
    job: str
    quantity: str
    unit: Unit
    measured: float = Field(description="The published figure")
    engine: float = Field(description="The engine's figure for the same job")
    ratio: float = Field(description="engine ÷ measured: 1 is a perfect match")
    source: str
    hardware: str
    parameters: str
    note: str = Field(description="What the engine could not match, or an empty string")


def _train_request(checkpointing: str, **fields: Any) -> PlanRequest:
    """A training plan of the 8B over 8 GPUs (FSDP) with `none`, `selective` or `full` checkpointing."""
    base = {"mode": "train", "model": "llama-3.1-8b", "gpus": 8, "sharding": "zero3", **fields}
    return PlanRequest.model_validate({**base, "activation_checkpointing": checkpointing})


def _train_memory_gib(checkpointing: str, **fields: Any) -> Callable[[], tuple[float, str]]:
    """The engine's bytes a GPU for a training job, in GiB."""

    def figure() -> tuple[float, str]:
        return make_plan(_train_request(checkpointing, **fields)).per_gpu.total / GiB, ""

    return figure


def _train_tokens_per_gpu(checkpointing: str, **fields: Any) -> Callable[[], tuple[float, str]]:
    """The engine's training tokens a second a GPU for a job, at the request's default MFU."""

    def figure() -> tuple[float, str]:
        req = _train_request(checkpointing, **fields)
        train = make_plan(req).train
        assert train is not None  # a training plan always has training figures
        # Training runs attention three times (forward, and twice in the backward pass) on top of 6·N·D.
        attention = 3 * compute.attention_flops(req.architecture, req.context_tokens, req.batch_size)
        tokens = req.context_tokens * req.batch_size
        share = attention / compute.training_flops(req.architecture.active_parameters, tokens)
        note = (
            f"model FLOPs are 6·N·D at MFU {req.mfu:g}; causal attention, which torchtitan's MFU counts, would add "
            f"{share:.0%} at {req.context_tokens:,} tokens"
        )
        return train.tokens_per_second / req.gpus, note

    return figure


def _default_mfu() -> tuple[float, str]:
    """The MFU the engine assumes when a plan names none."""
    return PlanRequest().mfu * 100, "an assumption of the engine, not a prediction: it does not derive MFU"


def _mlperf_tokens_per_second() -> tuple[float, str]:
    """Llama 2 70B in fp8 over 8 GPUs: requests a second at the largest batch memory allows × output tokens."""
    run = ServingRun(
        model=LLAMA_2_70B, precision="fp8", kv_precision="fp8", gpus=8, prompt_tokens=MLPERF_PROMPT_TOKENS,
        output_tokens=MLPERF_OUTPUT_TOKENS, max_batch=4096, arrival_rate=100_000,
    )  # fmt: skip
    snap = simulate_serving(run, seed=0, elapsed_seconds=0)
    note = (
        f"one tensor-parallel group of 8 at a batch of {snap.batch_limit:,} ({snap.batch_limited_by}); "
        "the submission's own layout, batching and kernels are not modelled"
    )
    return snap.capacity_requests_per_second * MLPERF_OUTPUT_TOKENS, note


def _kv_budget_gb() -> tuple[float, str]:
    """What the engine's serving plan leaves for KV cache on one H100: its budget less weights, runtime, workspace."""
    req = PlanRequest(model="llama-3.1-8b", precision="bf16", gpus=1)
    w, _, work, _, _, _, rt = parts(req.architecture, Knobs.of(req))
    budget = make_plan(req).per_gpu.capacity
    note = "the engine's 80 GB planning budget less its runtime and prefill workspace"
    return (budget - w - work - rt) / GB, note


def _vllm_kv_budget() -> float:
    """vLLM's rule: 0.9 × what CUDA reports, less the checkpoint's bf16 weights (8.03 B × 2 B), in GB."""
    weights = get_model("llama-3.1-8b").parameters * 2
    return (VLLM_GPU_MEMORY_UTILIZATION * H100_CUDA_BYTES - weights) / GB


def _torchtitan(
    id_: str, job: str, quantity: str, unit: Unit, measured: float, parameters: str,
    engine: Callable[[], tuple[float, str]],
) -> Anchor:  # fmt: skip
    """A row from torchtitan's H100 benchmark of Llama 3.1 8B."""
    return Anchor(
        id=id_, job=job, quantity=quantity, unit=unit, measured=measured, source=TORCHTITAN,
        hardware=TORCHTITAN_HARDWARE, parameters=parameters, engine=engine,
    )  # fmt: skip


SELECTIVE_8K = "llama-3.1-8b, train, 8 GPUs, zero3 (FSDP), batch 2, 8,192 tokens, checkpointing selective"
FULL_32K = "llama-3.1-8b, train, fp8, 8 GPUs, zero3 (FSDP), batch 1, 32,768 tokens, checkpointing full"
BASE_8K = {"batch_size": 2, "context_tokens": 8192}
FULL_32K_FIELDS = {"batch_size": 1, "context_tokens": 32_768, "precision": "fp8"}

ANCHORS: tuple[Anchor, ...] = (
    _torchtitan(
        "tt-8b-selective-memory", "Llama 3.1 8B, FSDP over 8 GPUs, 2 × 8,192 tokens, selective, bf16",
        "peak memory a GPU", "GiB", 82.4, f"{SELECTIVE_8K}, bf16",
        _train_memory_gib("selective", **BASE_8K),
    ),
    _torchtitan(
        "tt-8b-selective-tps", "Llama 3.1 8B, FSDP over 8 GPUs, 2 × 8,192 tokens, selective, bf16",
        "tokens a second a GPU", "tokens/s a GPU", 5762, f"{SELECTIVE_8K}, bf16, MFU 0.4 (the default)",
        _train_tokens_per_gpu("selective", **BASE_8K),
    ),
    _torchtitan(
        "tt-8b-compile-tps", "the same with torch.compile, bf16",
        "tokens a second a GPU", "tokens/s a GPU", 6667, f"{SELECTIVE_8K}, bf16, MFU 0.4 (compile not modelled)",
        _train_tokens_per_gpu("selective", **BASE_8K),
    ),
    _torchtitan(
        "tt-8b-compile-memory", "the same with torch.compile, bf16",
        "peak memory a GPU", "GiB", 77.0, f"{SELECTIVE_8K}, bf16 (compile not modelled)",
        _train_memory_gib("selective", **BASE_8K),
    ),
    _torchtitan(
        "tt-8b-fp8-tps", "the same with torch.compile and Float8",
        "tokens a second a GPU", "tokens/s a GPU", 8532, f"{SELECTIVE_8K}, fp8, MFU 0.4",
        _train_tokens_per_gpu("selective", precision="fp8", **BASE_8K),
    ),
    _torchtitan(
        "tt-8b-fp8-memory", "the same with torch.compile and Float8",
        "peak memory a GPU", "GiB", 76.8, f"{SELECTIVE_8K}, fp8",
        _train_memory_gib("selective", precision="fp8", **BASE_8K),
    ),
    _torchtitan(
        "tt-8b-full-32k-tps", "Llama 3.1 8B, FSDP over 8 GPUs, 1 × 32,768 tokens, full, compile + Float8",
        "tokens a second a GPU", "tokens/s a GPU", 3890, f"{FULL_32K}, MFU 0.4",
        _train_tokens_per_gpu("full", **FULL_32K_FIELDS),
    ),
    _torchtitan(
        "tt-8b-full-32k-memory", "Llama 3.1 8B, FSDP over 8 GPUs, 1 × 32,768 tokens, full, compile + Float8",
        "peak memory a GPU", "GiB", 83.9, FULL_32K,
        _train_memory_gib("full", **FULL_32K_FIELDS),
    ),
    Anchor(
        id="llama3-mfu-16k", job="Llama 3 405B pre-training on 16,384 H100s, 8,192-token sequences",
        quantity="BF16 MFU", unit="%", measured=41.0,
        source="Llama Team, AI @ Meta, 'The Llama 3 Herd of Models' (arXiv 2407.21783, 2024), table 4: "
        "400 TFLOPS a GPU, 41 % MFU (38 % at 131,072-token sequences, 43 % on 8,192 GPUs)",
        hardware="H100 80GB SXM at 700 W on RoCE and InfiniBand, the same GPU as dgx-1",
        parameters="PlanRequest's default mfu (the engine takes MFU as an input)",
        engine=_default_mfu,
    ),
    Anchor(
        id="mlperf-llama2-70b", job="Llama 2 70B offline inference on 8 H100s (MLPerf task llama2-70b-99.9)",
        quantity="output tokens a second, whole server", unit="tokens/s", measured=21_805.8,
        source="MLPerf Inference v4.0 (2024), closed division, NVIDIA, DGX-H100 H100-SXM-80GBx8 with "
        "TensorRT-LLM: mlcommons/inference_results_v4.0, closed/NVIDIA/results/DGX-H100_H100-SXM-80GBx8_TRT/"
        "llama2-70b-99.9/Offline/performance/run_1/mlperf_log_summary.txt (74.7 samples/s)",
        hardware="a DGX H100 like dgx-1 (8 × H100 SXM 80GB, NVLink)",
        parameters=f"Llama 2 70B (custom architecture), fp8 weights and KV cache, 8 GPUs, "
        f"{MLPERF_PROMPT_TOKENS:,} prompt and {MLPERF_OUTPUT_TOKENS} output tokens, MFU 0.4, the serving "
        "run's capacity at its largest batch",
        engine=_mlperf_tokens_per_second,
    ),
    Anchor(
        id="vllm-kv-budget", job="Llama 3.1 8B in bf16 on one H100: memory left for the KV cache",
        quantity="KV-cache budget", unit="GB", measured=_vllm_kv_budget(),
        source="vLLM's rule, not a log: gpu_memory_utilization (default 0.9, vLLM engine arguments) × "
        "the 81,559 MiB (85.52 GB) CUDA reports, less 16.06 GB of weights; vLLM also subtracts its "
        "profiled activation peak, so a real log reads somewhat less",
        hardware="one H100 SXM 80GB, as in dgx-1",
        parameters="llama-3.1-8b, serve, bf16, 1 GPU, batch 1, 1,000-token prompt",
        engine=_kv_budget_gb,
    ),
)


def anchor_row(anchor: Anchor) -> AnchorRow:
    """One anchor with the engine's figure and the ratio."""
    value, note = anchor.engine()
    return AnchorRow(
        **anchor.model_dump(exclude={"engine"}), engine=value, ratio=value / anchor.measured, note=note
    )


def anchor_rows() -> list[AnchorRow]:
    """Every anchor beside the engine's figure."""
    return [anchor_row(a) for a in ANCHORS]


def ratio_text(ratio: float) -> str:
    """A ratio as a learner reads it: ×1.00 is a match."""
    return f"×{ratio:.2f}" if math.isfinite(ratio) else "n/a"
