"""Drill: will it fit? A model run on some H100s; fits yes or no, memory per GPU, and the largest part."""

from __future__ import annotations

import random
from collections.abc import Mapping
from typing import Any

from app.drills.base import (
    SIZE_EXAMPLE,
    Choice,
    Drill,
    Feedback,
    Given,
    Part,
    Question,
    Row,
    Solution,
    Variant,
    distinct,
)
from app.drills.will_it_fit_mistakes import per_gpu_variants
from app.engine import memory
from app.engine.fixes import fixes
from app.engine.models import CATALOG, Architecture, get_model
from app.engine.placement import COMPONENT_LABELS, COMPONENTS, NodeLoad
from app.engine.plan import Plan, PlanRequest, make_plan, node_load
from app.engine.text import billions, gb, num
from app.engine.training_state import training_state
from app.engine.workload import splits_heads

NAME = "will-it-fit"
PER_GPU_TOLERANCE = 0.03
MARGIN = 0.06  # no question sits within 6 % of the GPU's capacity: the verdict must not hang on rounding
CLEAR_LEAD = 1.15  # the largest part is at least 15 % above the next

SERVE_PRECISIONS = ("bf16", "bf16", "fp8", "int4")
SERVE_BATCHES = (1, 4, 8, 16, 32, 64, 128)
SERVE_CONTEXTS = (2048, 4096, 8192, 16384, 32768, 65536, 131072)
TRAIN_BATCHES = (1, 2, 4)
TRAIN_CONTEXTS = (1024, 2048, 4096, 8192)
GPU_COUNTS = (1, 2, 4, 8)
SHARDINGS = ("none", "zero1", "zero2", "zero3")
SHARDING_TEXT = {
    "none": "no sharding: every GPU keeps the whole training state",
    "zero1": "ZeRO-1: the optimizer state is split over the GPUs",
    "zero2": "ZeRO-2: the optimizer state and the gradients are split over the GPUs",
    "zero3": "ZeRO-3: weights, gradients and optimizer state are all split over the GPUs",
}
LOWER = {
    "weights": "the weights",
    "kv_cache": "the KV cache",
    "activations": "the activations",
    "loss_head": "the loss head",
    "gradients": "the gradients",
    "optimizer": "the optimizer state",
    "runtime": "the runtime",
}
NAMES = {
    "kv_cache": ["kv", "kv cache", "kvcache", "cache", "key value cache"],
    "optimizer": ["optimizer", "optimiser", "optimizer state", "adam", "adam state", "optimizer states"],
    "activations": ["activation", "activations", "workspace", "prefill workspace"],
    "weights": ["weight", "weights", "parameters", "model weights"],
    "gradients": ["gradient", "gradients", "grads"],
    "loss_head": ["loss head", "loss", "logits", "logit", "lm head", "head"],
    "runtime": ["runtime", "cuda", "cuda context"],
}


def _serve(rng: random.Random, model: str) -> dict[str, Any]:
    arch = get_model(model)
    return {
        "mode": "serve",
        "precision": rng.choice(SERVE_PRECISIONS),
        "gpus": rng.choice([n for n in GPU_COUNTS if splits_heads(arch, n)]),  # tensor parallel: they divide the heads
        "batch_size": rng.choice(SERVE_BATCHES),
        "context_tokens": rng.choice([c for c in SERVE_CONTEXTS if c <= _taught_context(arch)]),
    }


def _taught_context(arch: Architecture) -> int:
    """The longest context a question may ask for: the model's own, and for a model with sliding-window attention
    (Mistral 7B: 4,096) no more than the window, since the lessons teach a KV cache that keeps every token; past
    the window it keeps fewer, a fact no step teaches that would change the answer (issue 27, W32)."""
    return arch.context if arch.sliding_window is None else min(arch.context, arch.sliding_window)


def _train(rng: random.Random, model: str) -> dict[str, Any]:
    gpus = rng.choice(GPU_COUNTS)
    return {
        "mode": "train",
        "precision": "bf16",
        "optimizer": "adam",
        "gpus": gpus,
        "sharding": "none" if gpus == 1 else rng.choice(SHARDINGS),
        "batch_size": rng.choice(TRAIN_BATCHES),
        "context_tokens": rng.choice([c for c in TRAIN_CONTEXTS if c <= get_model(model).context]),
        "activation_checkpointing": rng.random() < 0.5,
    }


