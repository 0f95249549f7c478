"""Compute: FLOPs, time from peak × MFU, prefill and decode bounds, roofline, communication, CPU vs GPU."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from app.engine import activations, collectives, memory
from app.engine.errors import EngineError
from app.engine.hardware import DGX_H100, GPU, HBM_ACHIEVED_SHARE, achieved_bandwidth, get_gpu, get_link, peak_flops
from app.engine.models import Architecture
from app.engine.units import BITS_PER_PRECISION
from app.engine.workload import FP8_SPEEDUP

Binds = Literal["compute", "memory-bandwidth"]

# A training step reads the weights three times: the forward pass, then the backward pass once for the
# activation gradients and once for the weight gradients.
TRAIN_STEP_WEIGHT_READS = 3


def training_flops(active_parameters: float, tokens: float) -> float:
    """Model FLOPs, 6·N·D: forward 2·N·D plus backward 4·N·D. MFU counts these, recomputation or not."""
    return 6 * active_parameters * tokens


def training_attention_flops_per_token(arch: Architecture, context: int) -> float:
    """Causal attention of training a token at a sequence length: forward (the prefill count ÷ tokens) and the
    backward pass's two products of the same size, 3 × 2·L·(heads × head_dim)·context."""
    return 3 * attention_flops(arch, context) / context


def training_model_flops(arch: Architecture, tokens: float, context: int) -> float:
    """What MFU counts for `tokens` of training in sequences of `context`: 6·N·D plus causal attention forward
    and backward, counted as prefill counts it (issue 25 item 7). training_flops gives 6·N·D alone."""
    return (6 * arch.active_parameters + training_attention_flops_per_token(arch, context)) * tokens


def hardware_training_flops(active_parameters: float, tokens: float, checkpointing: str = "none") -> float:
    """FLOPs the GPUs really run: 8·N·D when full checkpointing reruns each layer's forward pass.

    Selective checkpointing reruns norms, activations and the attention core, none of them a matrix
    multiply of the weights: about 6·N·D (Korthikanti et al. 2022 put its overhead at 2-4 %). HFU
    (hardware FLOPs utilisation) counts these; MFU counts 6·N·D (Chowdhery et al. 2022, PaLM, app. B).
    """
    return (8 if checkpointing == "full" else 6) * active_parameters * tokens


def training_peak(gpu: GPU, precision: str, fp8_speedup: float = FP8_SPEEDUP) -> float:
    """The FLOP/s a training run's MFU is taken against, for its working precision.

    fp8 training is measured against the bf16 peak times `fp8_speedup`, not the fp8 peak: only the
    matrix multiplies run in fp8 (attention, norms and casts do not), and MFU is ill-defined once two
    peaks are involved (torchtitan: 1.28x on 8 H100, see workload.FP8_SPEEDUP). fp32 runs as TF32.
    A GPU without fp8 tensor cores (A100) trains fp8 at its 16-bit rate.
    """
    if precision == "fp8":
        return peak_flops(gpu, "bf16") * (fp8_speedup if "fp8" in gpu.peak_flops else 1.0)
    return peak_flops(gpu, precision)


def inference_flops(active_parameters: float, tokens: float = 1) -> float:
    """About 2·N FLOPs a token: one multiply and one add per weight used."""
    return 2 * active_parameters * tokens


def compute_seconds(flops: float, gpus: int, peak: float, mfu: float) -> float:
    """Time = FLOPs ÷ (GPUs × peak × MFU)."""
    return flops / (gpus * peak * mfu)


class Bound(BaseModel):
    """A phase's time under the compute bound and under the memory-bandwidth bound; the larger binds."""

    model_config = ConfigDict(frozen=True)

    compute_seconds: float = Field(description="FLOPs ÷ (GPUs × peak × efficiency)")
    memory_seconds: float = Field(description="Bytes read ÷ (GPUs × memory bandwidth)")
    communication_seconds: float = Field(
        default=0.0, description="Tensor-parallel all-reduces: latency and bandwidth terms"
    )
    overhead_seconds: float = Field(
        default=0.0, description="Fixed cost of the forward pass: scheduling, kernel launches, sampling"
    )
    seconds: float = Field(description="The larger bound plus communication and the fixed cost")
    binds: Binds = Field(description="Which bound sets the time")


def bound(compute_s: float, memory_s: float, communication_s: float = 0.0, overhead_s: float = 0.0) -> Bound:
    """The phase time: the larger of the two bounds, plus communication that does not overlap (serving stacks
    run the tensor-parallel all-reduce between the matrix multiplies, not beside them) and the fixed cost."""
    binds: Binds = "compute" if compute_s >= memory_s else "memory-bandwidth"
    return Bound(
        compute_seconds=compute_s,
        memory_seconds=memory_s,
        communication_seconds=communication_s,
        overhead_seconds=overhead_s,
        seconds=max(compute_s, memory_s) + communication_s + overhead_s,
        binds=binds,
    )


