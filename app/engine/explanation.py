"""A plan's explanation: the sentences that say where each of its figures comes from, in the order a learner
reads them (the model and its weights, the memory on each GPU and the verdict, then the speed)."""

from __future__ import annotations

from app.engine import activations, compute, memory
from app.engine.figures import TrainFigures
from app.engine.fixes import fixes
from app.engine.hardware import GPU, HBM_ACHIEVED_SHARE, peak_flops
from app.engine.memory import MemoryBreakdown
from app.engine.models import Architecture
from app.engine.text import billions, gb, num, pct, plural, sci, seconds, tflops
from app.engine.training_state import training_precision, training_state
from app.engine.workload import PlanRequest


def model_sentences(arch: Architecture, req: PlanRequest, mem: MemoryBreakdown) -> list[str]:
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
        training_precision(req.optimizer, req.precision) if req.mode == "train" else req.precision
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
        f"{num(per_token)} B a token; × {plural(kept, 'token')}{window} × {req.batch_size} {seqs} "
        f"= {gb(total)}."
    )


def _context_warnings(arch: Architecture, req: PlanRequest) -> list[str]:
    """Serving requests longer than the cache or than the model's context."""
    lines = []
    if req.prompt_tokens + req.output_tokens > req.context_tokens:
        lines.append(
            f"A request of {plural(req.prompt_tokens + req.output_tokens, 'token')} ({num(req.prompt_tokens)} in, "
            f"{num(req.output_tokens)} out) is longer than the "
            f"{plural(req.context_tokens, 'token')} cached per sequence: the cache would need to drop tokens."
        )
    if req.context_tokens > arch.context:
        lines.append(f"{arch.name} was trained for {num(arch.context)} tokens of context, fewer than asked.")
    return lines


def _state_sentences(arch: Architecture, req: PlanRequest, mem: MemoryBreakdown) -> list[str]:
    """Training state: weights + gradients + optimizer, summed, then sharded."""
    st = training_state(req.optimizer, req.precision)
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
    precision = training_precision(req.optimizer, req.precision)
    per_layer = activations.layer_activation_bytes(arch, precision, req.activation_checkpointing)
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


def fix_sentences(req: PlanRequest, fewest: int | None) -> list[str]:
    """The smallest change that fits, and up to two others."""
    found = fixes(req, fewest)
    if not found:
        return ["No single change makes it fit, not even 65,536 GPUs."]
    lines = [f"Smallest change that fits: {found[0].sentence}"]
    lines += [f"Or: {f.sentence}" for f in found[1:3]]
    return lines


def serve_sentences(
    req: PlanRequest, pre: compute.Bound, step: compute.Bound, mem: MemoryBreakdown, gpu: GPU
) -> list[str]:
    """Decode and prefill: which bound binds, the fixed cost of a pass, and the resulting speed."""
    arch = req.architecture
    achieved = gpu.bandwidth * HBM_ACHIEVED_SHARE
    read = step.memory_seconds * achieved
    binds = "memory bandwidth" if step.binds == "memory-bandwidth" else "compute"
    attention = compute.attention_flops(arch, req.prompt_tokens, req.batch_size)
    dense = compute.inference_flops(arch.active_parameters, req.batch_size * req.prompt_tokens)
    share = compute.serving_efficiency(gpu, req.mfu)
    lines = [
        f"Each decode step reads {gb(read)} per GPU. At the datasheet's {gpu.bandwidth / 1e12:.2f} TB/s that "
        f"would take {seconds(read / gpu.bandwidth)}; real decode kernels sustain about {pct(HBM_ACHIEVED_SHARE)} "
        f"of it ({achieved / 1e12:.2f} TB/s), so {seconds(step.memory_seconds)}, against "
        f"{seconds(step.compute_seconds)} of compute at {pct(share)} of {tflops(peak_flops(gpu, req.precision))}: "
        f"{binds} sets the pace.",
        f"Every forward pass also pays about {seconds(step.overhead_seconds)} of fixed cost (scheduling, kernel "
        f"launches, sampling): {seconds(step.seconds)} a step, {1 / step.seconds:,.1f} tokens/s for one "
        f"sequence, {req.batch_size / step.seconds:,.1f} for the batch.",
        f"Prefilling {num(req.batch_size * req.prompt_tokens)} prompt tokens takes {seconds(pre.seconds)} "
        f"({pre.binds}-bound, fixed cost included; attention, each token scoring those before it, adds "
        f"{pct(attention / dense)} to the 2 × parameters × tokens FLOPs).",
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


def train_sentences(arch: Architecture, req: PlanRequest, t: TrainFigures, gpu: GPU) -> list[str]:
    """Training FLOPs and time, from model FLOPs at the MFU (the engine's or the request's); where a step's time
    goes; hardware FLOPs and HFU."""
    gpus = "GPU" if req.gpus == 1 else "GPUs"
    working = training_precision(req.optimizer, req.precision)
    if working == "fp8" and "fp8" in gpu.peak_flops:
        of = (
            f"{tflops(peak_flops(gpu, 'bf16'))} (the bf16 peak) × {req.fp8_speedup:g} for fp8, "
            f"which speeds up the matrix multiplies only"
        )
    else:
        of = tflops(t.speed.peak)
    sp = t.speed
    tp = f", {seconds(sp.tensor_parallel_seconds)} of tensor-parallel collectives" if sp.tensor_parallel_seconds else ""
    attention = 3 * training_attention_per_token(arch, req.context_tokens)
    whose = "given in the request" if t.mfu_given else "the engine's figure for this layout"
    lines = [
        f"Training on {sci(req.train_tokens)} tokens takes 6 × {billions(arch.active_parameters)} × "
        f"{sci(req.train_tokens)} FLOPs plus causal attention forward and backward "
        f"({pct(attention / (6 * arch.active_parameters))} more at {num(req.context_tokens)} tokens) = "
        f"{sci(t.flops)} model FLOPs; at {pct(t.mfu)} MFU ({whose}) of {of} on {num(req.gpus)} {gpus} that is "
        f"{seconds(t.seconds)} ({num(t.gpu_hours)} GPU-hours).",
        f"A step of {sci(sp.tokens_per_step)} tokens takes each GPU {seconds(sp.matmul_seconds)} of matrix "
        f"multiplies at {pct(gpu.matmul_efficiency)} of peak, {seconds(sp.attention_seconds)} of attention at "
        f"{pct(gpu.attention_efficiency)}, {seconds(sp.other_seconds)} of memory-bound other work (norms, "
        f"activations, optimizer)"
        + tp
        + (f", idle {pct(sp.bubble)} of the step in the pipeline bubble" if sp.bubble else "")
        + (f", {seconds(sp.exposed_data_parallel_seconds)} of gradient and weight traffic the compute cannot hide"
           if sp.exposed_data_parallel_seconds else "")
        + f": {seconds(sp.step_seconds)}, an MFU of {pct(sp.mfu)}.",
    ]
    if sp.recompute_seconds > 0:
        lines.append(
            f"Recomputation ({req.activation_checkpointing}) costs {seconds(sp.recompute_seconds)} of that step; "
            f"the GPUs do {sci(t.hardware_flops)} hardware FLOPs in all, a hardware FLOPs utilisation (HFU) of "
            f"{pct(t.hfu)}; MFU counts only the model's FLOPs."
        )
    return lines


def training_attention_per_token(arch: Architecture, context: int) -> float:
    """Causal attention forward a token at a sequence length (app.engine.training_speed)."""
    return compute.attention_flops(arch, context) / context
