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
from app.drills.registry import register
from app.engine import memory
from app.engine.fixes import fixes
from app.engine.models import CATALOG, get_model
from app.engine.placement import COMPONENTS, NodeLoad
from app.engine.plan import Plan, PlanRequest, make_plan, node_load
from app.format import billions, gb, gib, num

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
LABELS = {
    "weights": "Weights",
    "kv_cache": "KV cache",
    "activations": "Activations",
    "loss_head": "Loss head",
    "gradients": "Gradients",
    "optimizer": "Optimizer state",
    "runtime": "Runtime",
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
        "gpus": rng.choice(GPU_COUNTS),
        "batch_size": rng.choice(SERVE_BATCHES),
        "context_tokens": rng.choice([c for c in SERVE_CONTEXTS if c <= arch.context]),
    }


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
    arch = req.architecture
    gpus = f"{req.gpus} H100{'s' if req.gpus > 1 else ''}"
    seqs = f"{num(req.batch_size)} sequence{'s' if req.batch_size > 1 else ''}"
    if req.mode == "serve":
        how = "" if req.gpus == 1 else " split tensor-parallel"
        many = f"{seqs} at once, each keeping" if req.batch_size > 1 else "one sequence at a time, keeping"
        prompt = (
            f"Serve {arch.name} in {req.precision} on {gpus}{how}: {many} "
            f"{num(req.context_tokens)} tokens in a bf16 KV cache."
        )
    else:
        recompute = (
            ""
            if req.activation_checkpointing == "none"
            else f", with {req.activation_checkpointing} activation checkpointing"
        )
        parallel = " (data parallel)" if req.gpus > 1 else ""
        prompt = (
            f"Train {arch.name} with Adam in mixed precision on {gpus}{parallel}: {seqs} of "
            f"{num(req.context_tokens)} tokens on {'each GPU' if req.gpus > 1 else 'the GPU'}{recompute}."
        )
    components = [c for c in COMPONENTS if getattr(mem, c) > 0]
    return Question(
        drill=NAME,
        title=f"{'Serve' if req.mode == 'serve' else 'Train'} {arch.name} on {gpus}",
        prompt=prompt,
        givens=_givens(req, mem),
        parameters=parameters,
        parts=[
            Part(
                id="fits",
                prompt="Does it fit in each GPU's memory?",
                kind="yes_no",
                choices=[
                    Choice(value="yes", label="Yes, it fits"),
                    Choice(value="no", label="No, it does not fit"),
                ],
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
        ],
    )


def _label(component: str, mode: str, lower: bool = False) -> str:
    if component == "activations" and mode == "serve":
        return "the prefill workspace (activations)" if lower else "Prefill workspace (activations)"
    return LOWER[component] if lower else LABELS[component]


def _take(component: str, mode: str) -> str:
    """'take' after a plural part (the weights), 'takes' after a singular one (the KV cache)."""
    plural = component in ("weights", "gradients") or (component == "activations" and mode == "train")
    return "take" if plural else "takes"


def _bytes(n: float) -> str:
    return f"{n:g} byte{'' if n == 1 else 's'}"


def _givens(req: PlanRequest, mem: memory.MemoryBreakdown) -> list[Given]:
    arch = req.architecture
    experts = (
        (
            f", of which {billions(arch.active_parameters)} are active for each token "
            f"({arch.experts_per_token} of {arch.experts} experts)"
        )
        if arch.experts > 1
        else ""
    )
    shape = (
        f"{arch.layers} layers, {arch.heads} attention heads, {arch.n_kv_heads} KV heads, "
        f"head dimension {arch.n_head_dim}"
    )
    givens = [Given(label="Model", text=f"{arch.name}: {num(arch.parameters)} parameters{experts}; {shape}")]
    if req.mode == "serve":
        q = memory.QUANTIZATION[req.precision]
        scales = f"; {q.note}" if q.granularity == "group" else ""
        kept = ""
        if req.precision in memory.QUANTIZED:
            quantized = memory.quantized_parameters(arch, req.precision)
            kept = (
                f" for the {num(quantized)} in the layers' matrices; the other {num(arch.parameters - quantized)} "
                f"({memory.KEPT_16BIT_PARTS}) stay bf16"
            )
        givens += [
            Given(
                label="Weights",
                text=f"{req.precision}: {_bytes(memory.bytes_per_parameter(req.precision))} a parameter"
                f"{kept}{scales}",
            ),
            Given(label="KV cache", text="bf16: 2 bytes a value, keys and values for every layer and KV head"),
            Given(label="Prefill workspace (activations)", text=f"{gb(mem.activations)} a GPU"),
        ]
    else:
        st = memory.training_state("adam")
        givens += [
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
    givens += [
        Given(label="Runtime", text=f"{gb(mem.runtime)} a GPU (CUDA context and libraries)"),
        Given(label="GPU", text=f"H100, planned at {gb(mem.capacity, 0)} of memory (the card holds 80 GiB)"),
    ]
    return givens


def _plan(q: Question) -> Plan:
    return make_plan(_request(q.parameters))


def _total_with(req: PlanRequest, **changes: int) -> float:
    """Per-GPU bytes of the same plan with the model's architecture changed (a mistaken model)."""
    arch = req.architecture.model_copy(update=changes)
    return float(memory.per_gpu(req.model_copy(update={"model": arch})).total)


def _per_gpu_variants(req: PlanRequest, mem: memory.MemoryBreakdown) -> list[Variant]:
    arch, total, n = req.architecture, mem.total, req.gpus
    w, kv = mem.weights, mem.kv_cache
    out: list[tuple[str, float, str]] = []
    if req.mode == "serve" and kv and arch.heads != arch.n_kv_heads:
        out.append(
            (
                "all-heads",
                _total_with(req, kv_heads=arch.heads),
                f"that counts the KV cache from all {arch.heads} attention heads; only the {arch.n_kv_heads} "
                "KV heads keep keys and values",
            )
        )
    if arch.experts > 1:
        out.append(
            (
                "active-parameters",
                _total_with(req, experts=arch.experts_per_token),
                f"that sizes the model by its {billions(arch.active_parameters)} active parameters; every "
                "expert "
                f"sits in memory, all {billions(arch.parameters)}",
            )
        )
    if req.mode == "serve":
        if req.precision in memory.QUANTIZED:
            every = memory.weight_bytes(arch, req.precision, whole_model=True) / n
            out.append(
                (
                    "quantized-everything",
                    total - w + every,
                    f"that stores every parameter in {req.precision}; real checkpoints keep "
                    f"{memory.KEPT_16BIT_PARTS} in bf16",
                )
            )
        if req.batch_size > 1 and kv:
            out.append(
                (
                    "forgot-batch",
                    total - kv + kv / req.batch_size,
                    f"that keeps the KV cache of one sequence; {req.batch_size} sequences each keep their own",
                )
            )
        if n > 1:
            out.append(
                (
                    "not-split",
                    total + (w + kv) * (n - 1),
                    f"that is the whole model and cache; tensor parallelism divides them over the {n} GPUs",
                )
            )
        if req.precision == "bf16":
            out.append(("fp32-instead-of-bf16", total + w, "that stores the weights in fp32 (4 bytes); bf16 takes 2"))
        out.append(("forgot-kv-cache", total - kv, "that leaves out the KV cache"))
    else:
        full = arch.parameters * memory.training_state("adam").total
        state = mem.weights + mem.gradients + mem.optimizer
        if req.sharding != "none":
            out.append(
                (
                    "ignored-sharding",
                    total - state + full,
                    "that keeps the whole training state on every GPU; the sharding divides part of it",
                )
            )
        elif n > 1:
            out.append(
                (
                    "sharded-without-zero",
                    total - state + full / n,
                    "that divides the training state over the GPUs; plain data parallelism keeps a full copy "
                    "on every GPU",
                )
            )
        out.append(("forgot-activations", total - mem.activations, "that leaves out the activations"))
        out.append(("forgot-loss-head", total - mem.loss_head, "that leaves out the loss head (the logits)"))
        out.append(
            (
                "weights-only",
                float(w),
                "that is the weights alone; training adds gradients and optimizer state",
            )
        )
    out.append(
        (
            "gib-for-gb",
            total / 2**30 * 1e9,
            f"that is the total in GiB ({gib(total)}); the question asks for GB, 10⁹ bytes",
        )
    )
    return [Variant(part="per_gpu", id=m, value=float(v), message=f"{gb(v)}: {why}.") for m, v, why in out]


def solve(q: Question) -> Solution:
    """The engine's plan: per-GPU breakdown, verdict, largest part, smallest fix, and the wrong answers."""
    plan = _plan(q)
    req, mem = plan.request, plan.per_gpu
    parts = _parts_of(mem)
    largest = max(parts, key=lambda c: parts[c])
    expected = {"fits": "yes" if plan.fits else "no", "per_gpu": float(mem.total), "largest": largest}
    variants = _per_gpu_variants(req, mem)
    variants.append(
        Variant(
            part="fits",
            id="verdict",
            value="no" if plan.fits else "yes",
            message=f"Each GPU needs {gb(mem.total)} of its {gb(mem.capacity, 0)}: "
            f"{'it fits' if plan.fits else 'it does not fit'}.",
        )
    )
    variants += [
        Variant(
            part="largest",
            id=f"not-{c}",
            value=c,
            message=f"{_label(c, req.mode)}: {gb(parts[c])} a GPU, but "
            f"{_label(largest, req.mode, lower=True)} {_take(largest, req.mode)} {gb(parts[largest])}.",
        )
        for c in parts
        if c != largest and parts[c] > 0
    ]
    found = fixes(req)
    steps = _steps(plan)
    steps.append(
        f"The largest part is {_label(largest, req.mode, lower=True)}: {gb(parts[largest])} of {gb(mem.total)} a GPU."
    )
    return Solution(
        expected=expected,
        variants=distinct(q, expected, variants),
        steps=steps,
        hints=_hints(req),
        rows=[Row(component=c, label=_label(c, req.mode), bytes=parts[c]) for c in parts if parts[c]],
        total=mem.total,
        capacity=mem.capacity,
        fixes=[f.sentence for f in found[:3]] if not plan.fits else [],
    )


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


DRILL = register(
    Drill(
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
)


def grade(question: Question, answers: Mapping[str, str]) -> Feedback:
    """Grade answers as typed (see app.drills.base.grade)."""
    return DRILL.grade(question, answers)