# The fixed cost of one forward pass in a serving stack, beside its maths and its reads: the scheduler, input
# preparation, kernel launches between CUDA graphs, sampling and the hand-back of the tokens. NVIDIA's NeMo
# inference table (docs.nvidia.com/nemo-framework, performance/llama, "Llama-2 results", TensorRT-LLM, batch 1,
# 128 prompt and 20 output tokens, TP 1) times a request of Llama-2-7B at 153.8 ms on an H100 and 234.0 ms on
# an A100: 21 forward passes that each read the 13.2 GB of weights at the achieved bandwidth (5.76 ms and
# 9.45 ms) leave 1.56 ms and 1.71 ms a pass. One figure for both GPUs: 1.6 ms a forward pass.
STEP_OVERHEAD_SECONDS = 1.6e-3
STEP_TOKEN_BUDGET = activations.STEP_TOKEN_BUDGET


def decode_step(
    gpu: GPU,
    precision: str,
    bytes_read_per_gpu: float,
    active_parameters: float,
    batch: int,
    gpus: int = 1,
    mfu: float = 1.0,
    communication_s: float = 0.0,
    bandwidth_share: float = 1.0,
    overhead_s: float = 0.0,
) -> Bound:
    """One decode step (one token for each of `batch` sequences).

    Every step reads the weights and the KV cache: time ≥ bytes ÷ (bandwidth × share); and computes
    2 × active parameters × batch FLOPs: time ≥ FLOPs ÷ (GPUs × peak × MFU). The defaults give the
    datasheet ceiling; `serve_step` gives what a serving stack reaches.
    """
    flops = inference_flops(active_parameters, batch)
    return bound(
        compute_seconds(flops, gpus, peak_flops(gpu, precision), mfu),
        bytes_read_per_gpu / (gpu.bandwidth * bandwidth_share),
        communication_s,
        overhead_s,
    )


def attended_pairs(tokens: int, window: int | None = None) -> float:
    """(query, key) pairs a causal prompt of `tokens` tokens scores: T²/2, or T·W past a window of W.

    Token i attends to the i tokens up to it (the causal halving of the T × T score matrix), or to
    the last W of them with a sliding window (Mistral 7B).
    """
    if window is None or tokens <= window:
        return tokens * tokens / 2
    return window * window / 2 + (tokens - window) * window


def attention_flops(arch: Architecture, tokens: int, batch: int = 1) -> float:
    """FLOPs of the QK^T and AV matmuls of a causal prefill, all layers: 4 × pairs × query width each.

    Each (query, key) pair costs a dot product of one head's width for the score and the same again to
    weight the value, in every query head: 2 × 2 × heads × head_dim FLOPs a pair and layer. PaLM
    (Chowdhery et al. 2022, appendix B) counts 12·L·H·Q·T a token for training: 4·L·H·Q·T forward over
    the whole sequence, which causal masking halves. 2·N·T leaves it out; at 128k tokens it is about
    2.1 × 2·N·T for the 8B (3.1 × in all), at 2,048 tokens 3 %.
    """
    width = arch.heads * arch.n_head_dim
    return 4 * arch.layers * width * attended_pairs(tokens, arch.sliding_window) * batch


def prefill(
    gpu: GPU,
    precision: str,
    bytes_read_per_gpu: float,
    active_parameters: float,
    tokens: int,
    gpus: int = 1,
    mfu: float = 1.0,
    communication_s: float = 0.0,
    attention: float = 0.0,
    bandwidth_share: float = 1.0,
    overhead_s: float = 0.0,
) -> Bound:
    """Prefill of `tokens` prompt tokens at once: 2·N·tokens FLOPs plus the attention FLOPs given,
    against one read of the weights."""
    flops = inference_flops(active_parameters, tokens) + attention
    return bound(
        compute_seconds(flops, gpus, peak_flops(gpu, precision), mfu),
        bytes_read_per_gpu / (gpu.bandwidth * bandwidth_share),
        communication_s,
        overhead_s,
    )


def serving_efficiency(gpu: GPU, mfu: float | None = None) -> float:
    """The share of peak a serving step's maths reaches: `mfu` when a request names one, else the GPU's
    measured matrix-multiply share (MAMF)."""
    return gpu.matmul_efficiency if mfu is None else mfu


