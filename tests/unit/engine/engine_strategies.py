"""Hypothesis strategies for the engine's laws: catalog and custom models, and plan requests."""

from __future__ import annotations

from typing import Any

from hypothesis import settings
from hypothesis import strategies as st

from app.engine.models import CATALOG, Architecture, get_model
from app.engine.units import PRECISIONS
from app.engine.workload import TRAINING_PRECISIONS, PlanRequest, split_counts

# Every law runs the same examples on every machine: derandomized, no deadline (CI machines vary).
LAW = settings(max_examples=150, derandomize=True, deadline=None)


@st.composite
def architectures(draw: st.DrawFn) -> Architecture:
    """A small-to-large custom decoder: any shape the request model accepts, within reason."""
    kv_heads = draw(st.sampled_from([1, 2, 4, 8, 16]))
    heads = kv_heads * draw(st.integers(1, 8))
    experts = draw(st.sampled_from([1, 1, 4, 8, 16]))
    return Architecture(
        layers=draw(st.integers(1, 128)),
        hidden=draw(st.integers(64, 16_384)),
        heads=heads,
        kv_heads=kv_heads,
        head_dim=draw(st.sampled_from([32, 64, 128, 256])),
        ffn=draw(st.integers(64, 65_536)),
        vocab=draw(st.integers(256, 262_144)),
        tied_embeddings=draw(st.booleans()),
        experts=experts,
        experts_per_token=draw(st.integers(1, experts)),
        gated_mlp=draw(st.booleans()),
    )


# Training runs on any count; a serving request draws from the divisors of its model's heads.
GPU_COUNTS = [1, 2, 3, 4, 8, 16, 64, 1024]
models = st.one_of(st.sampled_from(sorted(CATALOG)), architectures())
precisions = st.sampled_from(PRECISIONS)


@st.composite
def requests(draw: st.DrawFn, **fixed: Any) -> PlanRequest:
    """A plan request in either mode, with any fields fixed by the caller.

    Serving splits the attention heads over the GPUs (tensor parallel), so a serving request draws a count that
    divides them; training (data parallel) draws any count.
    """
    mode = fixed.get("mode", draw(st.sampled_from(["serve", "train"])))
    model = draw(models)
    counts = split_counts(get_model(model)) if mode == "serve" else GPU_COUNTS
    fields: dict[str, Any] = {
        "model": model,
        "mode": mode,
        "precision": draw(st.sampled_from(TRAINING_PRECISIONS if mode == "train" else PRECISIONS)),
        "kv_precision": draw(precisions),
        "gpus": draw(st.sampled_from(counts)),
        "sharding": draw(st.sampled_from(["none", "zero1", "zero2", "zero3"])),
        "batch_size": draw(st.integers(1, 256)),
        "context_tokens": draw(st.integers(1, 131_072)),
        "prompt_tokens": draw(st.integers(1, 8192)),
        "output_tokens": draw(st.integers(1, 4096)),
        "optimizer": draw(st.sampled_from(["adam", "adam-fp32", "sgd-momentum", "adam-8bit"])),
        "activation_checkpointing": draw(st.sampled_from(["none", "selective", "full"])),
        "mfu": draw(st.floats(0.05, 1.0)),
    }
    fields.update(fixed)
    return PlanRequest(**fields)
