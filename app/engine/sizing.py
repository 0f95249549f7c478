"""Sizing a training run: how long its FLOPs take, and how many GPUs memory and a deadline each demand."""

from __future__ import annotations

import math

from pydantic import BaseModel, ConfigDict, Field

from app.engine import compute
from app.engine.hardware import get_gpu, peak_flops
from app.engine.memory import Knobs, min_gpus
from app.engine.models import Architecture
from app.engine.training_state import training_bytes_per_parameter
from app.engine.units import SECONDS_PER_DAY, SECONDS_PER_YEAR

# Sequence length of the memory estimate: Llama 3.1's pre-training sequences (Llama 3 paper, section 3.4).
SEQUENCE_TOKENS = 8192
# MFU values the compute-time chart draws, 5 % to 100 % in steps of 1 %.
MFU_CURVE: tuple[float, ...] = tuple(round(0.01 * i, 2) for i in range(5, 101))


class TimePoint(BaseModel):
    """Training time at one MFU."""

    model_config = ConfigDict(frozen=True)

    mfu: float = Field(description="Model FLOPs utilisation, 0 to 1")
    seconds: float = Field(description="FLOPs ÷ (GPUs × peak × MFU)")


class ComputeTime(BaseModel):
    """time = FLOPs ÷ (GPUs × peak × MFU) for a training run."""

    model_config = ConfigDict(frozen=True)

    model: str = Field(description="Model name")
    parameters: int = Field(description="Active parameters N (the ones each token uses)")
    tokens: float = Field(description="Training tokens D")
    gpus: int = Field(description="GPUs")
    mfu: float = Field(description="Model FLOPs utilisation assumed")
    peak_flops: float = Field(description="Dense bf16 peak of one GPU, FLOP/s")
    flops: float = Field(description="Model FLOPs: 6·N·D plus causal attention at 8,192-token sequences")
    seconds: float = Field(description="At the chosen MFU")
    ideal_seconds: float = Field(description="At 100 % MFU, a bound no run reaches")
    gpu_hours: float = Field(description="GPUs × hours at the chosen MFU")
    delivered_flops: float = Field(description="GPUs × peak × MFU: what the GPUs really deliver, FLOP/s")
    curve: list[TimePoint] = Field(description="Time at MFU from 5 % to 100 %")


def compute_time(
    arch: Architecture, tokens: float, gpus: int, mfu: float, gpu_id: str = "h100"
) -> ComputeTime:
    """Training time of 6·N·D FLOPs on `gpus` GPUs at a given MFU, and the curve over MFU."""
    peak = peak_flops(get_gpu(gpu_id), "bf16")
    flops = compute.training_model_flops(arch, tokens, SEQUENCE_TOKENS)
    secs = compute.compute_seconds(flops, gpus, peak, mfu)
    return ComputeTime(
        model=arch.name,
        parameters=arch.active_parameters,
        tokens=tokens,
        gpus=gpus,
        mfu=mfu,
        peak_flops=peak,
        flops=flops,
        seconds=secs,
        ideal_seconds=compute.compute_seconds(flops, gpus, peak, 1.0),
        gpu_hours=gpus * secs / 3600,
        delivered_flops=gpus * peak * mfu,
        curve=[TimePoint(mfu=u, seconds=compute.compute_seconds(flops, gpus, peak, u)) for u in MFU_CURVE],
    )