def serve_step(
    arch: Architecture,
    gpu: GPU,
    precision: str,
    gpus: int,
    tokens: int,
    bytes_read_per_gpu: float,
    attention: float = 0.0,
    mfu: float | None = None,
) -> Bound:
    """One forward pass of a serving stack over `tokens` tokens (decodes and prefill chunks together): its maths
    at the achieved matrix-multiply share, its reads (this GPU's weights, KV cache) at the achieved HBM share,
    the tensor-parallel all-reduces (item 5's collectives, not overlapped) and the fixed cost of a pass."""
    flops = inference_flops(arch.active_parameters, tokens) + attention
    return bound(
        compute_seconds(flops, gpus, peak_flops(gpu, precision), serving_efficiency(gpu, mfu)),
        bytes_read_per_gpu / achieved_bandwidth(gpu),
        tensor_parallel_seconds(arch, tokens, gpus, precision),
        STEP_OVERHEAD_SECONDS,
    )


def decode_attention_flops(arch: Architecture, context: float, batch: float = 1) -> float:
    """Attention FLOPs of one decode step: each new token scores and weights `context` cached tokens in every
    layer and query head, 4 × width FLOPs a pair (as in prefill)."""
    window = arch.sliding_window
    pairs = context if window is None else min(context, window)
    return 4 * arch.layers * arch.heads * arch.n_head_dim * pairs * batch


def expert_fraction_read(arch: Architecture, batch: int) -> float:
    """Share of a layer's experts a decode step reads when `batch` tokens each pick `k` of `E`.

    With uniform routing an expert escapes one token with probability 1 - k/E, so the share touched is
    1 - (1 - k/E)^batch: k/E for one token, nearly all experts for a large batch.
    """
    if arch.experts == 1:
        return 1.0
    return 1 - (1 - arch.experts_per_token / arch.experts) ** batch


def unread_embedding_parameters(arch: Architecture, tokens: int) -> int:
    """Rows of the input embedding table a step of `tokens` tokens does not read.

    The input embedding is a lookup: each token reads its own row of `hidden` numbers, not the table.
    The LM head is a matrix multiply and is read whole; with tied embeddings the table is the head,
    so all of it is read.
    """
    if arch.tied_embeddings:
        return 0
    return max(0, arch.vocab - tokens) * arch.hidden


def weight_share_read(arch: Architecture, batch: int, precision: str = "bf16") -> float:
    """Share of the weight bytes a step of `batch` tokens reads: all but the unused embedding rows; of a
    mixture of experts, only the experts its tokens touch.

    Weighed in bytes as the checkpoint stores them: a quantized checkpoint keeps the embedding table in
    16 bits (memory.weight_bytes), so the rows a step skips save 2 bytes each, not the precision's width.
    """
    total = memory.weight_bytes(arch, precision)
    quantized = precision in memory.QUANTIZED
    row_bytes = memory.KEPT_BYTES_PER_PARAMETER if quantized else memory.bytes_per_parameter(precision)
    unread_rows = unread_embedding_parameters(arch, batch) * row_bytes
    experts = arch.layers * arch.experts * arch.expert_parameters if arch.experts > 1 else 0
    unread_experts = experts * memory.bytes_per_parameter(precision) * (1 - expert_fraction_read(arch, batch))
    return (total - unread_rows - unread_experts) / total


def intensity(flops: float, nbytes: float) -> float:
    """Arithmetic intensity: FLOPs per byte moved to or from memory."""
    if nbytes <= 0:
        raise EngineError("Arithmetic intensity needs a positive number of bytes.")
    return flops / nbytes


def attainable(gpu_id: str, precision: str, flops_per_byte: float) -> float:
    """Roofline: attainable FLOP/s = min(peak, intensity × bandwidth)."""
    gpu = get_gpu(gpu_id)
    return min(peak_flops(gpu, precision), flops_per_byte * gpu.bandwidth)


def ridge(gpu_id: str, precision: str = "bf16") -> float:
    """Ridge point: peak ÷ bandwidth, the intensity above which a kernel is compute-bound."""
    gpu = get_gpu(gpu_id)
    return peak_flops(gpu, precision) / gpu.bandwidth


def decode_intensity(batch: int, precision: str) -> float:
    """FLOPs per byte of a decode step's matrix multiplies: 2·batch FLOPs per weight ÷ bytes per weight."""
    return 2 * batch / (BITS_PER_PRECISION[precision] / 8)


class RooflinePoint(BaseModel):
    """One point of the roofline."""

    intensity: float = Field(description="FLOPs per byte")
    flops: float = Field(description="Attainable FLOP/s")
    binds: Binds = Field(description="Which roof caps this point")


