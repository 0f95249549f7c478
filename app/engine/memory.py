"""Memory: what a plan keeps on each GPU (weights, KV cache, activations, training state); does it fit?"""

from __future__ import annotations

import math
from typing import Literal, NamedTuple

from pydantic import BaseModel, ConfigDict, Field

from app.engine.activations import loss_head_bytes, serving_workspace_bytes, training_activation_bytes
from app.engine.errors import EngineError
from app.engine.models import Architecture
from app.engine.text import gb
from app.engine.training_state import shard, training_precision, training_state
from app.engine.units import BITS_PER_PRECISION
from app.engine.workload import MAX_GPUS, PlanRequest, splits_heads

# CUDA context and libraries on each GPU: about 0.5 GB of CUDA context with PyTorch on an H100, plus
# cuBLAS/cuDNN/NCCL workspaces and kernel images (engine-cases.md: "CUDA context and kernels take
# 1-2 GB"). 1.8 GB puts the lesson's serve plan for Llama 3.1 8B at its ~19 GB (EleutherAI's
# "1.2 x weights" rule of thumb gives 19.3 GB).
RUNTIME_BYTES = 1_800_000_000

class Quantization(BaseModel):
    """How a storage precision records its scales, and what they cost."""

    model_config = ConfigDict(frozen=True)

    precision: str = Field(description="Storage precision")
    granularity: Literal["none", "per-tensor", "per-channel", "group"] = Field(description="One scale per …")
    scale_bytes: int = Field(description="Bytes of one scale")
    zero_point_bytes: float = Field(default=0.0, description="Bytes of one zero point (asymmetric schemes)")
    group_size: int = Field(default=0, description="Weights sharing a scale, for group-wise schemes")
    note: str = Field(description="The scheme in a sentence")


# fp8: one fp32 scale per weight matrix (per-tensor, as NVIDIA Transformer Engine and vLLM's FP8
# checkpoints store it): a few kB for a whole model. int8: one fp16 scale per output row
# (per-channel, as LLM.int8() and SmoothQuant W8A8 store it). int4: one fp16 scale and one 4-bit zero
# point per group of 128 weights (GPTQ and AWQ's default group size; AWQ packs eight zero points in an
# int32): 2.5 B per 128 weights, +3.9 % over 0.5 B.
QUANTIZATION: dict[str, Quantization] = {
    q.precision: q
    for q in (
        Quantization(precision="fp32", granularity="none", scale_bytes=0, note="no scales"),
        Quantization(precision="bf16", granularity="none", scale_bytes=0, note="no scales"),
        Quantization(precision="fp16", granularity="none", scale_bytes=0, note="no scales"),
        Quantization(
            precision="fp8", granularity="per-tensor", scale_bytes=4, note="one fp32 scale per matrix"
        ),
        Quantization(
            precision="int8", granularity="per-channel", scale_bytes=2, note="one fp16 scale per row"
        ),
        Quantization(
            precision="int4",
            granularity="group",
            scale_bytes=2,
            zero_point_bytes=0.5,
            group_size=128,
            note="one fp16 scale and one 4-bit zero point per 128 weights",
        ),
    )
}
QUANTIZED = ("fp8", "int8", "int4")
# What a real quantized checkpoint quantizes: the matrices inside the transformer blocks. The token
# embeddings, the LM head, the norms, biases and MoE routers stay 16-bit, as in
# neuralmagic/Meta-Llama-3.1-8B-Instruct-FP8 (9.08 GB) and hugging-quants/Meta-Llama-3.1-8B-Instruct-
# AWQ-INT4 (5.73 GB) (measured-runs.md): a pure parameters x bits / 8 would say 8.03 and 4.02 GB.
QUANTIZED_PARTS = "the attention and MLP matrices of every layer"
KEPT_16BIT_PARTS = "the token embeddings, the LM head and the norms"
# Bytes of the parts a quantized checkpoint keeps in 16 bits.
KEPT_BYTES_PER_PARAMETER = 2


