"""The classic wrong answers to will-it-fit's "memory each GPU needs", each computed for the question's plan with
what to say about it: a mistaken model, a serving or a training slip, or the total read in the wrong unit."""

from __future__ import annotations

from app.drills.base import Variant
from app.engine import memory
from app.engine.plan import PlanRequest
from app.engine.text import billions, gb, gib
from app.engine.training_state import training_state

Mistake = tuple[str, float, str]  # id, the per-GPU bytes it gives, why it is wrong


def per_gpu_variants(req: PlanRequest, mem: memory.MemoryBreakdown) -> list[Variant]:
    """Every classic mistake that applies to this plan, as a wrong per-GPU total and its message."""
    slips = _serve_mistakes(req, mem) if req.mode == "serve" else _train_mistakes(req, mem)
    found = [*_model_mistakes(req, mem), *slips, _unit_mistake(mem.total)]
    return [Variant(part="per_gpu", id=m, value=float(v), message=f"{gb(v)}: {why}.") for m, v, why in found]


def _total_with(req: PlanRequest, **changes: int) -> float:
    """Per-GPU bytes of the same plan with the model's architecture changed (a mistaken model)."""
    arch = req.architecture.model_copy(update=changes)
    return float(memory.per_gpu(req.model_copy(update={"model": arch})).total)


def _model_mistakes(req: PlanRequest, mem: memory.MemoryBreakdown) -> list[Mistake]:
    """The model misread: the KV cache from every attention head, or a mixture of experts by its active part."""
    arch = req.architecture
    out: list[Mistake] = []
    if req.mode == "serve" and mem.kv_cache and arch.heads != arch.n_kv_heads:
        out.append(("all-heads", _total_with(req, kv_heads=arch.heads),
                    f"that counts the KV cache from all {arch.heads} attention heads; only the {arch.n_kv_heads} "
                    "KV heads keep keys and values"))
    if arch.experts > 1:
        out.append(("active-parameters", _total_with(req, experts=arch.experts_per_token),
                    f"that sizes the model by its {billions(arch.active_parameters)} active parameters; every "
                    f"expert sits in memory, all {billions(arch.parameters)}"))
    return out


def _serve_mistakes(req: PlanRequest, mem: memory.MemoryBreakdown) -> list[Mistake]:
    """Serving slips: everything quantized, one sequence's cache, nothing split, fp32 weights, no cache."""
    total, w, kv, n = mem.total, mem.weights, mem.kv_cache, req.gpus
    out: list[Mistake] = []
    if req.precision in memory.QUANTIZED:
        every = memory.weight_bytes(req.architecture, req.precision, whole_model=True) / n
        out.append(("quantized-everything", total - w + every, f"that stores every parameter in {req.precision}; "
                    f"real checkpoints keep {memory.KEPT_16BIT_PARTS} in bf16"))
    if req.batch_size > 1 and kv:
        out.append(("forgot-batch", total - kv + kv / req.batch_size,
                    f"that keeps the KV cache of one sequence; {req.batch_size} sequences each keep their own"))
    if n > 1:
        out.append(("not-split", total + (w + kv) * (n - 1),
                    f"that is the whole model and cache; tensor parallelism divides them over the {n} GPUs"))
    if req.precision == "bf16":
        out.append(("fp32-instead-of-bf16", total + w, "that stores the weights in fp32 (4 bytes); bf16 takes 2"))
    out.append(("forgot-kv-cache", total - kv, "that leaves out the KV cache"))
    return out


def _train_mistakes(req: PlanRequest, mem: memory.MemoryBreakdown) -> list[Mistake]:
    """Training slips: the sharding ignored or imagined, activations or loss head left out, weights alone."""
    total, n = mem.total, req.gpus
    full = req.architecture.parameters * training_state("adam").total
    state = mem.weights + mem.gradients + mem.optimizer
    out: list[Mistake] = []
    if req.sharding != "none":
        out.append(("ignored-sharding", total - state + full,
                    "that keeps the whole training state on every GPU; the sharding divides part of it"))
    elif n > 1:
        out.append(("sharded-without-zero", total - state + full / n,
                    "that divides the training state over the GPUs; plain data parallelism keeps a full copy "
                    "on every GPU"))
    return [
        *out,
        ("forgot-activations", total - mem.activations, "that leaves out the activations"),
        ("forgot-loss-head", total - mem.loss_head, "that leaves out the loss head (the logits)"),
        ("weights-only", float(mem.weights), "that is the weights alone; training adds gradients and optimizer state"),
    ]


def _unit_mistake(total: int) -> Mistake:
    """The total in GiB typed as GB."""
    return ("gib-for-gb", total / 2**30 * 1e9,
            f"that is the total in GiB ({gib(total)}); the question asks for GB, 10⁹ bytes")
