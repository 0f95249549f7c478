"""Decode from the memory side: tokens/s ≤ bandwidth ÷ bytes read; batching moves it along the roofline."""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache

from pydantic import BaseModel, ConfigDict, Field

from app.engine import compute
from app.engine.hardware import achieved_bandwidth, get_gpu, peak_flops
from app.engine.memory import Knobs, kv_cache_bytes, total, weight_bytes
from app.engine.models import Architecture
from app.engine.plan import make_plan
from app.engine.text import plural
from app.engine.workload import PlanRequest

# GPU generations compared, oldest first.
GENERATIONS: tuple[str, ...] = ("a100", "h100", "h200")
# The KV cache is kept in bf16 unless a plan says otherwise (PlanRequest's default).
KV_PRECISION = "bf16"
# Largest batch searched for the ridge crossing.
MAX_BATCH = 1 << 20


class DecodeSpeed(BaseModel):
    """Single-sequence decode on one GPU: the bytes every token reads and the ceiling they set."""

    model_config = ConfigDict(frozen=True)

    gpu: str = Field(description="GPU id")
    gpu_name: str = Field(description="GPU product name")
    bandwidth: float = Field(description="Memory bandwidth, bytes per second")
    memory_bytes: int = Field(description="Memory capacity, bytes")
    weight_bytes: float = Field(
        description="Weight bytes read per token: all but other tokens' embedding rows (the used experts of a MoE)"
    )
    model_weight_bytes: int = Field(description="All the weights as stored: what memory holds")
    kv_bytes: int = Field(description="KV cache bytes read per token at the context length")
    bytes_read: float = Field(description="Weights and KV cache: what one decode step reads")
    flops_per_token: float = Field(description="2 × active parameters")
    compute_seconds: float = Field(description="FLOPs ÷ peak: the maths alone at full speed")
    weights_only_tokens_per_second: float = Field(description="The ceiling, weights alone: bandwidth ÷ weight bytes")
    ceiling_tokens_per_second: float = Field(description="The ceiling: datasheet bandwidth ÷ (weights + KV cache)")
    achieved_bandwidth: float = Field(description="What decode kernels reach: the bandwidth × the HBM share")
    tokens_per_second: float = Field(
        description="The plan's decode speed: (weights + KV cache) at the achieved bandwidth, plus a pass's fixed cost"
    )
    seconds_per_token: float = Field(description="1 ÷ tokens_per_second")
    fits: bool = Field(description="Weights, KV cache and runtime fit on one GPU of this kind")


class DecodeComparison(BaseModel):
    """Decode speed of one model and precision on each GPU generation."""

    model_config = ConfigDict(frozen=True)

    model: str = Field(description="Model name")
    precision: str = Field(description="Weight precision")
    context_tokens: int = Field(description="Tokens in the KV cache")
    selected: str = Field(description="The GPU the learner chose")
    speeds: list[DecodeSpeed] = Field(description="One entry per generation, oldest first")

    @property
    def chosen(self) -> DecodeSpeed:
        """The entry of the chosen GPU."""
        return next(s for s in self.speeds if s.gpu == self.selected)


def decode_speed(arch: Architecture, precision: str, gpu_id: str, context_tokens: int) -> DecodeSpeed:
    """One sequence decoding on one GPU: every token reads the weights and its KV cache once."""
    gpu = get_gpu(gpu_id)
    req = PlanRequest.model_validate(
        {
            "model": arch.id if arch.id != "custom" else arch,
            "precision": precision,
            "gpu": gpu_id,
            "context_tokens": context_tokens,
        }
    )
    plan = make_plan(req)
    assert plan.serve is not None
    weights = weight_bytes(arch, precision) * compute.weight_share_read(arch, 1, precision)
    flops = compute.inference_flops(arch.active_parameters)
    return DecodeSpeed(
        gpu=gpu_id,
        gpu_name=gpu.name,
        bandwidth=gpu.bandwidth,
        memory_bytes=gpu.memory_bytes,
        weight_bytes=weights,
        model_weight_bytes=weight_bytes(arch, precision),
        kv_bytes=plan.per_gpu.kv_cache,
        bytes_read=weights + plan.per_gpu.kv_cache,
        flops_per_token=flops,
        compute_seconds=flops / peak_flops(gpu, precision),
        weights_only_tokens_per_second=gpu.bandwidth / weights,
        ceiling_tokens_per_second=gpu.bandwidth / (weights + plan.per_gpu.kv_cache),
        achieved_bandwidth=achieved_bandwidth(gpu),
        tokens_per_second=plan.serve.tokens_per_second,
        seconds_per_token=plan.serve.decode_seconds_per_token,
        fits=plan.fits,
    )


