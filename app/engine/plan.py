"""A plan: a model run on some GPUs, with what each GPU holds, how fast it goes, and why, in sentences."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr

from app.engine import compute, memory
from app.engine.errors import DoesNotFit
from app.engine.fixes import fixes
from app.engine.hardware import GPU, get_gpu, peak_flops
from app.engine.memory import Knobs, MemoryBreakdown
from app.engine.models import Architecture
from app.engine.placement import COMPONENTS, NodeLoad, spread
from app.engine.text import billions, gb, num, pct, sci, seconds, tflops
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
    min_gpus: int | None = Field(description="Fewest GPUs at which the same plan fits, or null if none do")
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
    return compute.training_peak(gpu, memory.training_precision(req.optimizer, req.precision), req.fp8_speedup)


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
    state = memory.training_state(req.optimizer, req.precision)
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
    lines = _model_sentences(arch, req, mem)
    serve = train = None
    if req.mode == "serve":
        pre, step = serve_bounds(arch, req, mem)
        serve, binds = _serve_figures(req, pre, step), step.binds
        speed = _serve_sentences(req, pre, step, mem)
    else:
        train = _train_figures(arch, req)
        binds = _train_step(arch, req, mem).binds
        speed = _train_sentences(arch, req, train)
    fewest = memory.min_gpus(arch, knobs, capacity)
    lines += [memory.verdict(mem), *([] if fits else _fix_sentences(req, fewest)), *speed]
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


def _model_sentences(arch: Architecture, req: PlanRequest, mem: MemoryBreakdown) -> list[str]:
    """The model, its weights and (serving) its KV cache, in sentences."""
    lines = [_weights_sentence(arch, req)]
    if req.mode == "serve":
        lines += [_kv_sentence(arch, req)] + _split_sentences(arch, req, mem) + _context_warnings(arch, req)
    else:
        lines += _state_sentences(arch, req, mem) + _activation_sentences(arch, req, mem)
    return lines


def _weights_sentence(arch: Architecture, req: PlanRequest) -> str:
    """Parameters × bytes = weights."""
    active = (
        f", of which {billions(arch.active_parameters)} are used for each token "
        f"({arch.experts_per_token} of {arch.experts} experts)"
        if arch.experts > 1
        else ""
    )
    precision = (
        memory.training_precision(req.optimizer, req.precision) if req.mode == "train" else req.precision
    )
    nbytes = memory.weight_bytes(arch, precision)
    scales = memory.scale_bytes(arch, precision)
    q = memory.QUANTIZATION[precision]
    size = f"{scales:,} bytes" if scales < 1e6 else f"{scales / 1e6:,.1f} MB" if scales < 1e9 else gb(scales, 2)
    extra = f", of which {size} are quantization scales ({q.note})" if scales else ""
    each = memory.bytes_per_parameter(precision)
    unit = "byte" if each == 1 else "bytes"
    if precision not in memory.QUANTIZED:
        return (
            f"{arch.name} has {billions(arch.parameters)} parameters{active}; at {precision} "
            f"({each:g} {unit} each) its weights take {gb(nbytes)}{extra}."
        )
    quantized = memory.quantized_parameters(arch, precision)
    kept = arch.parameters - quantized
    return (
        f"{arch.name} has {billions(arch.parameters)} parameters{active}. Like real {precision} checkpoints "
        f"this quantizes {memory.QUANTIZED_PARTS} ({billions(quantized)} parameters at {each:g} {unit} each) "
        f"and keeps {memory.KEPT_16BIT_PARTS} in 16 bits ({billions(kept)} at 2 bytes): "
        f"{gb(nbytes)} of weights{extra}."
    )


def _split_sentences(arch: Architecture, req: PlanRequest, mem: MemoryBreakdown) -> list[str]:
    """Tensor parallelism: how the weights and KV heads divide over the GPUs."""
    if req.gpus == 1:
        return []
    lines = [
        f"Tensor parallelism splits both over {num(req.gpus)} GPUs: {gb(mem.weights)} of weights and "
        f"{gb(mem.kv_cache)} of KV cache on each."
    ]
    if arch.heads % req.gpus:
        lines.append(
            f"{arch.heads} attention heads do not divide evenly over {num(req.gpus)} GPUs; real frameworks "
            "need a divisor (or pipeline parallelism across nodes), so read this as an even split."
        )
    if req.gpus > arch.n_kv_heads:
        lines.append(
            f"With {arch.n_kv_heads} KV heads over {num(req.gpus)} GPUs each GPU keeps a whole KV head: "
            "some are replicated."
        )
    return lines


def _kv_sentence(arch: Architecture, req: PlanRequest) -> str:
    """KV cache from the KV heads (not all heads)."""
    per_token = memory.kv_bytes_per_token(arch, req.kv_precision)
    total = memory.kv_cache_bytes(arch, req.kv_precision, req.context_tokens, req.batch_size)
    seqs = "sequence" if req.batch_size == 1 else "sequences"
    width = memory.bytes_per_parameter(req.kv_precision)
    value = f"{arch.n_head_dim} values × {width:g} {'byte' if width == 1 else 'bytes'} in {req.kv_precision}"
    if req.kv_precision in ("int8", "int4"):
        value = f"({value} + a 2-byte scale)"
    kept = memory.cached_tokens(arch, req.context_tokens)
    window = (
        f" (its sliding window: each layer attends to the last {num(kept)} of the "
        f"{num(req.context_tokens)}, so the cache keeps no more)"
        if kept < req.context_tokens
        else ""
    )
    return (
        f"The KV cache keeps 2 (K and V) × {arch.layers} layers × {arch.n_kv_heads} KV heads × {value} = "
        f"{num(per_token)} B a token; × {num(kept)} tokens{window} × {req.batch_size} {seqs} "
        f"= {gb(total)}."
    )


def _context_warnings(arch: Architecture, req: PlanRequest) -> list[str]:
    """Serving requests longer than the cache or than the model's context."""
    lines = []
    if req.prompt_tokens + req.output_tokens > req.context_tokens:
        lines.append(
            f"A request of {num(req.prompt_tokens)} + {num(req.output_tokens)} tokens is longer than the "
            f"{num(req.context_tokens)} tokens cached per sequence: the cache would need to drop tokens."
        )
    if req.context_tokens > arch.context:
        lines.append(f"{arch.name} was trained for {num(arch.context)} tokens of context, fewer than asked.")
    return lines


