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

from app.engine.hardware import H100_SXM
from app.engine.memory import Knobs, parts
from app.engine.models import Architecture, get_model
from app.engine.plan import PlanRequest, make_plan
from app.engine.power import gpu_watts, node_watts
from app.engine.serving_run import ServingRun, simulate_serving
from app.engine.units import GB, GiB
from app.engine.workload import GpuId

Unit = Literal["GiB", "GB", "tokens/s", "tokens/s a GPU", "%", "ms", "W", "kW", "GPU-hours"]

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
)
# MLPerf's Llama 2 70B task (OpenOrca): outputs average 291.9 tokens (21,805.8 tokens/s ÷ 74.699
# samples/s in the log below). The mean prompt length is not in the log. Earlier the engine took 1,024 tokens,
# the task's cap; but at 1,024 the result would need (1,024 + 292) × 2 × 69 G FLOPs × 74.7 a second = 1.7 PFLOPS
# a GPU, 86 % of the fp8 peak in matrix multiplies alone, which no stack reaches. The engine takes 300 tokens,
# about the output's length (an assumption, not re-checked against the data set: say so on /numbers).
MLPERF_OUTPUT_TOKENS = 292
MLPERF_PROMPT_TOKENS = 300
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
    gap: str = Field(
        default="",
        description="Why the engine misses this row by more than 20 %, when it does: shown, not fitted away",
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
    gap: str = Field(default="", description="Why the engine misses this row by more than 20 %, or empty")


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
    """The engine's training tokens a second a GPU for a job, at the MFU it works out for the layout."""

    def figure() -> tuple[float, str]:
        req = _train_request(checkpointing, **fields)
        train = make_plan(req).train
        assert train is not None  # a training plan always has training figures
        sp = train.speed
        note = (
            f"the engine's MFU for this layout is {sp.mfu:.1%}"
            + (f" (pipeline bubble {sp.bubble:.0%})" if sp.bubble else "")
            + "; torch.compile and AsyncTP are not modelled, the GPU is dgx-1's 700 W H100"
        )
        return train.tokens_per_second / req.gpus, note

    return figure


def _llama3_mfu(gpus: int, microbatches: int) -> Callable[[], tuple[float, str]]:
    """Llama 3 405B's layout (Llama 3 paper, table 4): TP 8, PP 16 interleaved, DP the rest, 8,192 tokens."""

    def figure() -> tuple[float, str]:
        req = _train_request(
            "selective", model="llama-3.1-405b", gpus=gpus, sharding="zero1", batch_size=1, context_tokens=8192,
            tensor_parallel=8, pipeline_parallel=16, pipeline_schedule="interleaved", pipeline_virtual_stages=4,
            pipeline_microbatches=microbatches,
        )
        train = make_plan(req).train
        assert train is not None
        note = (
            f"bubble {train.speed.bubble:.0%} with 4 model chunks a GPU (assumed: the paper does not give the "
            "interleaving depth); the engine's MFU counts causal attention"
        )
        return train.mfu * 100, note

    return figure


def _mlperf_tokens_per_second() -> tuple[float, str]:
    """Llama 2 70B in fp8 over 8 GPUs: requests a second with every slot busy × output tokens."""
    run = ServingRun(
        model=LLAMA_2_70B, precision="fp8", kv_precision="fp8", gpus=8, prompt_tokens=MLPERF_PROMPT_TOKENS,
        output_tokens=MLPERF_OUTPUT_TOKENS, max_batch=4096, arrival_rate=100_000,
    )
    snap = simulate_serving(run, seed=0, elapsed_seconds=0)
    note = (
        f"one tensor-parallel group of 8 with chunked prefill under an 8,192-token step budget, at a batch of "
        f"{snap.batch_limit:,} ({snap.batch_limited_by}); the submission's own layout and kernels are not modelled"
    )
    return snap.capacity_requests_per_second * MLPERF_OUTPUT_TOKENS, note


def _nemo_latency(gpu: GpuId) -> Callable[[], tuple[float, str]]:
    """Llama-2-7B, batch 1, 128 prompt and 20 output tokens: prefill and 19 decode steps, in ms."""

    def figure() -> tuple[float, str]:
        plan = make_plan(
            PlanRequest(model=LLAMA_2_7B, gpu=gpu, prompt_tokens=128, output_tokens=20, context_tokens=148)
        )
        assert plan.serve is not None
        s = plan.serve
        note = "the fixed cost a forward pass (1.6 ms) was read off these two rows: a calibration, not a check"
        return (s.prefill_seconds + 19 * s.decode_seconds_per_token) * 1e3, note

    return figure


def _gpt_fast_decode(model: Architecture, gpus: int) -> Callable[[], tuple[float, str]]:
    """Batch-1 decode of a Llama 2 in bf16 on A100s, tensor parallel over `gpus`: tokens a second."""

    def figure() -> tuple[float, str]:
        plan = make_plan(
            PlanRequest(model=model, gpu="a100", gpus=gpus, prompt_tokens=5, output_tokens=200, context_tokens=205)
        )
        assert plan.serve is not None
        note = (
            "the engine adds a serving stack's 1.6 ms fixed cost a pass, which gpt-fast's CUDA graphs mostly avoid; "
            "all-reduces at dgx-1's NVLink figures"
        )
        return plan.serve.tokens_per_second, note

    return figure


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


def _loaded_idle_watts() -> tuple[float, str]:
    """An H100 holding a model's weights, with no work: the power model's floor."""
    return gpu_watts(0.0, H100_SXM, loaded=True), "the engine's floor for a GPU with weights loaded and no work"


def _training_node_watts() -> tuple[float, str]:
    """A dgx-1 training with every GPU busy: the power model's figure for the node."""
    return node_watts(1.0, loaded=True) / 1000, "8 GPUs at TDP plus the server's non-GPU share at full load"


def _pretraining_gpu_hours(model: str | Architecture, gpu: GpuId, tokens: float,
                           **layout: Any) -> Callable[[], tuple[float, str]]:
    """GPU-hours of a whole pre-training run at the MFU the engine works out for a layout of it."""

    def figure() -> tuple[float, str]:
        req = PlanRequest.model_validate({"mode": "train", "model": model, "gpu": gpu, "train_tokens": tokens,
                                          **layout})
        train = make_plan(req).train
        assert train is not None
        return train.gpu_hours, f"at the engine's MFU for this layout, {train.mfu:.1%}"

    return figure


def _torchtitan(
    id_: str, job: str, quantity: str, unit: Unit, measured: float, parameters: str,
    engine: Callable[[], tuple[float, str]],
) -> Anchor:
    """A row from torchtitan's H100 benchmark of Llama 3.1."""
    return Anchor(
        id=id_, job=job, quantity=quantity, unit=unit, measured=measured, source=TORCHTITAN,
        hardware=TORCHTITAN_HARDWARE, parameters=parameters, engine=engine,
    )


SELECTIVE_8K = "llama-3.1-8b, train, 8 GPUs, zero3 (FSDP), batch 2, 8,192 tokens, checkpointing selective"
FULL_32K = "llama-3.1-8b, train, fp8, 8 GPUs, zero3 (FSDP), batch 1, 32,768 tokens, checkpointing full"
BASE_8K = {"batch_size": 2, "context_tokens": 8192}
FULL_32K_FIELDS = {"batch_size": 1, "context_tokens": 32_768, "precision": "fp8"}
CP2_64K_FIELDS = {"batch_size": 1, "context_tokens": 65_536, "precision": "fp8", "context_parallel": 2}
TT_70B = {"model": "llama-3.1-70b", "gpus": 256, "batch_size": 16, "context_tokens": 8192, "precision": "fp8",
          "tensor_parallel": 8}
TT_405B = {"model": "llama-3.1-405b", "gpus": 512, "batch_size": 4, "context_tokens": 8192, "precision": "fp8",
           "tensor_parallel": 8, "pipeline_parallel": 8}
NEMO = (
    "NVIDIA NeMo Framework user guide, performance summary for Llama 2 (docs.nvidia.com/nemo-framework, "
    "performance/llama, 'Inference performance', configuration 1: batch 1, 128 input and 20 output tokens, TP 1; "
    "TensorRT-LLM): average latency 153.8 ms on an H100 80GB HBM3, 234.0 ms on an A100 80GB SXM4"
)
GPT_FAST = (
    "pytorch-labs/gpt-fast README, benchmarks at batch 1 on A100 80GB (power-limited to 330 W), Llama 2 in bf16, "
    "tensor parallel over 1, 2, 4 or 8 GPUs"
)
# Llama 2 7B from its config.json (meta-llama/Llama-2-7b-hf): 32 layers, hidden 4,096, 32 heads (no GQA),
# FFN 11,008, vocab 32,000, 4,096 tokens of context.
LLAMA_2_7B = Architecture(
    id="custom", name="Llama 2 7B", layers=32, hidden=4096, heads=32, kv_heads=32, head_dim=128,
    ffn=11_008, vocab=32_000, context=4096,
)

LLAMA_2_CARD = (
    "meta-llama/llama, MODEL_CARD.md (Llama 2, 2023), 'Training Factors': pre-training GPU hours 184,320 (7B), "
    "368,640 (13B), 1,720,320 (70B) on A100-80GB, 2.0 T tokens, 4,096-token context"
)
LLAMA_2_HARDWARE = "A100-80GB at a 350-400 W limit on Meta's Research Super Cluster (dgx-1 holds H100s)"
LLAMA_2_LAYOUT = (
    "an assumed layout (the card does not give it): FSDP over 2,048 GPUs, one sequence a GPU, full recomputation"
)
LLAMA_2_FIELDS: dict[str, Any] = {"gpus": 2048, "sharding": "zero3", "batch_size": 1, "context_tokens": 4096,
                                  "activation_checkpointing": "full"}
LLAMA_31_CARD = (
    "meta-llama/llama-models, models/llama3_1/MODEL_CARD.md (2024), 'Training Energy Use': training time 1.46 M "
    "(8B), 7.0 M (70B) and 30.84 M (405B) GPU hours on H100-80GB (TDP 700 W), 15 T+ tokens (15.6 T for the 405B "
    "in the Llama 3 paper)"
)
LLAMA_31_HARDWARE = "H100-80GB SXM at 700 W, the same GPU as dgx-1, on Meta's 24k-GPU clusters"
# Llama 2 13B from its config.json (meta-llama/Llama-2-13b-hf): 40 layers, hidden 5,120, 40 heads (no GQA),
# FFN 13,824, vocab 32,000, 4,096 tokens of context.
LLAMA_2_13B = Architecture(
    id="custom", name="Llama 2 13B", layers=40, hidden=5120, heads=40, kv_heads=40, head_dim=128,
    ffn=13_824, vocab=32_000, context=4096,
)

ANCHORS: tuple[Anchor, ...] = (
    _torchtitan(
        "tt-8b-selective-memory", "Llama 3.1 8B, FSDP over 8 GPUs, 2 × 8,192 tokens, selective, bf16",
        "peak memory a GPU", "GiB", 82.4, f"{SELECTIVE_8K}, bf16",
        _train_memory_gib("selective", **BASE_8K),
    ),
    _torchtitan(
        "tt-8b-selective-tps", "Llama 3.1 8B, FSDP over 8 GPUs, 2 × 8,192 tokens, selective, bf16",
        "tokens a second a GPU", "tokens/s a GPU", 5762, f"{SELECTIVE_8K}, bf16, the engine's MFU",
        _train_tokens_per_gpu("selective", **BASE_8K),
    ),
    _torchtitan(
        "tt-8b-compile-tps", "the same with torch.compile, bf16",
        "tokens a second a GPU", "tokens/s a GPU", 6667,
        f"{SELECTIVE_8K}, bf16, the engine's MFU (its non-matmul cost was fitted to this row)",
        _train_tokens_per_gpu("selective", **BASE_8K),
    ),
    _torchtitan(
        "tt-8b-compile-memory", "the same with torch.compile, bf16",
        "peak memory a GPU", "GiB", 77.0, f"{SELECTIVE_8K}, bf16 (compile not modelled)",
        _train_memory_gib("selective", **BASE_8K),
    ),
    _torchtitan(
        "tt-8b-fp8-tps", "the same with torch.compile and Float8",
        "tokens a second a GPU", "tokens/s a GPU", 8532, f"{SELECTIVE_8K}, fp8, the engine's MFU",
        _train_tokens_per_gpu("selective", precision="fp8", **BASE_8K),
    ),
    _torchtitan(
        "tt-8b-fp8-memory", "the same with torch.compile and Float8",
        "peak memory a GPU", "GiB", 76.8, f"{SELECTIVE_8K}, fp8",
        _train_memory_gib("selective", precision="fp8", **BASE_8K),
    ),
    _torchtitan(
        "tt-8b-full-32k-tps", "Llama 3.1 8B, FSDP over 8 GPUs, 1 × 32,768 tokens, full, compile + Float8",
        "tokens a second a GPU", "tokens/s a GPU", 3890, f"{FULL_32K}, the engine's MFU",
        _train_tokens_per_gpu("full", **FULL_32K_FIELDS),
    ),
    _torchtitan(
        "tt-8b-full-32k-memory", "Llama 3.1 8B, FSDP over 8 GPUs, 1 × 32,768 tokens, full, compile + Float8",
        "peak memory a GPU", "GiB", 83.9, FULL_32K,
        _train_memory_gib("full", **FULL_32K_FIELDS),
    ),
    _torchtitan(
        "tt-8b-cp2-64k-tps", "Llama 3.1 8B, FSDP 4 × context parallel 2, 1 × 65,536 tokens, full, compile + Float8",
        "tokens a second a GPU", "tokens/s a GPU", 2540,
        "llama-3.1-8b, train, fp8, 8 GPUs, zero3, context_parallel 2, batch 1, 65,536 tokens, full",
        _train_tokens_per_gpu("full", **CP2_64K_FIELDS),
    ),
    _torchtitan(
        "tt-8b-128-tps", "Llama 3.1 8B, FSDP over 128 GPUs, 2 × 8,192 tokens, selective, bf16",
        "tokens a second a GPU", "tokens/s a GPU", 5605, f"{SELECTIVE_8K.replace('8 GPUs', '128 GPUs')}, bf16",
        _train_tokens_per_gpu("selective", gpus=128, **BASE_8K),
    ),
    _torchtitan(
        "tt-70b-tps", "Llama 3.1 70B, FSDP 32 × TP 8 on 256 GPUs, 16 × 8,192 tokens, full, compile + Float8",
        "tokens a second a GPU", "tokens/s a GPU", 829,
        "llama-3.1-70b, train, fp8, 256 GPUs, zero3, tensor_parallel 8, batch 16, 8,192 tokens, full",
        _train_tokens_per_gpu("full", **TT_70B),
    ),
    _torchtitan(
        "tt-405b-1f1b-tps", "Llama 3.1 405B, FSDP 8 × TP 8 × PP 8 on 512 GPUs, 32 × 8,192 tokens, full, 1F1B",
        "tokens a second a GPU", "tokens/s a GPU", 100,
        "llama-3.1-405b, train, fp8, 512 GPUs, zero3, tensor_parallel 8, pipeline_parallel 8 (1f1b, 8 "
        "micro-batches of 4: torchtitan's default of one a stage), 8,192 tokens, full",
        _train_tokens_per_gpu("full", **TT_405B),
    ),
    _torchtitan(
        "tt-405b-interleaved-tps", "the same with interleaved 1F1B",
        "tokens a second a GPU", "tokens/s a GPU", 128,
        "the same, pipeline_schedule interleaved, 2 model chunks a GPU",
        _train_tokens_per_gpu("full", pipeline_schedule="interleaved", **TT_405B),
    ),
    Anchor(
        id="llama3-mfu-16k", job="Llama 3 405B pre-training on 16,384 H100s, 8,192-token sequences",
        quantity="BF16 MFU", unit="%", measured=41.0,
        source="Llama Team, AI @ Meta, 'The Llama 3 Herd of Models' (arXiv 2407.21783, 2024), table 4: "
        "400 TFLOPS a GPU, 41 % MFU (38 % at 131,072-token sequences, 43 % on 8,192 GPUs)",
        hardware="H100 80GB SXM at 700 W on RoCE and InfiniBand, the same GPU as dgx-1",
        parameters="llama-3.1-405b, train, bf16, 16,384 GPUs, tensor_parallel 8, pipeline_parallel 16 "
        "(interleaved, 16 micro-batches: 16 sequences a replica), zero1, selective, 8,192 tokens",
        engine=_llama3_mfu(16_384, 16),
    ),
    Anchor(
        id="llama3-mfu-8k", job="Llama 3 405B pre-training on 8,192 H100s, 8,192-token sequences",
        quantity="BF16 MFU", unit="%", measured=43.0,
        source="Llama 3 Herd of Models (arXiv 2407.21783), table 4: 430 TFLOPS a GPU, 43 % MFU",
        hardware="H100 80GB SXM at 700 W, the same GPU as dgx-1",
        parameters="the same layout on 8,192 GPUs: 32 sequences, so 32 micro-batches, a replica",
        engine=_llama3_mfu(8192, 32),
    ),
    Anchor(
        id="mlperf-llama2-70b", job="Llama 2 70B offline inference on 8 H100s (MLPerf task llama2-70b-99.9)",
        quantity="output tokens a second, whole server", unit="tokens/s", measured=21_805.8,
        source="MLPerf Inference v4.0 (2024), closed division, NVIDIA, DGX-H100 H100-SXM-80GBx8 with "
        "TensorRT-LLM: mlcommons/inference_results_v4.0, closed/NVIDIA/results/DGX-H100_H100-SXM-80GBx8_TRT/"
        "llama2-70b-99.9/Offline/performance/run_1/mlperf_log_summary.txt (74.7 samples/s)",
        hardware="a DGX H100 like dgx-1 (8 × H100 SXM 80GB, NVLink)",
        parameters=f"Llama 2 70B (custom architecture), fp8 weights and KV cache, 8 GPUs, "
        f"{MLPERF_PROMPT_TOKENS:,} prompt and {MLPERF_OUTPUT_TOKENS} output tokens, the serving run's capacity "
        "with every slot busy",
        engine=_mlperf_tokens_per_second,
    ),
    Anchor(
        id="nemo-llama2-7b-h100", job="Llama 2 7B, one request of 128 + 20 tokens at batch 1 on one H100",
        quantity="request latency", unit="ms", measured=153.8, source=NEMO,
        hardware="one H100 80GB HBM3, as in dgx-1",
        parameters="Llama 2 7B (custom architecture), bf16, 1 GPU, prefill of 128 tokens and 19 decode steps",
        engine=_nemo_latency("h100"),
    ),
    Anchor(
        id="nemo-llama2-7b-a100", job="the same on one A100",
        quantity="request latency", unit="ms", measured=234.0, source=NEMO,
        hardware="one A100 80GB SXM4",
        parameters="the same on gpu a100",
        engine=_nemo_latency("a100"),
    ),
    Anchor(
        id="gpt-fast-7b-a100", job="Llama 2 7B, batch-1 decode on one A100",
        quantity="tokens a second", unit="tokens/s", measured=104.9, source=GPT_FAST,
        hardware="A100 80GB at 330 W (dgx-1's GPUs are H100s)",
        parameters="Llama 2 7B (custom), bf16, gpu a100, 1 GPU, 5-token prompt",
        engine=_gpt_fast_decode(LLAMA_2_7B, 1),
    ),
    Anchor(
        id="gpt-fast-7b-a100-tp8", job="Llama 2 7B, batch-1 decode tensor parallel over 8 A100s",
        quantity="tokens a second", unit="tokens/s", measured=328.43, source=GPT_FAST,
        hardware="8 × A100 80GB at 330 W, NVLink 3",
        parameters="Llama 2 7B (custom), bf16, gpu a100, 8 GPUs",
        engine=_gpt_fast_decode(LLAMA_2_7B, 8),
    ),
    Anchor(
        id="gpt-fast-70b-a100-tp8", job="Llama 2 70B, batch-1 decode tensor parallel over 8 A100s",
        quantity="tokens a second", unit="tokens/s", measured=62.50, source=GPT_FAST,
        hardware="8 × A100 80GB at 330 W, NVLink 3",
        parameters="Llama 2 70B (custom), bf16, gpu a100, 8 GPUs",
        engine=_gpt_fast_decode(LLAMA_2_70B, 8),
    ),
    Anchor(
        id="h100-loaded-idle", job="An H100 holding 72 GB of allocations, no kernels running",
        quantity="GPU power", unit="W", measured=140.0,
        source="wilicc/gpu-burn issue #114: nvidia-smi printouts of H100 80GB HBM3 at 140-145 W with 72 GB "
        "allocated and nothing running (64-73 W with nothing allocated)",
        hardware="H100 80GB HBM3 SXM, as in dgx-1", parameters="app.engine.power, a GPU with weights loaded, busy 0",
        engine=_loaded_idle_watts,
    ),
    Anchor(
        id="hgx-h100-training-power", job="An 8-GPU H100 HGX node training Llama 2 13B with the GPUs near full use",
        quantity="node power", unit="kW", measured=8.4,
        source="Latif et al., 'Single-Node Power Demand During AI Training: Measurements on an 8-GPU NVIDIA H100 "
        "System', IEEE Access 13 (2025): maximum observed draw about 8.4 kW against the 10.2 kW rating",
        hardware="an 8 × H100 SXM HGX node like dgx-1",
        parameters="app.engine.power.node_watts at busy 1 (the non-GPU share was read off this row: calibration)",
        engine=_training_node_watts,
    ),
    Anchor(
        id="llama2-7b-gpu-hours", job="Llama 2 7B pre-training, 2.0 T tokens of 4,096", quantity="GPU-hours",
        unit="GPU-hours", measured=184_320, source=LLAMA_2_CARD, hardware=LLAMA_2_HARDWARE,
        parameters=f"Llama 2 7B (custom architecture), a100, {LLAMA_2_LAYOUT}",
        engine=_pretraining_gpu_hours(LLAMA_2_7B, "a100", 2e12, **LLAMA_2_FIELDS),
    ),
    Anchor(
        id="llama2-13b-gpu-hours", job="Llama 2 13B pre-training, 2.0 T tokens of 4,096", quantity="GPU-hours",
        unit="GPU-hours", measured=368_640, source=LLAMA_2_CARD, hardware=LLAMA_2_HARDWARE,
        parameters=f"Llama 2 13B (custom architecture), a100, {LLAMA_2_LAYOUT}",
        engine=_pretraining_gpu_hours(LLAMA_2_13B, "a100", 2e12, **LLAMA_2_FIELDS),
    ),
    Anchor(
        id="llama2-70b-gpu-hours", job="Llama 2 70B pre-training, 2.0 T tokens of 4,096", quantity="GPU-hours",
        unit="GPU-hours", measured=1_720_320, source=LLAMA_2_CARD, hardware=LLAMA_2_HARDWARE,
        parameters=f"Llama 2 70B (custom architecture), a100, {LLAMA_2_LAYOUT}",
        engine=_pretraining_gpu_hours(LLAMA_2_70B, "a100", 2e12, **LLAMA_2_FIELDS),
    ),
    Anchor(
        id="llama31-405b-gpu-hours", job="Llama 3.1 405B pre-training, 15.6 T tokens", quantity="GPU-hours",
        unit="GPU-hours", measured=30_840_000, source=LLAMA_31_CARD, hardware=LLAMA_31_HARDWARE,
        parameters="llama-3.1-405b, the Llama 3 paper's layout on 16,384 GPUs (tensor_parallel 8, pipeline_parallel "
        "16 interleaved, zero1, 8,192 tokens)",
        engine=_pretraining_gpu_hours(
            "llama-3.1-405b", "h100", 15.6e12, gpus=16_384, sharding="zero1", batch_size=1, context_tokens=8192,
            tensor_parallel=8, pipeline_parallel=16, pipeline_schedule="interleaved", pipeline_virtual_stages=4,
            pipeline_microbatches=16, activation_checkpointing="selective",
        ),
    ),
    Anchor(
        id="llama31-70b-gpu-hours", job="Llama 3.1 70B pre-training, 15 T tokens", quantity="GPU-hours",
        unit="GPU-hours", measured=7_000_000, source=LLAMA_31_CARD, hardware=LLAMA_31_HARDWARE,
        parameters="llama-3.1-70b, an assumed layout (Meta does not publish it): FSDP over 2,048 GPUs, "
        "tensor_parallel 8, one 8,192-token sequence a GPU, full recomputation",
        engine=_pretraining_gpu_hours(
            "llama-3.1-70b", "h100", 15e12, gpus=2048, sharding="zero3", tensor_parallel=8, batch_size=1,
            context_tokens=8192, activation_checkpointing="full",
        ),
    ),
    Anchor(
        id="llama31-8b-gpu-hours", job="Llama 3.1 8B pre-training, 15 T tokens", quantity="GPU-hours",
        unit="GPU-hours", measured=1_460_000, source=LLAMA_31_CARD, hardware=LLAMA_31_HARDWARE,
        parameters="llama-3.1-8b, an assumed layout (Meta does not publish it): FSDP over 1,024 GPUs, one "
        "8,192-token sequence a GPU, selective recomputation",
        engine=_pretraining_gpu_hours(
            "llama-3.1-8b", "h100", 15e12, gpus=1024, sharding="zero3", batch_size=1, context_tokens=8192,
            activation_checkpointing="selective",
        ),
        gap="the card's hours imply 14 % MFU for the 8B (26 % for the 70B, 35 % for the 405B), while the step "
        "model gives 35-37 % at every layout of the 8B that fits, and torchtitan measured 33-39 % for the same "
        "model on 8 and 128 H100s. The card counts all of the run's time on the cluster and Meta has not "
        "published the 8B's layout, so we show the gap rather than fit a constant to it",
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
