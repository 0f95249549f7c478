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
from app.engine.workload import CHECKPOINTING_MODES, MAX_GPUS, PlanRequest

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
# AWQ-INT4 (5.73 GB) (measured-runs.md): a pure parameters x bits / 8 would say 8.03 and 4.14 GB.
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


def activation_bytes_per_element(precision: str) -> int:
    """Activations are 16-bit in mixed precision and with quantized weights; fp32 with fp32 weights."""
    return 4 if precision == "fp32" else 2


# One transformer block's tensors that autograd keeps for the backward pass, per token of the
# micro-batch, in a Llama-style block as it is trained today: pre-norm (RMSNorm), RoPE, FlashAttention
# (the s x s score matrix is never stored: its backward recomputes it from Q, K, V, the output and the
# softmax's log-sum-exp; Dao et al. 2022), grouped-query attention (K and V are kv_heads wide),
# a gated SwiGLU MLP, no dropout (Llama 3's attention_dropout is 0.0) and, in a mixture of experts,
# each token's k routed experts. "act" is the activation width: 2 bytes (bf16/fp16, fp8 training
# keeps bf16 activations) or 4 (fp32). d = hidden, q = heads x head_dim, kv = kv_heads x head_dim,
# f = ffn, k = experts a token. Which checkpointing mode keeps it:
#
# | tensor                                   | a token | bytes | none | selective | full |
# | block input x (norm 1 input, residual)   | d       | act   | yes  | yes       | yes  |
# | norm 1 statistic (1/rms; LayerNorm: +mean)| 1 (2)  | 4     | yes  | -         | -    |
# | norm 1 output (input of Q, K, V)         | d       | act   | yes  | -         | -    |
# | Q, K, V projections (attention inputs)   | q + 2kv | act   | yes  | yes       | -    |
# | attention output (input of O projection) | q       | act   | yes  | -         | -    |
# | softmax log-sum-exp (FlashAttention)     | heads   | 4     | yes  | -         | -    |
# | x + attention (norm 2 input, residual)   | d       | act   | yes  | yes       | -    |
# | norm 2 statistic                         | 1 (2)   | 4     | yes  | -         | -    |
# | norm 2 output (input of the MLP)         | d       | act   | yes  | -         | -    |
# | router logits (MoE only)                 | experts | 4     | yes  | yes       | -    |
# | gate projection (SwiGLU) / fc1 (GELU)    | k.f     | act   | yes  | yes       | -    |
# | up projection (SwiGLU only)              | k.f     | act   | yes  | yes       | -    |
# | SiLU(gate) / GELU(fc1)                   | k.f     | act   | yes  | -         | -    |
# | SiLU(gate) x up (input of down, SwiGLU)  | k.f     | act   | yes  | -         | -    |
#
# Llama 3.1 8B in bf16: none 168,072 B a token a layer (41 x d), selective 86,016 (21 x d), full 8,192.
# Selective keeps the matrix multiplies' outputs and recomputes the cheap element-wise parts and the
# attention (torchtitan's and Megatron's selective checkpointing); full keeps the block input and
# reruns the whole block. In the backward pass the layer being worked on holds what was recomputed:
# one layer's "none" tensors beyond what the mode keeps, counted once on top of the L layers.
#
# The textbook L·s·b·h·(34 + 5·a·s/h) (Korthikanti et al. 2022, the Ultra-Scale Playbook) is the
# pre-FlashAttention case: it stores the a x s x s score matrix and its softmax (5·a·s/h), dropout
# masks, full multi-head K and V and a 4h GELU MLP. korthikanti_activation_bytes keeps it for comparison.
Keep = tuple[bool, bool, bool]
_ALL: Keep = (True, True, True)
_SELECTIVE: Keep = (True, True, False)
_NONE_ONLY: Keep = (True, False, False)