def _request(parameters: Mapping[str, Any]) -> PlanRequest:
    fields = {k: v for k, v in parameters.items() if k in PlanRequest.model_fields}
    return PlanRequest(**fields)


def _parts_of(mem: memory.MemoryBreakdown) -> dict[str, int]:
    return {c: int(getattr(mem, c)) for c in COMPONENTS}


def _clear(mem: memory.MemoryBreakdown) -> bool:
    """Far enough from the capacity, and one part clearly the largest."""
    first, second = sorted(_parts_of(mem).values(), reverse=True)[:2]
    return abs(mem.total - mem.capacity) > MARGIN * mem.capacity and first > CLEAR_LEAD * second


def generate(rng: random.Random) -> Question:
    """A catalog model served or trained on 1 to 8 H100s; about half the questions fit."""
    serve, want_fit = rng.random() < 0.6, rng.random() < 0.5
    for tries in range(1000):
        model = rng.choice(sorted(CATALOG))
        parameters = {"model": model, **(_serve(rng, model) if serve else _train(rng, model))}
        mem = memory.per_gpu(_request(parameters))
        if _clear(mem) and ((mem.total <= mem.capacity) == want_fit or tries > 500):
            return _question(parameters, mem)
    raise RuntimeError("no clear will-it-fit question found")  # pragma: no cover - the space is large


def _question(parameters: dict[str, Any], mem: memory.MemoryBreakdown) -> Question:
    req = _request(parameters)
    gpus = f"{req.gpus} H100{'s' if req.gpus > 1 else ''}"
    return Question(
        drill=NAME,
        title=f"{'Serve' if req.mode == 'serve' else 'Train'} {req.architecture.name} on {gpus}",
        prompt=_prompt(req, gpus),
        givens=_givens(req, mem),
        parameters=parameters,
        parts=_parts(req, mem),
    )


def _prompt(req: PlanRequest, gpus: str) -> str:
    """The situation: the model, its precision, the GPUs, the batch and the context."""
    arch = req.architecture
    seqs = f"{num(req.batch_size)} sequence{'s' if req.batch_size > 1 else ''}"
    if req.mode == "serve":
        how = "" if req.gpus == 1 else " split tensor-parallel"
        many = f"{seqs} at once, each keeping" if req.batch_size > 1 else "one sequence at a time, keeping"
        return (
            f"Serve {arch.name} in {req.precision} on {gpus}{how}: {many} "
            f"{num(req.context_tokens)} tokens in a bf16 KV cache."
        )
    mode = req.activation_checkpointing
    recompute = "" if mode == "none" else f", with {mode} activation checkpointing"
    parallel = " (data parallel)" if req.gpus > 1 else ""
    return (
        f"Train {arch.name} with Adam in mixed precision on {gpus}{parallel}: {seqs} of "
        f"{num(req.context_tokens)} tokens on {'each GPU' if req.gpus > 1 else 'the GPU'}{recompute}."
    )


def _parts(req: PlanRequest, mem: memory.MemoryBreakdown) -> list[Part]:
    """Fits or not, the memory each GPU needs, and which of the parts on the GPU is the largest."""
    components = [c for c in COMPONENTS if getattr(mem, c) > 0]
    return [
        Part(
            id="fits",
            prompt="Does it fit in each GPU's memory?",
            kind="yes_no",
            choices=[Choice(value="yes", label="Yes, it fits"), Choice(value="no", label="No, it does not fit")],
        ),
        Part(
            id="per_gpu",
            prompt="Memory each GPU needs",
            kind="size",
            unit="GB",
            tolerance=PER_GPU_TOLERANCE,
            example=SIZE_EXAMPLE,
        ),
        Part(
            id="largest",
            prompt="Which part takes the most memory on a GPU?",
            kind="choice",
            choices=[Choice(value=c, label=_label(c, req.mode), names=NAMES[c]) for c in components],
        ),
    ]


