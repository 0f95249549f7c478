"""A plan's speed figures: how fast it serves, how long it trains. Their own module, so the plan and the
sentences that explain it both read them without importing each other."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from app.engine import compute, training_speed


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
    prefill: compute.Bound = Field(description="The prefill's bounds: compute, memory, communication, fixed cost")
    decode: compute.Bound = Field(description="A decode step's bounds: compute, memory, communication, fixed cost")
    efficiency: float = Field(description="Share of peak the maths reaches: the request's mfu, else the GPU's MAMF")


class TrainFigures(BaseModel):
    """How long the plan takes to train."""

    model_config = ConfigDict(frozen=True)

    flops: float = Field(
        description="Model FLOPs: 6·N·D plus causal attention forward and backward, N = active parameters (what "
        "MFU counts)"
    )
    hardware_flops: float = Field(
        description="FLOPs the GPUs run: recomputation included (full reruns the forward pass, selective the "
        "attention)"
    )
    hfu: float = Field(description="Hardware FLOPs utilisation: MFU × hardware FLOPs ÷ model FLOPs")
    mfu: float = Field(description="Model FLOPs utilisation: the request's mfu, else the engine's own figure")
    mfu_given: bool = Field(description="True when the request named the MFU, false when the engine worked it out")
    speed: training_speed.TrainingSpeed = Field(description="The step of the layout and where its time goes")
    seconds: float = Field(description="Model FLOPs ÷ (GPUs × peak × MFU)")
    tokens_per_second: float = Field(description="Training tokens a second, all GPUs together")
    gpu_hours: float = Field(description="GPUs × hours")