def bytes_per_parameter(precision: str) -> float:
    """Bytes one number takes at a precision: 4, 2, 2, 1, 1, 0.5 for fp32 … int4 (scales aside)."""
    try:
        return BITS_PER_PRECISION[precision] / 8
    except KeyError:
        raise EngineError(
            f"Unknown precision '{precision}'. Known: {', '.join(BITS_PER_PRECISION)}."
        ) from None


def quantized_parameters(arch: Architecture, precision: str, whole_model: bool = False) -> int:
    """Parameters stored at `precision`: all of them for float formats, the block matrices when quantized.

    `whole_model` quantizes every parameter, embeddings included: the companion lesson's pure
    parameters x bits / 8 (uniform precision, ideally packed), not what real checkpoints do.
    """
    if precision not in QUANTIZED or whole_model:
        return arch.parameters
    return arch.block_matrix_parameters


def scale_bytes(arch: Architecture, precision: str, whole_model: bool = False) -> int:
    """Bytes of quantization scales (and zero points) stored beside the quantized weights."""
    q = QUANTIZATION[precision]
    if q.granularity == "per-tensor":
        return (arch.weight_matrices if whole_model else arch.block_matrices) * q.scale_bytes
    if q.granularity == "per-channel":
        return (arch.weight_rows if whole_model else arch.block_matrix_rows) * q.scale_bytes
    if q.granularity == "group":
        groups = math.ceil(quantized_parameters(arch, precision, whole_model) / q.group_size)
        return math.ceil(groups * (q.scale_bytes + q.zero_point_bytes))
    return 0


def weight_bytes(arch: Architecture, precision: str, whole_model: bool = False) -> int:
    """Bytes of all the weights (every expert) at a precision, as a real checkpoint stores them.

    Quantized (fp8, int8, int4): the block matrices at the precision with their scales, the rest
    (embeddings, LM head, norms) in 16 bits, unless `whole_model`.
    """
    quantized = quantized_parameters(arch, precision, whole_model)
    kept = (arch.parameters - quantized) * KEPT_BYTES_PER_PARAMETER
    return math.ceil(quantized * bytes_per_parameter(precision)) + kept + scale_bytes(arch, precision, whole_model)


def kv_bytes_per_token(arch: Architecture, kv_precision: str) -> float:
    """KV cache of one token: 2 (K and V) × layers × KV heads × head dim × bytes, plus int scales.

    int8 and int4 caches keep one fp16 scale per head and token (as KIVI-style caches do); fp8 caches
    use a per-tensor scale, which costs nothing per token.
    """
    values = 2 * arch.layers * arch.n_kv_heads * arch.n_head_dim * bytes_per_parameter(kv_precision)
    scales = 2 * arch.layers * arch.n_kv_heads * 2 if kv_precision in ("int8", "int4") else 0
    return values + scales


def cached_tokens(arch: Architecture, tokens: int) -> int:
    """Tokens a sequence keeps in the KV cache: all of them, or the last `sliding_window` (Mistral 7B)."""
    return tokens if arch.sliding_window is None else min(tokens, arch.sliding_window)


def kv_cache_bytes(arch: Architecture, kv_precision: str, tokens: int, batch: int = 1) -> int:
    """KV cache of `batch` sequences of `tokens` tokens each (capped at a sliding window)."""
    return math.ceil(kv_bytes_per_token(arch, kv_precision) * cached_tokens(arch, tokens) * batch)


class MemoryBreakdown(BaseModel):
    """Bytes on one GPU, by what they hold."""

    model_config = ConfigDict(frozen=True)

    weights: int = Field(description="Model weights (this GPU's share), quantization scales included")
    kv_cache: int = Field(description="Serving: keys and values of every cached token (this GPU's heads)")
    activations: int = Field(
        description="Training: the blocks' activations kept for backward; serving: prefill workspace"
    )
    loss_head: int = Field(
        default=0, description="Training: final norm, logits (16-bit and fp32) and the logits' gradient"
    )
    gradients: int = Field(description="Training: gradients (this GPU's share)")
    optimizer: int = Field(description="Training: optimizer state and fp32 master weights (this GPU's share)")
    runtime: int = Field(description="CUDA context, libraries and their workspaces")
    total: int = Field(description="Sum of the parts")
    capacity: int = Field(description="Memory of one GPU")


