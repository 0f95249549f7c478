"""Memory: what a plan keeps on each GPU (weights, KV cache, activations, training state); does it fit?"""

from __future__ import annotations

import math
from functools import lru_cache
from typing import Literal, NamedTuple

from pydantic import BaseModel, ConfigDict, Field

from app.engine.errors import EngineError
from app.engine.hardware import get_gpu
from app.engine.models import Architecture
from app.engine.text import gb
from app.engine.units import BITS_PER_PRECISION
from app.engine.workload import MAX_GPUS, PlanRequest

# CUDA context and libraries on each GPU: about 0.5 GB of CUDA context with PyTorch on an H100, plus
# cuBLAS/cuDNN/NCCL workspaces and kernel images (engine-cases.md: "CUDA context and kernels take
# 1-2 GB"). 1.8 GB puts the lesson's serve plan for Llama 3.1 8B at its ~19 GB (EleutherAI's
# "1.2 x weights" rule of thumb gives 19.3 GB).
RUNTIME_BYTES = 1_800_000_000

# Activations and logits in serving are 16-bit (fp32 when the weights are fp32); logits are fp32.
LOGIT_BYTES = 4


class Quantization(BaseModel):
    """How a storage precision records its scales, and what they cost."""

    model_config = ConfigDict(frozen=True)

    precision: str = Field(description="Storage precision")
    granularity: Literal["none", "per-tensor", "per-channel", "group"] = Field(description="One scale per …")
    scale_bytes: int = Field(description="Bytes of one scale")
    group_size: int = Field(default=0, description="Weights sharing a scale, for group-wise schemes")
    note: str = Field(description="The scheme in a sentence")


# fp8: one fp32 scale per weight matrix (per-tensor, as NVIDIA Transformer Engine and vLLM's FP8
# checkpoints store it): a few kB for a whole model. int8: one fp16 scale per output row
# (per-channel, as LLM.int8() and SmoothQuant W8A8 store it). int4: one fp16 scale per group of 128
# weights, symmetric (GPTQ and AWQ's default group size; their optional zero points are not counted):
# 1/64 B a weight, +3.1 % over 0.5 B. Every parameter, embeddings included, is stored at the precision.
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
            group_size=128,
            note="one fp16 scale per 128 weights",
        ),
    )
}


def bytes_per_parameter(precision: str) -> float:
    """Bytes one number takes at a precision: 4, 2, 2, 1, 1, 0.5 for fp32 … int4 (scales aside)."""
    try:
        return BITS_PER_PRECISION[precision] / 8
    except KeyError:
        raise EngineError(
            f"Unknown precision '{precision}'. Known: {', '.join(BITS_PER_PRECISION)}."
        ) from None


def scale_bytes(arch: Architecture, precision: str) -> int:
    """Bytes of quantization scales stored beside the weights."""
    q = QUANTIZATION[precision]
    if q.granularity == "per-tensor":
        return arch.weight_matrices * q.scale_bytes
    if q.granularity == "per-channel":
        return arch.weight_rows * q.scale_bytes
    if q.granularity == "group":
        return math.ceil(arch.parameters / q.group_size) * q.scale_bytes
    return 0


def weight_bytes(arch: Architecture, precision: str) -> int:
    """Bytes of all the weights (every expert) at a precision, scales included."""
    return math.ceil(arch.parameters * bytes_per_parameter(precision)) + scale_bytes(arch, precision)


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


def activation_bytes_per_element(precision: str) -> int:
    """Activations are 16-bit in mixed precision and with quantized weights; fp32 with fp32 weights."""
    return 4 if precision == "fp32" else 2


def training_activation_bytes(
    arch: Architecture, seq: int, batch: int, recompute: bool, precision: str
) -> int:
    """Activations kept for the backward pass on one GPU.

    Without recomputation L·s·b·h·(34 + 5·a·s/h) bytes, with full recomputation 2·s·b·h·L
    (Korthikanti et al. 2022, "Reducing Activation Recomputation in Large Transformer Models";
    the Ultra-Scale Playbook). The 5·a·s/h term is the attention score matrix. Both assume 16-bit
    activations; fp32 doubles them.
    """
    L, s, b, h, a = arch.layers, seq, batch, arch.hidden, arch.heads
    per = 2.0 if recompute else 34 + 5 * a * s / h
    return math.ceil(L * s * b * h * per * activation_bytes_per_element(precision) / 2)


