"""A plan: a model run on some GPUs, with what each GPU holds, how fast it goes, and why, in sentences."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field, PrivateAttr

from app.engine import compute, explanation, memory, training_speed
from app.engine.errors import DoesNotFit
from app.engine.figures import ServeFigures, TrainFigures
from app.engine.hardware import GPU
from app.engine.memory import Knobs, MemoryBreakdown
from app.engine.models import Architecture
from app.engine.placement import COMPONENTS, NodeLoad, spread
from app.engine.text import gb, num, sci, seconds
from app.engine.training_state import training_precision, training_state
from app.engine.units import SECONDS_PER_HOUR
from app.engine.workload import PlanRequest

__all__ = ["Plan", "PlanRequest", "ServeFigures", "TrainFigures", "make_plan", "node_load", "plan_report"]

Bottleneck = Literal["capacity", "compute", "memory-bandwidth"]


class Plan(BaseModel):
    """The answer of POST /api/plan: memory per GPU, the verdict, speed, and the reasons in sentences."""

    fits: bool = Field(description="True when one GPU's share fits in its memory")
    per_gpu: MemoryBreakdown = Field(description="Bytes on each GPU, by component")
    min_gpus: int | None = Field(
        description="Fewest GPUs at which the same plan fits (serving: a count that splits the attention heads "
        "evenly), or null if none do"
    )
    bottleneck: Bottleneck = Field(
        description="capacity if it does not fit; else what sets the time of decode (serve) or a step (train)"
    )
    serve: ServeFigures | None = Field(description="Serving speed (serve mode, fitting or not), else null")
    train: TrainFigures | None = Field(description="Training time (train mode, fitting or not), else null")
    explanation: list[str] = Field(description="Every number above, derived in sentences")

    _request: PlanRequest = PrivateAttr(default_factory=PlanRequest)

    @property
    def request(self) -> PlanRequest:
        """The request this plan answers."""
        return self._request


def _times(b: compute.Bound, n: int) -> compute.Bound:
    """`n` passes of the same bound, one after another."""
    return compute.bound(
        b.compute_seconds * n, b.memory_seconds * n, b.communication_seconds * n, b.overhead_seconds * n
    )


def serve_bounds(
    arch: Architecture, req: PlanRequest, mem: MemoryBreakdown, gpu: GPU
) -> tuple[compute.Bound, compute.Bound]:
    """Prefill and decode-step bounds, as a serving stack runs them (compute.serve_step): the prefill of the
    batch's prompts in chunks of at most STEP_TOKEN_BUDGET tokens, each reading this GPU's weights; a decode
    step reading the weights and the KV cache."""
    tp = req.gpus
    tokens = req.batch_size * req.prompt_tokens
    chunks = -(-tokens // compute.STEP_TOKEN_BUDGET)
    chunk = -(-tokens // chunks)
    attention = compute.attention_flops(arch, req.prompt_tokens, req.batch_size) / chunks
    one = compute.serve_step(
        arch, gpu, req.precision, tp, chunk, mem.weights * compute.weight_share_read(arch, chunk, req.precision),
        attention, req.mfu,
    )
    step = compute.serve_step(
        arch, gpu, req.precision, tp, req.batch_size,
        mem.weights * compute.weight_share_read(arch, req.batch_size, req.precision) + mem.kv_cache,
        compute.decode_attention_flops(arch, req.context_tokens, req.batch_size), req.mfu,
    )
    return _times(one, chunks), step


def _serve_figures(req: PlanRequest, pre: compute.Bound, step: compute.Bound, gpu: GPU) -> ServeFigures:
    """Serving speed from the two phases."""
    return ServeFigures(
        prefill_seconds=pre.seconds,
        decode_seconds_per_token=step.seconds,
        tokens_per_second=1 / step.seconds,
        throughput_tokens_per_second=req.batch_size / step.seconds,
        request_seconds=pre.seconds + req.output_tokens * step.seconds,
        prefill=pre,
        decode=step,
        efficiency=compute.serving_efficiency(gpu, req.mfu),
    )


def _train_figures(arch: Architecture, req: PlanRequest, gpu: GPU) -> TrainFigures:
    """Training time: the step model's own MFU (or the request's), applied to model FLOPs."""
    speed = training_speed.training_speed(arch, req, gpu)
    mfu = speed.mfu if req.mfu is None else req.mfu
    per_token = speed.model_flops_per_token
    flops = per_token * req.train_tokens
    recompute = {"none": 0.0, "selective": 1.0, "full": 1.0}[req.activation_checkpointing]
    attention = training_speed.attention_forward_flops_per_token(arch, req.context_tokens)
    extra = (2 * arch.active_parameters if req.activation_checkpointing == "full" else 0.0) + recompute * attention
    hardware = (per_token + extra) * req.train_tokens
    secs = compute.compute_seconds(flops, req.gpus, speed.peak, mfu)
    return TrainFigures(
        flops=flops,
        hardware_flops=hardware,
        hfu=mfu * hardware / flops,
        mfu=mfu,
        mfu_given=req.mfu is not None,
        speed=speed,
        seconds=secs,
        tokens_per_second=req.train_tokens / secs,
        gpu_hours=req.gpus * secs / SECONDS_PER_HOUR,
    )


def _train_peak(gpu: GPU, req: PlanRequest) -> float:
    """Peak FLOP/s the MFU is taken against (adam-fp32 runs as TF32; fp8 is bf16 × fp8_speedup)."""
    return compute.training_peak(gpu, training_precision(req.optimizer, req.precision), req.fp8_speedup)


def _train_step(
    arch: Architecture, req: PlanRequest, mem: MemoryBreakdown, mfu: float, gpu: GPU
) -> compute.Bound:
    """One step on one GPU: its FLOPs against the bytes it moves.

    Bytes: the full weights read three times (forward, and backward for activation and weight
    gradients), gradients written and read, optimizer state read and written, activations written
    and read.
    """
    tokens = req.batch_size * req.context_tokens
    flops = compute.training_flops(arch.active_parameters, tokens)
    state = training_state(req.optimizer, req.precision)
    weights_read = compute.TRAIN_STEP_WEIGHT_READS * arch.parameters * state.weights
    moved = weights_read + 2 * (mem.gradients + mem.optimizer + mem.activations + mem.loss_head)
    return compute.bound(flops / (_train_peak(gpu, req) * mfu), moved / gpu.bandwidth)


def make_plan(req: PlanRequest) -> Plan:
    """Plan a request: memory on each GPU, whether it fits, how fast it runs, and why."""
    arch, gpu = req.architecture, req.hardware
    knobs = Knobs.of(req)
    capacity = gpu.memory_bytes
    mem = memory.breakdown(arch, knobs, capacity)
    fits = mem.total <= capacity
    lines = explanation.model_sentences(arch, req, mem)
    serve = train = None
    if req.mode == "serve":
        pre, step = serve_bounds(arch, req, mem, gpu)
        serve, binds = _serve_figures(req, pre, step, gpu), step.binds
        speed = explanation.serve_sentences(req, pre, step, mem, gpu)
    else:
        train = _train_figures(arch, req, gpu)
        binds = _train_step(arch, req, mem, train.mfu, gpu).binds
        speed = explanation.train_sentences(arch, req, train, gpu)
    fewest = memory.min_gpus(arch, knobs, capacity)
    lines += [memory.verdict(mem), *([] if fits else explanation.fix_sentences(req, fewest)), *speed]
    plan = Plan(
        fits=fits,
        per_gpu=mem,
        min_gpus=fewest,
        bottleneck=binds if fits else "capacity",
        serve=serve,
        train=train,
        explanation=lines,
    )
    plan._request = req
    return plan


def node_load(plan_or_request: Plan | PlanRequest) -> NodeLoad:
    """What dgx-1's eight GPUs hold for a plan; beyond 8 GPUs, the first node's eight."""
    plan = plan_or_request if isinstance(plan_or_request, Plan) else make_plan(plan_or_request)
    req, mem = plan.request, plan.per_gpu
    shares = {c: getattr(mem, c) for c in COMPONENTS}
    verb = "serving" if req.mode == "serve" else "training"
    activity = f"{verb} {req.architecture.name} ({req.precision}) on {num(req.gpus)} GPU" + (
        "s" if req.gpus > 1 else ""
    )
    if req.gpus > 8:
        activity += ", the first 8 shown"
    if plan.fits and req.mode == "serve":
        activity += ": weights loaded, idle until a request arrives"
    why = "" if plan.fits else _overflow_reason(mem)
    return spread(
        shares,
        req.gpus,
        activity=activity,
        utilisation=plan_busy(plan),
        why=why,
        capacity=mem.capacity,
        gpu=req.hardware,
    )


def plan_busy(plan: Plan) -> float:
    """The busy share a plan alone gives its GPUs: a training job that fits runs fed, flat out (1); a
    serving plan has weights loaded but no traffic of its own (0: the serving run adds arrivals); a plan
    that does not fit never starts (0)."""
    return 1.0 if plan.fits and plan.request.mode == "train" else 0.0


def _overflow_reason(mem: MemoryBreakdown) -> str:
    """Which GPU overflows, by how much, and its largest part."""
    largest = max(COMPONENTS, key=lambda c: int(getattr(mem, c)))
    return (
        f"{DoesNotFit(0, mem.total, mem.capacity)} Its largest part: {largest.replace('_', ' ')}, "
        f"{gb(getattr(mem, largest))}."
    )


def plan_report(plan: Plan) -> str:
    """The plan as a plain-text table with its explanation, for `gpu-classroom plan`."""
    req, mem = plan.request, plan.per_gpu
    head = (
        f"Plan: {req.mode} {req.architecture.name}, {req.precision}, "
        f"{num(req.gpus)} × {req.hardware.name}, "
        f"batch {req.batch_size}, {num(req.context_tokens)} tokens"
    )
    rows = [(c.replace("_", " "), int(getattr(mem, c))) for c in (*COMPONENTS, "total", "capacity")]
    table = [f"  {name:<12} {value:>18,} B {value / 1e9:>10.2f} GB" for name, value in rows]
    summary = [
        f"Fits: {'yes' if plan.fits else 'no'}   Fewest GPUs: {plan.min_gpus or 'none'}   "
        f"Bottleneck: {plan.bottleneck}"
    ]
    return "\n".join(
        [
            head,
            "",
            "Per GPU:",
            *table,
            "",
            *summary,
            *_speed_rows(plan),
            "",
            "Why:",
            *(f"  - {s}" for s in plan.explanation),
        ]
    )


def _speed_rows(plan: Plan) -> list[str]:
    """Serving or training figures as table rows."""
    if plan.serve is not None:
        s = plan.serve
        return [
            "",
            "Serving:",
            f"  {'prefill':<26} {seconds(s.prefill_seconds)}",
            f"  {'decode, a token':<26} {seconds(s.decode_seconds_per_token)}",
            f"  {'one sequence':<26} {s.tokens_per_second:,.1f} tokens/s",
            f"  {'whole batch':<26} {s.throughput_tokens_per_second:,.1f} tokens/s",
            f"  {'one request':<26} {seconds(s.request_seconds)}",
        ]
    if plan.train is not None:
        t = plan.train
        return [
            "",
            "Training:",
            f"  {'FLOPs':<26} {sci(t.flops)}",
            f"  {'time':<26} {seconds(t.seconds)}",
            f"  {'tokens/s':<26} {t.tokens_per_second:,.0f}",
            f"  {'GPU-hours':<26} {t.gpu_hours:,.0f}",
        ]
    return []