class Knobs(NamedTuple):
    """The fields of a request that decide memory, as a light tuple for fast what-if searches."""

    mode: str
    precision: str
    kv_precision: str
    gpus: int
    sharding: str
    batch_size: int
    context_tokens: int
    prompt_tokens: int
    optimizer: str
    activation_checkpointing: str
    tensor_parallel: int = 1
    pipeline_parallel: int = 1
    context_parallel: int = 1

    @classmethod
    def of(cls, req: PlanRequest) -> Knobs:
        """The memory knobs of a request."""
        return cls(
            req.mode,
            req.precision,
            req.kv_precision,
            req.gpus,
            req.sharding,
            req.batch_size,
            req.context_tokens,
            req.prompt_tokens,
            req.optimizer,
            req.activation_checkpointing,
            req.tensor_parallel,
            req.pipeline_parallel,
            req.context_parallel,
        )

    @property
    def model_parallel(self) -> int:
        """GPUs one copy of the model spans in training: tensor × pipeline × context parallel."""
        return self.tensor_parallel * self.pipeline_parallel * self.context_parallel


# weights, KV cache, activations, loss head, gradients, optimizer state, runtime
Parts = tuple[int, int, int, int, int, int, int]


def kv_heads_on_gpu(arch: Architecture, tp: int) -> int:
    """KV heads one GPU holds: split across GPUs, each GPU keeping at least one (replicated past kv_heads)."""
    return math.ceil(arch.n_kv_heads / tp)


def serve_parts(arch: Architecture, k: Knobs, gpus: int = 0) -> Parts:
    """Per-GPU weights, KV cache, activations, loss head, gradients, optimizer, runtime serving on `gpus`."""
    tp = gpus or k.gpus
    weights = math.ceil(weight_bytes(arch, k.precision) / tp)
    kv_share = kv_heads_on_gpu(arch, tp) / arch.n_kv_heads
    kv = math.ceil(kv_cache_bytes(arch, k.kv_precision, k.context_tokens, k.batch_size) * kv_share)
    work = serving_workspace_bytes(arch, k.batch_size, k.prompt_tokens, tp, k.precision)
    return weights, kv, work, 0, 0, 0, RUNTIME_BYTES