def serving_workspace_bytes(arch: Architecture, batch: int, prompt: int, tp: int, precision: str) -> int:
    """Transient activations while the whole batch's prompts are prefilled at once, on one GPU.

    One layer's activations at a time: the residual stream and its normalised copy (2·d a token, on
    every GPU) and the Q/K/V/output projections and MLP hidden layer (split across tensor-parallel
    GPUs), plus fp32 logits of the last token of each sequence.
    """
    q, kv = arch.heads * arch.n_head_dim, arch.n_kv_heads * arch.n_head_dim
    mlp = arch.experts_per_token * arch.ffn * (2 if arch.gated_mlp else 1)
    per_token = 2 * arch.hidden + math.ceil((q + 2 * kv + arch.hidden + mlp) / tp)
    tokens = batch * prompt
    logits = batch * math.ceil(arch.vocab / tp) * LOGIT_BYTES
    return tokens * per_token * activation_bytes_per_element(precision) + logits


class TrainingState(BaseModel):
    """Bytes a parameter needs for training: the working weights, their gradients, the optimizer state."""

    model_config = ConfigDict(frozen=True)

    weights: float = Field(description="Working copy of the weights, bytes a parameter")
    gradients: float = Field(description="Gradients, bytes a parameter")
    optimizer: float = Field(description="Optimizer state (fp32 master copy included), bytes a parameter")
    note: str = Field(description="What the optimizer keeps, in a sentence")

    @property
    def total(self) -> float:
        """Bytes a parameter, all three together."""
        return self.weights + self.gradients + self.optimizer


# Mixed precision (Micikevicius et al. 2018; the Ultra-Scale Playbook): 16-bit weights and gradients,
# an fp32 master copy (4 B) and the optimizer's fp32 moments: Adam 2 x 4 B, SGD momentum 4 B.
# 8-bit Adam (Dettmers et al. 2022, bitsandbytes) keeps both moments in 1 B each; its block-wise
# absmax constants (4 B per 2,048 values, 0.2 %) are not counted. fp8 training (Transformer Engine)
# keeps 16-bit working weights and casts them to fp8 for each matrix multiply. Gradients are kept at
# the working precision: an fp32 gradient accumulation buffer would add 4 B a parameter.
_MOMENTS = {"adam": 8.0, "adam-fp32": 8.0, "sgd-momentum": 4.0, "adam-8bit": 2.0}
_NOTES = {
    "adam": "Adam in mixed precision",
    "adam-fp32": "Adam in fp32 (weights, gradients and moments all 4 bytes)",
    "sgd-momentum": "SGD with momentum in mixed precision",
    "adam-8bit": "8-bit Adam in mixed precision",
}


def training_precision(optimizer: str, precision: str) -> str:
    """The precision of the working weights: adam-fp32 trains in fp32 whatever the plan asks."""
    return "fp32" if optimizer == "adam-fp32" else precision


@lru_cache(maxsize=64)
def training_state(optimizer: str, precision: str = "bf16") -> TrainingState:
    """Bytes a parameter for weights, gradients and optimizer state."""
    if optimizer not in _MOMENTS:
        raise EngineError(f"Unknown optimizer '{optimizer}'. Known: {', '.join(_MOMENTS)}.")
    working = training_precision(optimizer, precision)
    width = 4.0 if working == "fp32" else 2.0
    master = 0.0 if working == "fp32" else 4.0
    return TrainingState(
        weights=width, gradients=width, optimizer=master + _MOMENTS[optimizer], note=_NOTES[optimizer]
    )


def training_bytes_per_parameter(optimizer: str, precision: str = "bf16") -> float:
    """Training state a parameter: 16 for Adam in mixed precision (2 + 2 + 4 + 4 + 4)."""
    return training_state(optimizer, precision).total


_STAGE = {"none": 0, "zero1": 1, "zero2": 2, "zero3": 3}


def shard(weights: int, gradients: int, optimizer: int, sharding: str, n: int) -> tuple[int, int, int]:
    """Per-GPU weights, gradients and optimizer state under ZeRO over n data-parallel GPUs.

    ZeRO-1 shards the optimizer state, ZeRO-2 the gradients too, ZeRO-3 the weights too
    (Rajbhandari et al. 2020; the Ultra-Scale Playbook): 2Ψ+2Ψ+12Ψ/N, 2Ψ+14Ψ/N, 16Ψ/N for Adam.
    """
    stage = _STAGE[sharding]
    return (
        math.ceil(weights / n) if stage >= 3 else weights,
        math.ceil(gradients / n) if stage >= 2 else gradients,
        math.ceil(optimizer / n) if stage >= 1 else optimizer,
    )