class Roofline(BaseModel):
    """The roofline of a GPU at a precision, with a marked point."""

    gpu: str = Field(description="GPU id")
    precision: str = Field(description="Weight precision; it selects the tensor-core peak")
    peak_flops: float = Field(description="Flat roof: dense peak FLOP/s")
    bandwidth: float = Field(description="Slope: memory bytes per second")
    ridge: float = Field(description="Intensity where the roofs meet, FLOPs per byte")
    achieved_peak_flops: float = Field(
        description="What large matrix multiplies reach: the peak × the GPU's measured share (MAMF)"
    )
    achieved_bandwidth: float = Field(description="What decode kernels read at: the bandwidth × the HBM share")
    point: RooflinePoint = Field(description="The intensity asked for, placed under the roofs")
    curve: list[RooflinePoint] = Field(
        description="Points from 1 to 10,000 FLOPs/byte, log-spaced, for a chart"
    )


def roofline_point(gpu_id: str, precision: str, flops_per_byte: float) -> RooflinePoint:
    """One intensity placed under the roofs."""
    binds: Binds = "compute" if flops_per_byte >= ridge(gpu_id, precision) else "memory-bandwidth"
    return RooflinePoint(
        intensity=flops_per_byte, flops=attainable(gpu_id, precision, flops_per_byte), binds=binds
    )


def roofline(gpu_id: str, precision: str = "bf16", flops_per_byte: float = 1.0, points: int = 33) -> Roofline:
    """The roofline of a GPU, a marked intensity and a log-spaced curve from 1 to 10,000 FLOPs/byte."""
    gpu = get_gpu(gpu_id)
    curve = [roofline_point(gpu_id, precision, 10 ** (4 * i / (points - 1))) for i in range(points)]
    return Roofline(
        gpu=gpu_id,
        precision=precision,
        peak_flops=peak_flops(gpu, precision),
        bandwidth=gpu.bandwidth,
        ridge=ridge(gpu_id, precision),
        achieved_peak_flops=peak_flops(gpu, precision) * gpu.matmul_efficiency,
        achieved_bandwidth=gpu.bandwidth * HBM_ACHIEVED_SHARE,
        point=roofline_point(gpu_id, precision, flops_per_byte),
        curve=curve,
    )


def all_reduce_seconds(nbytes: float, n: int, link_bandwidth: float) -> float:
    """Ring all-reduce of `nbytes` over n GPUs ≈ 2·(n−1)/n × bytes ÷ link bandwidth (bandwidth term only).

    `collective_seconds` adds the per-call latency; this is the β term alone, for large messages.
    """
    if n <= 1:
        return 0.0
    return 2 * (n - 1) / n * nbytes / link_bandwidth


def all_reduce_latency(n: int) -> float:
    """The latency of a small all-reduce over n GPUs (NCCL's LL protocol): about 15 µs over dgx-1's 8."""
    return collectives.collective("all-reduce", 0.0, n).latency_seconds


def node_network_bandwidth() -> float:
    """One dgx-1's bandwidth to other nodes: its 8 compute rails × 50 GB/s = 400 GB/s each way."""
    return DGX_H100.network.links * DGX_H100.network.link.bandwidth


def collective_bandwidth(gpus: int) -> float:
    """Achieved bus bandwidth of a collective over `gpus` GPUs (app.engine.collectives.bus_bandwidth)."""
    return collectives.bus_bandwidth(gpus)


def collective_seconds(nbytes: float, n: int) -> float:
    """An all-reduce over n of dgx-1's GPUs: latency + bytes on the bus ÷ achieved bus bandwidth, under the
    protocol NCCL would pick (app.engine.collectives)."""
    return collectives.seconds("all-reduce", nbytes, n)


def all_reduce(nbytes: float, n: int, link: str = "nvlink") -> float:
    """Ring all-reduce time over a named link (nvlink, pcie or network), as NCCL runs it: its latency plus the
    bytes on the bus at the bandwidth a ring reaches over that link (app.engine.collectives). Over NVLink on up to
    8 GPUs this is `collective_seconds`, the figure a plan uses; `all_reduce_seconds` at the line rate is the
    textbook ceiling (reference case 16)."""
    bus = None if link == "nvlink" and n <= 8 else collectives.achieved_over(get_link(link).bandwidth)
    return collectives.seconds("all-reduce", nbytes, n, bus)


def transfer_seconds(nbytes: float, link: str = "pcie") -> float:
    """Time to move bytes one way over a named link (copying weights to a GPU over PCIe, say)."""
    return nbytes / get_link(link).bandwidth


def tensor_parallel_seconds(arch: Architecture, tokens: int, gpus: int, precision: str) -> float:
    """Two all-reduces a layer of tokens × hidden activations (after attention and after the MLP),
    each paying NCCL's latency: 64 calls a token for the 8B, 160 for the 70B."""
    act = 4 if precision == "fp32" else 2
    per_layer = 2 * collective_seconds(tokens * arch.hidden * act, gpus)
    return arch.layers * per_layer