def layer_tensors(arch: Architecture, precision: str) -> list[tuple[str, int, Keep]]:
    """(tensor, bytes a token, kept by none/selective/full) for one block, as the table above lists them."""
    act = activation_bytes_per_element(precision)
    d, heads = arch.hidden, arch.heads
    q, kv = heads * arch.n_head_dim, arch.n_kv_heads * arch.n_head_dim
    stat = 4 * (2 if arch.norm == "layernorm" else 1)
    kf = arch.experts_per_token * arch.ffn
    rows: list[tuple[str, int, Keep]] = [
        ("block input", d * act, _ALL),
        ("norm 1 statistic", stat, _NONE_ONLY),
        ("norm 1 output", d * act, _NONE_ONLY),
        ("Q, K, V projections", (q + 2 * kv) * act, _SELECTIVE),
        ("attention output", q * act, _NONE_ONLY),
        ("softmax log-sum-exp", heads * 4, _NONE_ONLY),
        ("x + attention", d * act, _SELECTIVE),
        ("norm 2 statistic", stat, _NONE_ONLY),
        ("norm 2 output", d * act, _NONE_ONLY),
    ]
    if arch.experts > 1:
        rows.append(("router logits", arch.experts * 4, _SELECTIVE))
    if arch.gated_mlp:
        rows += [
            ("gate projection", kf * act, _SELECTIVE),
            ("up projection", kf * act, _SELECTIVE),
            ("SiLU(gate)", kf * act, _NONE_ONLY),
            ("SiLU(gate) x up", kf * act, _NONE_ONLY),
        ]
    else:
        rows += [("fc1 output", kf * act, _SELECTIVE), ("GELU(fc1)", kf * act, _NONE_ONLY)]
    return rows


def layer_activation_bytes(arch: Architecture, precision: str, checkpointing: str) -> int:
    """Bytes a token that one block keeps for the backward pass under a checkpointing mode."""
    i = _checkpointing_index(checkpointing)
    return sum(nbytes for _, nbytes, keep in layer_tensors(arch, precision) if keep[i])


def _checkpointing_index(checkpointing: str) -> int:
    """0, 1, 2 for none, selective, full."""
    try:
        return CHECKPOINTING_MODES.index(checkpointing)
    except ValueError:
        raise EngineError(
            f"Unknown activation checkpointing '{checkpointing}'. Known: {', '.join(CHECKPOINTING_MODES)}."
        ) from None


def training_activation_bytes(
    arch: Architecture, seq: int, batch: int, checkpointing: str, precision: str
) -> int:
    """Activations of the transformer blocks kept for the backward pass on one GPU.

    L layers keep what the mode keeps (the table above); the layer the backward pass is working on
    also holds what its recomputation rebuilt: (L - 1) x kept + one layer's "none" tensors, a token.
    """
    kept = layer_activation_bytes(arch, precision, checkpointing)
    working = layer_activation_bytes(arch, precision, "none")
    return (arch.layers - 1) * kept * seq * batch + working * seq * batch


# The loss head, per token of the micro-batch, at its peak (end of the forward pass and start of the
# backward pass; checkpointing wraps the blocks, not the head, so every mode keeps it):
#
# | tensor                                     | a token | bytes        |
# | final norm input and output (LM head input)| 2 x d   | act          |
# | logits from the LM head                    | vocab   | act (16-bit) |
# | fp32 logits / log-probabilities (the loss) | vocab   | 4            |
# | their gradient, fp32                       | vocab   | 4            |
#
# Llama 3.1 8B, 32,768 tokens: 32,768 x 128,256 x 4 B = 16.8 GB of fp32 logits and as much again for
# their gradient (torchtitan computes cross-entropy on pred.float()).
LOSS_FP32_BYTES = 4


def loss_head_bytes(arch: Architecture, seq: int, batch: int, precision: str) -> int:
    """Final norm, logits in 16 and 32 bits, and the logits' fp32 gradient for every token of a micro-batch."""
    act = activation_bytes_per_element(precision)
    per_token = 2 * arch.hidden * act + arch.vocab * (act + 2 * LOSS_FP32_BYTES)
    return per_token * seq * batch


def korthikanti_activation_bytes(arch: Architecture, seq: int, batch: int, recompute: bool) -> int:
    """The pre-FlashAttention textbook: L·s·b·h·(34 + 5·a·s/h) bytes, or 2·s·b·h·L with full recomputation.

    Korthikanti et al. 2022, "Reducing Activation Recomputation in Large Transformer Models"; the
    Ultra-Scale Playbook. It stores the attention score matrix (5·a·s/h), dropout masks, full multi-head
    K/V and a 4h MLP: 16-bit activations of a GPT-style block of 2022.
    """
    L, s, b, h, a = arch.layers, seq, batch, arch.hidden, arch.heads
    per = 2.0 if recompute else 34 + 5 * a * s / h
    return math.ceil(L * s * b * h * per)


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
    head = loss_head_bytes(arch, k.context_tokens, k.batch_size, working)
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
