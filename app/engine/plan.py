"""A plan: a model run on some GPUs, with what each GPU holds, how fast it goes, and why, in sentences."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr

from app.engine import compute, explanation, memory
from app.engine.errors import DoesNotFit
from app.engine.hardware import GPU, get_gpu
from app.engine.memory import Knobs, MemoryBreakdown
from app.engine.models import Architecture
from app.engine.placement import COMPONENTS, NodeLoad, spread
from app.engine.text import gb, num, sci, seconds
from app.engine.training_state import training_precision, training_state
from app.engine.units import SECONDS_PER_HOUR
from app.engine.workload import PlanRequest

__all__ = ["Plan", "PlanRequest", "ServeFigures", "TrainFigures", "make_plan", "node_load", "plan_report"]

Bottleneck = Literal["capacity", "compute", "memory-bandwidth"]


class ServeFigures(BaseModel):
    """How fast the plan serves."""

    model_config = ConfigDict(frozen=True)

    prefill_seconds: float = Field(
        description="Prefill of the whole batch's prompts at once: time to first token"
    )
    decode_seconds_per_token: float = Field(description="One decode step: one new token for every sequence")
    tokens_per_second: float = Field(description="Output tokens a second for one sequence")
    throughput_tokens_per_second: float = Field(description="Output tokens a second for the whole batch")
    request_seconds: float = Field(description="Prefill plus every output token of one request")


class TrainFigures(BaseModel):
    """How long the plan takes to train."""

    model_config = ConfigDict(frozen=True)

    flops: float = Field(description="Model FLOPs, 6·N·D, N = active parameters (what MFU counts)")
    hardware_flops: float = Field(
        description="FLOPs the GPUs run: 8·N·D with full checkpointing (its forward pass runs twice)"
    )
    hfu: float = Field(description="Hardware FLOPs utilisation: MFU × hardware FLOPs ÷ model FLOPs")
    seconds: float = Field(description="Model FLOPs ÷ (GPUs × peak × MFU)")
    tokens_per_second: float = Field(description="Training tokens a second, all GPUs together")
    gpu_hours: float = Field(description="GPUs × hours")


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


def serve_bounds(
    arch: Architecture, req: PlanRequest, mem: MemoryBreakdown
) -> tuple[compute.Bound, compute.Bound]:
    """Prefill and decode-step bounds: each reads this GPU's weights (and the KV cache when decoding)."""
    gpu, active, tp = get_gpu(req.gpu), arch.active_parameters, req.gpus
    tokens = req.batch_size * req.prompt_tokens
    pre = compute.prefill(
        gpu,
        req.precision,
        mem.weights * compute.weight_share_read(arch, tokens, req.precision),
        active,
        tokens,
        tp,
        req.mfu,
        compute.tensor_parallel_seconds(arch, tokens, tp, req.precision),
        compute.attention_flops(arch, req.prompt_tokens, req.batch_size),
    )
    step = compute.decode_step(
        gpu,
        req.precision,
        mem.weights * compute.weight_share_read(arch, req.batch_size, req.precision) + mem.kv_cache,
        active,
        req.batch_size,
        tp,
        req.mfu,
        compute.tensor_parallel_seconds(arch, req.batch_size, tp, req.precision),
    )
    return pre, step


def _serve_figures(req: PlanRequest, pre: compute.Bound, step: compute.Bound) -> ServeFigures:
    """Serving speed from the two phases."""
    return ServeFigures(
        prefill_seconds=pre.seconds,
        decode_seconds_per_token=step.seconds,
        tokens_per_second=1 / step.seconds,
        throughput_tokens_per_second=req.batch_size / step.seconds,
        request_seconds=pre.seconds + req.output_tokens * step.seconds,
    )


def _train_peak(gpu: GPU, req: PlanRequest) -> float:
    """Peak FLOP/s the MFU is taken against (adam-fp32 runs as TF32; fp8 is bf16 × fp8_speedup)."""
    return compute.training_peak(gpu, training_precision(req.optimizer, req.precision), req.fp8_speedup)


def _train_figures(arch: Architecture, req: PlanRequest) -> TrainFigures:
    """Training FLOPs and time from peak × MFU: model FLOPs, whatever the recomputation."""
    flops = compute.training_flops(arch.active_parameters, req.train_tokens)
    hardware = compute.hardware_training_flops(
        arch.active_parameters, req.train_tokens, req.activation_checkpointing
    )
    secs = compute.compute_seconds(flops, req.gpus, _train_peak(get_gpu(req.gpu), req), req.mfu)
    return TrainFigures(
        flops=flops,
        hardware_flops=hardware,
        hfu=req.mfu * hardware / flops,
        seconds=secs,
        tokens_per_second=req.train_tokens / secs,
        gpu_hours=req.gpus * secs / SECONDS_PER_HOUR,
    )


def _train_step(arch: Architecture, req: PlanRequest, mem: MemoryBreakdown) -> compute.Bound:
    """One step on one GPU: its FLOPs against the bytes it moves.

    Bytes: the full weights read three times (forward, and backward for activation and weight
    gradients), gradients written and read, optimizer state read and written, activations written
    and read.
    """
    gpu = get_gpu(req.gpu)
    tokens = req.batch_size * req.context_tokens
    flops = compute.training_flops(arch.active_parameters, tokens)
    state = training_state(req.optimizer, req.precision)
    weights_read = compute.TRAIN_STEP_WEIGHT_READS * arch.parameters * state.weights
    moved = weights_read + 2 * (mem.gradients + mem.optimizer + mem.activations + mem.loss_head)
    return compute.bound(flops / (_train_peak(gpu, req) * req.mfu), moved / gpu.bandwidth)


def make_plan(req: PlanRequest) -> Plan:
    """Plan a request: memory on each GPU, whether it fits, how fast it runs, and why."""
    arch = req.architecture
    knobs = Knobs.of(req)
    capacity = get_gpu(req.gpu).memory_bytes
    mem = memory.breakdown(arch, knobs, capacity)
    fits = mem.total <= capacity
    lines = explanation.model_sentences(arch, req, mem)
    serve = train = None
    if req.mode == "serve":
        pre, step = serve_bounds(arch, req, mem)
        serve, binds = _serve_figures(req, pre, step), step.binds
        speed = explanation.serve_sentences(req, pre, step, mem)
    else:
        train = _train_figures(arch, req)
        binds = _train_step(arch, req, mem).binds
        speed = explanation.train_sentences(arch, req, train, _train_peak(get_gpu(req.gpu), req))
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
        gpu=get_gpu(req.gpu),
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
        f"{num(req.gpus)} × {get_gpu(req.gpu).name}, "
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