def train_parts(arch: Architecture, k: Knobs, gpus: int = 0) -> Parts:
    """Per-GPU weights, KV cache, activations, loss head, gradients, optimizer, runtime training on `gpus`."""
    state = training_state(k.optimizer, k.precision)
    # Tensor and pipeline parallel split the parameters; ZeRO shards each GPU's part over the data-parallel
    # (and context-parallel) GPUs that hold the same part, as FSDP does over its dp_shard × cp mesh.
    split = k.tensor_parallel * k.pipeline_parallel
    n = arch.parameters / split
    shards = max(1, (gpus or k.gpus) // k.model_parallel) * k.context_parallel
    w, g, o = shard(
        math.ceil(n * state.weights),
        math.ceil(n * state.gradients),
        math.ceil(n * state.optimizer),
        k.sharding,
        shards,
    )
    working = training_precision(k.optimizer, k.precision)
    # Each GPU holds its context-parallel slice of the sequence and, with sequence parallel, its tensor-parallel
    # share of every activation. 1F1B keeps up to p micro-batches in flight on the first stage, each over L/p
    # layers: one micro-batch's worth of all L layers, as without stages.
    tokens = math.ceil(k.context_tokens / k.context_parallel)
    acts = math.ceil(
        training_activation_bytes(arch, tokens, k.batch_size, k.activation_checkpointing, working)
        / k.tensor_parallel
    )
    head = math.ceil(loss_head_bytes(arch, tokens, k.batch_size, working) / k.tensor_parallel)
    return w, 0, acts, head, g, o, RUNTIME_BYTES


def parts(arch: Architecture, k: Knobs, gpus: int = 0) -> Parts:
    """Per-GPU bytes of each component for the request's mode (on `gpus` GPUs if given)."""
    return serve_parts(arch, k, gpus) if k.mode == "serve" else train_parts(arch, k, gpus)


def breakdown(arch: Architecture, k: Knobs, capacity: int) -> MemoryBreakdown:
    """Per-GPU bytes of each component, their total and the GPU's capacity."""
    w, kv, act, head, g, o, rt = parts(arch, k)
    return MemoryBreakdown(
        weights=w,
        kv_cache=kv,
        activations=act,
        loss_head=head,
        gradients=g,
        optimizer=o,
        runtime=rt,
        total=w + kv + act + head + g + o + rt,
        capacity=capacity,
    )


def per_gpu(req: PlanRequest) -> MemoryBreakdown:
    """What one GPU holds for this request."""
    return breakdown(req.architecture, Knobs.of(req), req.hardware.memory_bytes)


def total(arch: Architecture, k: Knobs, gpus: int = 0) -> int:
    """Per-GPU bytes in all (on `gpus` GPUs if given)."""
    return sum(parts(arch, k, gpus))


def min_gpus(arch: Architecture, k: Knobs, capacity: int) -> int | None:
    """The fewest GPUs the plan can run on, or None if none can: enough to hold it, and for serving a count that
    splits the attention heads evenly (tensor parallel), so the answer is a plan a learner can launch."""
    return even_split(arch, k.mode, _fewest_that_hold(arch, k, capacity), k.model_parallel)


def even_split(arch: Architecture, mode: str, gpus: int | None, model_parallel: int = 1) -> int | None:
    """Serving splits every layer's attention heads over the GPUs (tensor parallel), so a GPU count must divide
    them: the smallest such count at or above `gpus` (None when there is none). Training tiles whole copies of
    its tensor × pipeline × context layout: the next multiple of it."""
    if gpus is None:
        return gpus
    if mode != "serve":
        fitted = -(-gpus // model_parallel) * model_parallel
        return fitted if fitted <= MAX_GPUS else None
    return next((n for n in range(gpus, arch.heads + 1) if splits_heads(arch, n)), None)


def _fewest_that_hold(arch: Architecture, k: Knobs, capacity: int) -> int | None:
    """The fewest GPUs whose memory holds the plan, or None if even MAX_GPUS are not enough.

    Memory per GPU never grows with more GPUs, so a galloping search (double, then halve) finds the edge.
    """
    if total(arch, k, MAX_GPUS) > capacity:
        return None
    lo, hi = 1, 1
    while total(arch, k, hi) > capacity:
        lo, hi = hi + 1, min(2 * hi, MAX_GPUS)
    while lo < hi:
        mid = (lo + hi) // 2
        if total(arch, k, mid) <= capacity:
            hi = mid
        else:
            lo = mid + 1
    return lo


def verdict(b: MemoryBreakdown) -> str:
    """The sum of the parts against the capacity, in a sentence."""
    names = (
        ("weights", b.weights),
        ("KV cache", b.kv_cache),
        ("activations", b.activations),
        ("loss head", b.loss_head),
        ("gradients", b.gradients),
        ("optimizer state", b.optimizer),
        ("runtime", b.runtime),
    )
    terms = " + ".join(f"{gb(v)} of {name}" for name, v in names if v > 0)
    if b.total <= b.capacity:
        return f"{terms} = {gb(b.total)} of {gb(b.capacity, 0)}: it fits."
    over = gb(b.total - b.capacity)
    return f"{terms} = {gb(b.total)} of {gb(b.capacity, 0)}: it does not fit, {over} too much."