def _label(component: str, mode: str, lower: bool = False) -> str:
    if component == "activations" and mode == "serve":
        return "the prefill workspace (activations)" if lower else "Prefill workspace (activations)"
    return LOWER[component] if lower else COMPONENT_LABELS[component]


def _take(component: str, mode: str) -> str:
    """'take' after a plural part (the weights), 'takes' after a singular one (the KV cache)."""
    plural = component in ("weights", "gradients") or (component == "activations" and mode == "train")
    return "take" if plural else "takes"


def _bytes(n: float) -> str:
    return f"{n:g} byte{'' if n == 1 else 's'}"


def _givens(req: PlanRequest, mem: memory.MemoryBreakdown) -> list[Given]:
    """The model's shape, what each part costs a parameter or a GPU, and the GPU."""
    arch = req.architecture
    experts = (
        f", of which {billions(arch.active_parameters)} are active for each token "
        f"({arch.experts_per_token} of {arch.experts} experts)"
        if arch.experts > 1 else ""
    )
    shape = (
        f"{arch.layers} layers, {arch.heads} attention heads, {arch.n_kv_heads} KV heads, "
        f"head dimension {arch.n_head_dim}"
    )
    return [
        Given(label="Model", text=f"{arch.name}: {num(arch.parameters)} parameters{experts}; {shape}"),
        *(_serve_givens(req, mem) if req.mode == "serve" else _train_givens(req, mem)),
        Given(label="Runtime", text=f"{gb(mem.runtime)} a GPU (CUDA context and libraries)"),
        Given(label="GPU", text=f"H100, planned at {gb(mem.capacity, 0)} of memory (the card holds 80 GiB)"),
    ]


def _serve_givens(req: PlanRequest, mem: memory.MemoryBreakdown) -> list[Given]:
    """Bytes a parameter at the precision (which parts a quantized checkpoint keeps in bf16), KV cache, workspace."""
    arch, q = req.architecture, memory.QUANTIZATION[req.precision]
    scales = f"; {q.note}" if q.granularity == "group" else ""
    kept = ""
    if req.precision in memory.QUANTIZED:
        quantized = memory.quantized_parameters(arch, req.precision)
        kept = (
            f" for the {num(quantized)} in the layers' matrices; the other {num(arch.parameters - quantized)} "
            f"({memory.KEPT_16BIT_PARTS}) stay bf16"
        )
    weights = f"{req.precision}: {_bytes(memory.bytes_per_parameter(req.precision))} a parameter{kept}{scales}"
    return [
        Given(label="Weights", text=weights),
        Given(label="KV cache", text="bf16: 2 bytes a value, keys and values for every layer and KV head"),
        Given(label="Prefill workspace (activations)", text=f"{gb(mem.activations)} a GPU"),
    ]


def _train_givens(req: PlanRequest, mem: memory.MemoryBreakdown) -> list[Given]:
    """Training state a parameter, the sharding, and the activations and loss head a GPU."""
    st = training_state("adam")
    return [
        Given(
            label="Training state",
            text=f"{st.total:g} bytes a parameter: {st.weights:g} weights + {st.gradients:g} gradients + "
            f"{st.optimizer:g} optimizer state with its fp32 master copy",
        ),
        Given(label="Sharding", text=SHARDING_TEXT[req.sharding]),
        Given(label="Activations", text=f"{gb(mem.activations)} a GPU for this batch and sequence length"),
        Given(
            label="Loss head",
            text=f"{gb(mem.loss_head)} a GPU: the logits of every token, in 16 and 32 bits, and their gradient",
        ),
    ]


def _plan(q: Question) -> Plan:
    return make_plan(_request(q.parameters))