class MemoryBreakdown(BaseModel):
    """Bytes on one GPU, by what they hold."""

    model_config = ConfigDict(frozen=True)

    weights: int = Field(description="Model weights (this GPU's share), quantization scales included")
    kv_cache: int = Field(description="Serving: keys and values of every cached token (this GPU's heads)")
    activations: int = Field(
        description="Training: activations kept for backward; serving: prefill workspace"
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
    activation_checkpointing: bool

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
        )


Parts = tuple[int, int, int, int, int, int]


def kv_heads_on_gpu(arch: Architecture, tp: int) -> int:
    """KV heads one GPU holds: split across GPUs, each GPU keeping at least one (replicated past kv_heads)."""
    return math.ceil(arch.n_kv_heads / tp)


def serve_parts(arch: Architecture, k: Knobs, gpus: int = 0) -> Parts:
    """Per-GPU weights, KV cache, activations, gradients, optimizer, runtime when serving on `gpus`."""
    tp = gpus or k.gpus
    weights = math.ceil(weight_bytes(arch, k.precision) / tp)
    kv_share = kv_heads_on_gpu(arch, tp) / arch.n_kv_heads
    kv = math.ceil(kv_cache_bytes(arch, k.kv_precision, k.context_tokens, k.batch_size) * kv_share)
    work = serving_workspace_bytes(arch, k.batch_size, k.prompt_tokens, tp, k.precision)
    return weights, kv, work, 0, 0, RUNTIME_BYTES


def train_parts(arch: Architecture, k: Knobs, gpus: int = 0) -> Parts:
    """Per-GPU weights, KV cache, activations, gradients, optimizer, runtime when training on `gpus`."""
    state = training_state(k.optimizer, k.precision)
    n = arch.parameters
    w, g, o = shard(
        math.ceil(n * state.weights),
        math.ceil(n * state.gradients),
        math.ceil(n * state.optimizer),
        k.sharding,
        gpus or k.gpus,
    )
    working = training_precision(k.optimizer, k.precision)
    acts = training_activation_bytes(
        arch, k.context_tokens, k.batch_size, k.activation_checkpointing, working
    )
    return w, 0, acts, g, o, RUNTIME_BYTES


def parts(arch: Architecture, k: Knobs, gpus: int = 0) -> Parts:
    """Per-GPU bytes of each component for the request's mode (on `gpus` GPUs if given)."""
    return serve_parts(arch, k, gpus) if k.mode == "serve" else train_parts(arch, k, gpus)


def breakdown(arch: Architecture, k: Knobs, capacity: int) -> MemoryBreakdown:
    """Per-GPU bytes of each component, their total and the GPU's capacity."""
    w, kv, act, g, o, rt = parts(arch, k)
    return MemoryBreakdown(
        weights=w,
        kv_cache=kv,
        activations=act,
        gradients=g,
        optimizer=o,
        runtime=rt,
        total=w + kv + act + g + o + rt,
        capacity=capacity,
    )


def per_gpu(req: PlanRequest) -> MemoryBreakdown:
    """What one GPU holds for this request."""
    return breakdown(req.architecture, Knobs.of(req), get_gpu(req.gpu).memory_bytes)


def total(arch: Architecture, k: Knobs, gpus: int = 0) -> int:
    """Per-GPU bytes in all (on `gpus` GPUs if given)."""
    return sum(parts(arch, k, gpus))


def min_gpus(arch: Architecture, k: Knobs, capacity: int) -> int | None:
    """The fewest GPUs at which the plan fits, or None if even MAX_GPUS are not enough.

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
        ("gradients", b.gradients),
        ("optimizer state", b.optimizer),
        ("runtime", b.runtime),
    )
    terms = " + ".join(f"{gb(v)} of {name}" for name, v in names if v > 0)
    if b.total <= b.capacity:
        return f"{terms} = {gb(b.total)} of {gb(b.capacity, 0)}: it fits."
    over = gb(b.total - b.capacity)
    return f"{terms} = {gb(b.total)} of {gb(b.capacity, 0)}: it does not fit, {over} too much."