class ClusterScale(BaseModel):
    """How many GPUs a training run needs for its memory and for its deadline, and its time at a count."""

    model_config = ConfigDict(frozen=True)

    model: str = Field(description="Model name")
    parameters: int = Field(description="Parameters held in memory")
    tokens: float = Field(description="Training tokens D")
    mfu: float = Field(description="Model FLOPs utilisation assumed")
    gpus: int = Field(description="The GPU count asked about")
    deadline_days: float = Field(description="Days the run may take")
    capacity: int = Field(description="Memory of one GPU, bytes")
    peak_flops: float = Field(description="Dense bf16 peak of one GPU, FLOP/s")
    state_bytes: int = Field(description="Adam mixed-precision training state: 16 bytes a parameter")
    gpus_for_state: int = Field(description="ceil(state ÷ GPU memory): the floor memory sets")
    sequence_tokens: int = Field(description="Sequence length of the memory estimate")
    gpus_for_memory: int | None = Field(
        description="Fewest GPUs that hold state, activations (checkpointed, sequence_tokens) and runtime "
        "under ZeRO-3; null if none do"
    )
    flops: float = Field(description="Model FLOPs: 6·N·D plus causal attention at 8,192-token sequences")
    gpus_for_deadline: int = Field(description="ceil(FLOPs ÷ (peak × MFU × deadline))")
    gpus_needed: int = Field(description="The larger of the two demands")
    seconds_at_gpus: float = Field(description="Training time on `gpus` GPUs")
    days_at_gpus: float = Field(description="The same in days")
    meets_deadline: bool = Field(description="True when `gpus` GPUs finish within the deadline")
    holds_state: bool = Field(description="True when `gpus` GPUs hold the state, activations and runtime")
    seconds_on_one_gpu: float = Field(description="Training time if one GPU could hold it all")
    years_on_one_gpu: float = Field(description="The same in years")


def gpus_for_deadline(flops: float, peak: float, mfu: float, deadline_seconds: float) -> int:
    """GPUs whose delivered FLOP/s finish `flops` within the deadline."""
    return max(1, math.ceil(flops / (peak * mfu * deadline_seconds)))


def cluster_scale(
    arch: Architecture, tokens: float, mfu: float, gpus: int, deadline_days: float, gpu_id: str = "h100"
) -> ClusterScale:
    """Both walls of a big training run: memory (state ÷ GPU memory) and time (6·N·D ÷ delivered FLOP/s)."""
    gpu = get_gpu(gpu_id)
    peak = peak_flops(gpu, "bf16")
    state = math.ceil(arch.parameters * training_bytes_per_parameter("adam"))
    fewest = gpus_for_memory(arch, gpus, gpu.memory_bytes)
    flops = compute.training_model_flops(arch, tokens, SEQUENCE_TOKENS)
    deadline = gpus_for_deadline(flops, peak, mfu, deadline_days * SECONDS_PER_DAY)
    secs = compute.compute_seconds(flops, gpus, peak, mfu)
    one = compute.compute_seconds(flops, 1, peak, mfu)
    by_state = math.ceil(state / gpu.memory_bytes)
    return ClusterScale(
        model=arch.name, parameters=arch.parameters, tokens=tokens, mfu=mfu, gpus=gpus, deadline_days=deadline_days,
        capacity=gpu.memory_bytes, peak_flops=peak, state_bytes=state, gpus_for_state=by_state,
        sequence_tokens=SEQUENCE_TOKENS, gpus_for_memory=fewest, flops=flops, gpus_for_deadline=deadline,
        gpus_needed=max(deadline, fewest or by_state),
        seconds_at_gpus=secs,
        days_at_gpus=secs / SECONDS_PER_DAY,
        meets_deadline=secs <= deadline_days * SECONDS_PER_DAY,
        holds_state=fewest is not None and gpus >= fewest,
        seconds_on_one_gpu=one,
        years_on_one_gpu=one / SECONDS_PER_YEAR,
    )


def gpus_for_memory(arch: Architecture, gpus: int, capacity: int) -> int | None:
    """Fewest GPUs that hold Adam's state, one checkpointed sequence's activations and the runtime under ZeRO-3;
    None if no number of GPUs does."""
    knobs = Knobs(mode="train", precision="bf16", kv_precision="bf16", gpus=gpus, sharding="zero3", batch_size=1,
                  context_tokens=SEQUENCE_TOKENS, prompt_tokens=1, optimizer="adam", activation_checkpointing="full")
    return min_gpus(arch, knobs, capacity)