def solve(q: Question) -> Solution:
    """The engine's plan: per-GPU breakdown, verdict, largest part, smallest fix, and the wrong answers."""
    plan = _plan(q)
    req, mem = plan.request, plan.per_gpu
    parts = _parts_of(mem)
    largest = max(parts, key=lambda c: parts[c])
    expected = {"fits": "yes" if plan.fits else "no", "per_gpu": float(mem.total), "largest": largest}
    variants = [*per_gpu_variants(req, mem), _verdict_variant(plan), *_largest_variants(req.mode, parts, largest)]
    steps = _steps(plan)
    steps.append(
        f"The largest part is {_label(largest, req.mode, lower=True)}: {gb(parts[largest])} of {gb(mem.total)} a GPU."
    )
    return Solution(
        expected=expected,
        variants=distinct(q, expected, variants),
        solution=steps,
        hints=_hints(req),
        rows=[Row(component=c, label=_label(c, req.mode), bytes=parts[c]) for c in parts if parts[c]],
        total=mem.total,
        capacity=mem.capacity,
        fixes=[f.sentence for f in fixes(req)[:3]] if not plan.fits else [],
    )


def _verdict_variant(plan: Plan) -> Variant:
    """The wrong verdict, answered with the sum against the capacity."""
    mem = plan.per_gpu
    return Variant(part="fits", id="verdict", value="no" if plan.fits else "yes",
                   message=f"Each GPU needs {gb(mem.total)} of its {gb(mem.capacity, 0)}: "
                   f"{'it fits' if plan.fits else 'it does not fit'}.")


def _largest_variants(mode: str, parts: dict[str, int], largest: str) -> list[Variant]:
    """Each other part named as the largest, answered with its size beside the largest's."""
    return [
        Variant(part="largest", id=f"not-{c}", value=c,
                message=f"{_label(c, mode)}: {gb(parts[c])} a GPU, but "
                f"{_label(largest, mode, lower=True)} {_take(largest, mode)} {gb(parts[largest])}.")
        for c in parts
        if c != largest and parts[c] > 0
    ]


def _steps(plan: Plan) -> list[str]:
    """The engine's sentences about memory, up to its verdict, with the KV cache's split spelled out."""
    lines, req, mem = plan.explanation, plan.request, plan.per_gpu
    verdict = memory.verdict(mem)
    steps = lines[: lines.index(verdict) + 1] if verdict in lines else list(lines)
    if req.mode == "serve" and req.gpus > 1 and mem.kv_cache:
        at = next((i for i, s in enumerate(steps) if s.startswith("The KV cache")), len(steps) - 2)
        steps.insert(
            at + 1,
            f"Each GPU keeps the keys and values of its share of the KV heads: {gb(mem.kv_cache)} on each.",
        )
    return steps


def _hints(req: PlanRequest) -> list[str]:
    arch = req.architecture
    hints = [
        f"Weights first: {num(arch.parameters)} parameters × bytes a parameter"
        + (f", divided over the {req.gpus} GPUs" if req.mode == "serve" and req.gpus > 1 else "")
        + "."
    ]
    if req.mode == "serve":
        hints.append(
            "KV cache: 2 (keys and values) × layers × KV heads × head dimension × 2 bytes, for every token "
            "of every sequence"
            + (f", divided over the {req.gpus} GPUs" if req.gpus > 1 else "")
            + ". Use the KV heads, not the attention heads."
        )
    else:
        hints.append(
            "Weights, gradients and optimizer state come to 16 bytes a parameter; the sharding decides "
            "which of them are divided by the number of GPUs."
        )
    hints.append(
        "Add every part on one GPU, including the runtime, and compare the sum with 80 GB; the largest "
        "term is the part that dominates."
    )
    return hints


def node(q: Question) -> NodeLoad:
    """dgx-1 as the question's plan loads it (shown only with feedback)."""
    return node_load(_plan(q))


DRILL = Drill(
    name=NAME,
    title="Will it fit?",
    description="A model, precision, mode, GPU count, batch and context: does it fit, how many GB a GPU, "
    "and which part dominates.",
    generate=generate,
    solve=solve,
    node_load=node,
    malformed=(
        {"fits": "maybe", "per_gpu": "40 GB", "largest": "weights"},
        {"fits": "yes", "per_gpu": "40 GB/s", "largest": "weights"},
        {"fits": "yes", "per_gpu": "", "largest": "weights"},
        {"fits": "yes", "per_gpu": "40 GB", "largest": "the GPU"},
    ),
)


def grade(question: Question, answers: Mapping[str, str]) -> Feedback:
    """Grade answers as typed (see app.drills.base.grade)."""
    return DRILL.grade(question, answers)