def decode_comparison(
    arch: Architecture, precision: str, gpu_id: str, context_tokens: int
) -> DecodeComparison:
    """The same decode on A100, H100 and H200."""
    get_gpu(gpu_id)  # an unknown id raises a readable EngineError
    return DecodeComparison(
        model=arch.name,
        precision=precision,
        context_tokens=context_tokens,
        selected=gpu_id,
        speeds=[decode_speed(arch, precision, g, context_tokens) for g in GENERATIONS],
    )


class DecodePoint(BaseModel):
    """A decode step of `batch` sequences placed on the roofline."""

    model_config = ConfigDict(frozen=True)

    batch: int = Field(description="Sequences decoded together")
    flops: float = Field(description="2 × active parameters × batch")
    bytes: float = Field(description="Bytes the step reads")
    point: compute.RooflinePoint = Field(description="Intensity, attainable FLOP/s and the binding roof")
    seconds: float = Field(description="Step time at the roofline: max(FLOPs ÷ peak, bytes ÷ bandwidth)")
    ceiling_throughput: float = Field(description="Tokens a second for the whole batch at that roofline step time")
    throughput: float = Field(
        description="Tokens a second for the whole batch as the plan serves it (achieved bandwidth, fixed cost)"
    )


class DecodeRoofline(BaseModel):
    """The roofline of a GPU with decode placed on it, weights only and with each sequence's KV cache."""

    model_config = ConfigDict(frozen=True)

    model: str = Field(description="Model name")
    precision: str = Field(description="Weight precision")
    roofline: compute.Roofline = Field(description="Peak, bandwidth, ridge and the curve")
    weights_only: DecodePoint = Field(description="The step reading the weights alone")
    with_kv: DecodePoint | None = Field(
        description="The step reading each sequence's KV cache too (context > 0)"
    )
    context_tokens: int = Field(description="Tokens of KV cache per sequence (0: ignored)")
    batch_at_ridge: int | None = Field(
        description="Smallest batch whose weights-only intensity reaches the ridge"
    )
    batch_at_ridge_with_kv: int | None = Field(description="The same with KV caches read; null if never")
    kv_limit_intensity: float | None = Field(
        description="Intensity a huge batch tends to when KV caches are read"
    )
    max_batch_fits: int | None = Field(
        description="The largest batch whose weights and KV caches fit on one GPU (null when not even one does)"
    )
    ridge_verdict: str = Field(
        description="The one answer to 'when does decode reach the ridge?', weights alone, with KV caches and "
        "with what fits, in a sentence"
    )


def _point(arch: Architecture, precision: str, gpu_id: str, batch: int, context_tokens: int) -> DecodePoint:
    """One decode step: FLOPs against the weights (and KV caches) it reads."""
    gpu = get_gpu(gpu_id)
    flops = compute.inference_flops(arch.active_parameters, batch)
    nbytes = weight_bytes(arch, precision) * compute.weight_share_read(arch, batch, precision)
    nbytes += kv_cache_bytes(arch, KV_PRECISION, context_tokens, batch) if context_tokens else 0
    step = compute.bound(flops / peak_flops(gpu, precision), nbytes / gpu.bandwidth)
    return DecodePoint(
        batch=batch,
        flops=flops,
        bytes=nbytes,
        point=compute.roofline_point(gpu_id, precision, flops / nbytes),
        seconds=step.seconds,
        ceiling_throughput=batch / step.seconds,
        throughput=batch / step.seconds,
    )


def _served(arch: Architecture, precision: str, gpu_id: str, point: DecodePoint, context_tokens: int) -> DecodePoint:
    """The point with the plan's own batch throughput: the same decode step a serving plan takes."""
    req = PlanRequest.model_validate(
        {"model": arch.id if arch.id != "custom" else arch, "precision": precision, "gpu": gpu_id,
         "batch_size": point.batch, "context_tokens": max(1, context_tokens)}
    )
    serve = make_plan(req).serve
    assert serve is not None
    return point.model_copy(update={"throughput": serve.throughput_tokens_per_second})


def _first_batch(reaches: Callable[[int], bool]) -> int | None:
    """Smallest batch in 1..MAX_BATCH for which `reaches(batch)` holds (it is monotone), else None."""
    if not reaches(MAX_BATCH):
        return None
    lo, hi = 1, MAX_BATCH
    while lo < hi:
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if reaches(mid) else (mid + 1, hi)
    return lo