def _state_sentences(arch: Architecture, req: PlanRequest, mem: MemoryBreakdown) -> list[str]:
    """Training state: weights + gradients + optimizer, summed, then sharded."""
    st = memory.training_state(req.optimizer, req.precision)
    full = arch.parameters * st.total
    lines = [
        f"{st.note} keeps {st.weights:g} (weights) + {st.gradients:g} (gradients) + {st.optimizer:g} "
        f"(optimizer state and fp32 master copy) = {st.total:g} B a parameter: {gb(full)} before activations."
    ]
    sharded = mem.weights + mem.gradients + mem.optimizer
    if req.sharding != "none" and req.gpus > 1:
        lines.append(
            f"{req.sharding.replace('zero', 'ZeRO-')} over {num(req.gpus)} GPUs: {gb(sharded)} a GPU "
            "before activations."
        )
    elif req.gpus > 1:
        lines.append(f"Without sharding each of the {num(req.gpus)} data-parallel GPUs keeps all of it.")
    return lines


_KEEPS = {
    "none": "without checkpointing each layer keeps every tensor its backward pass needs",
    "selective": "selective checkpointing keeps each layer's input and its matrix multiplies' outputs and "
    "recomputes norms, activation functions and attention",
    "full": "full checkpointing keeps each layer's input only and reruns the layer in the backward pass",
}


def _activation_sentences(arch: Architecture, req: PlanRequest, mem: MemoryBreakdown) -> list[str]:
    """Training activations from the tensors a layer keeps, and the loss head."""
    precision = memory.training_precision(req.optimizer, req.precision)
    per_layer = memory.layer_activation_bytes(arch, precision, req.activation_checkpointing)
    seqs = "sequence" if req.batch_size == 1 else "sequences"
    tokens = req.batch_size * req.context_tokens
    working = (
        ""
        if req.activation_checkpointing == "none"
        else "; the layer being recomputed holds its full set on top"
    )
    vocab = f"{num(arch.vocab)}-entry vocabulary"
    return [
        f"Activations for {req.batch_size} {seqs} of {num(req.context_tokens)} tokens on each GPU: "
        f"{_KEEPS[req.activation_checkpointing]}, {num(per_layer)} B a token a layer (FlashAttention "
        f"never stores the attention scores){working}: {gb(mem.activations)} over {arch.layers} layers.",
        f"The loss head holds the logits of all {num(tokens)} tokens over the {vocab}, in 16 and "
        f"32 bits, and their fp32 gradient: {gb(mem.loss_head)}.",
    ]