def decode_roofline(
    arch: Architecture, precision: str, batch: int, context_tokens: int = 0, gpu_id: str = "h100"
) -> DecodeRoofline:
    """Decode at a batch on the roofline; the batch at which it would cross the ridge."""
    weights = _served(arch, precision, gpu_id, _point(arch, precision, gpu_id, batch, 0), 0)
    with_kv = (
        _served(arch, precision, gpu_id, _point(arch, precision, gpu_id, batch, context_tokens), context_tokens)
        if context_tokens
        else None
    )
    kv_seq = kv_cache_bytes(arch, KV_PRECISION, context_tokens, 1) if context_tokens else 0
    limit = compute.inference_flops(arch.active_parameters) / kv_seq if kv_seq else None
    alone, with_kv_ridge, fits = _across_batches(arch, precision, gpu_id, context_tokens)
    return DecodeRoofline(
        model=arch.name,
        precision=precision,
        roofline=compute.roofline(gpu_id, precision, weights.point.intensity),
        weights_only=weights,
        with_kv=with_kv,
        context_tokens=context_tokens,
        batch_at_ridge=alone,
        batch_at_ridge_with_kv=with_kv_ridge,
        kv_limit_intensity=limit,
        max_batch_fits=fits,
        ridge_verdict=_ridge_verdict(alone, with_kv_ridge, fits, context_tokens, gpu_id.upper()),
    )


@lru_cache(maxsize=256)
def _across_batches(
    arch: Architecture, precision: str, gpu_id: str, context_tokens: int
) -> tuple[int | None, int | None, int | None]:
    """What a roofline answer holds whatever its batch: the batch at the ridge, weights alone and with KV caches,
    and the largest batch that fits. Three searches of a dozen plans each, computed once for a model, precision,
    GPU and context and kept (the last 256): a learner moving the batch changes none of them."""
    ridge = compute.ridge(gpu_id, precision)
    alone = _first_batch(lambda b: _point(arch, precision, gpu_id, b, 0).point.intensity >= ridge)
    with_kv = (
        _first_batch(lambda b: _point(arch, precision, gpu_id, b, context_tokens).point.intensity >= ridge)
        if context_tokens
        else None
    )
    return alone, with_kv, _max_batch_fits(arch, precision, gpu_id, context_tokens)


def _max_batch_fits(arch: Architecture, precision: str, gpu_id: str, context_tokens: int) -> int | None:
    """The largest batch a serving plan of this model holds on one GPU with `context_tokens` of KV cache each."""
    capacity = get_gpu(gpu_id).memory_bytes

    def fits(batch: int) -> bool:
        req = PlanRequest.model_validate(
            {"model": arch.id if arch.id != "custom" else arch, "precision": precision, "gpu": gpu_id,
             "batch_size": batch, "context_tokens": max(1, context_tokens), "prompt_tokens": max(1, context_tokens)}
        )
        return total(req.architecture, Knobs.of(req)) <= capacity

    if not fits(1):
        return None
    lo, hi = 1, 4096
    if fits(hi):
        return hi
    while lo < hi:
        mid = (lo + hi + 1) // 2
        lo, hi = (mid, hi) if fits(mid) else (lo, mid - 1)
    return lo


def _ridge_verdict(alone: int | None, with_kv: int | None, fits: int | None, context: int, gpu: str) -> str:
    """One answer: where decode would reach the ridge on paper, and whether a batch that large can run."""
    if alone is None:
        return "Decode never reaches the ridge, whatever the batch."
    paper = f"Weights alone, decode reaches the ridge at a batch of {alone:,}"
    if not context:
        room = "" if fits is None or fits >= alone else f"; but only {fits:,} sequences fit on one {gpu}"
        return paper + room + "."
    most = "not one sequence fits" if fits is None else f"at most {fits:,} sequences fit"
    if with_kv is None:
        return (
            f"{paper}; reading each sequence's KV cache of {plural(context, 'token')} as well, it never does, "
            f"whatever the batch: decode stays memory-bound ({most} on one {gpu})."
        )
    kv = f"; reading each sequence's KV cache of {plural(context, 'token')} as well, at {with_kv:,}"
    needed = with_kv
    if fits is None:
        room = f", and not one sequence fits on one {gpu}"
    elif fits < needed:
        room = f", and at most {fits:,} sequences fit on one {gpu}: there decode stays memory-bound"
    else:
        room = f", a batch that fits on one {gpu} (up to {fits:,} do)"
    return paper + kv + room + "."