def _fix_sentences(req: PlanRequest, fewest: int | None) -> list[str]:
    """The smallest change that fits, and up to two others."""
    found = fixes(req, fewest)
    if not found:
        return ["No single change makes it fit, not even 65,536 GPUs."]
    lines = [f"Smallest change that fits: {found[0].sentence}"]
    lines += [f"Or: {f.sentence}" for f in found[1:3]]
    return lines


def _serve_sentences(
    req: PlanRequest, pre: compute.Bound, step: compute.Bound, mem: MemoryBreakdown
) -> list[str]:
    """Decode and prefill: which bound binds, and the resulting speed."""
    gpu, arch = get_gpu(req.gpu), req.architecture
    read = step.memory_seconds * gpu.bandwidth
    binds = "memory bandwidth" if step.binds == "memory-bandwidth" else "compute"
    attention = compute.attention_flops(arch, req.prompt_tokens, req.batch_size)
    dense = compute.inference_flops(arch.active_parameters, req.batch_size * req.prompt_tokens)
    lines = [
        f"Each decode step reads {gb(read)} per GPU at {gpu.bandwidth / 1e12:.2f} TB/s: "
        f"{seconds(step.memory_seconds)}, against {seconds(step.compute_seconds)} of compute at "
        f"{pct(req.mfu)} of {tflops(peak_flops(gpu, req.precision))}, so {binds} sets the pace: "
        f"{1 / step.seconds:,.1f} tokens/s for one sequence, "
        f"{req.batch_size / step.seconds:,.1f} for the batch.",
        f"Prefilling {num(req.batch_size * req.prompt_tokens)} prompt tokens takes {seconds(pre.seconds)} "
        f"({pre.binds}-bound; attention, each token scoring those before it, adds {pct(attention / dense)} "
        "to the 2 × parameters × tokens FLOPs).",
        f"A request of {num(req.prompt_tokens)} prompt and {num(req.output_tokens)} output tokens takes "
        f"{seconds(pre.seconds + req.output_tokens * step.seconds)}.",
    ]
    if step.communication_seconds > 0:
        calls = 2 * arch.layers
        lines.append(
            f"Tensor-parallel all-reduces add {seconds(step.communication_seconds)} to each step: "
            f"{num(calls)} calls (two a layer), each paying about "
            f"{seconds(compute.all_reduce_latency(req.gpus))} of latency before its bytes move."
        )
    return lines


def _train_sentences(arch: Architecture, req: PlanRequest, t: TrainFigures) -> list[str]:
    """Training FLOPs and time, from model FLOPs at the MFU; hardware FLOPs and HFU beside them."""
    gpu = get_gpu(req.gpu)
    peak = _train_peak(gpu, req)
    gpus = "GPU" if req.gpus == 1 else "GPUs"
    working = memory.training_precision(req.optimizer, req.precision)
    if working == "fp8" and "fp8" in gpu.peak_flops:
        of = (
            f"{tflops(peak_flops(gpu, 'bf16'))} (the bf16 peak) × {req.fp8_speedup:g} for fp8, "
            f"which speeds up the matrix multiplies only"
        )
    else:
        of = tflops(peak)
    lines = [
        f"Training on {sci(req.train_tokens)} tokens takes 6 × {billions(arch.active_parameters)} × "
        f"{sci(req.train_tokens)} = {sci(t.flops)} model FLOPs; at {pct(req.mfu)} MFU of {of} on "
        f"{num(req.gpus)} {gpus} that is {seconds(t.seconds)} ({num(t.gpu_hours)} GPU-hours)."
    ]
    if req.activation_checkpointing == "full":
        lines.append(
            f"Full checkpointing reruns each layer's forward pass: the GPUs do 8 × N × D = "
            f"{sci(t.hardware_flops)} hardware FLOPs in that time, a hardware FLOPs utilisation (HFU) "
            f"of {pct(t.hfu)}; MFU counts only the model's 6 × N × D."
        )
    return lines


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
