"""Training and serving the same model, side by side: memory, maths per token, what limits each, speed."""

from __future__ import annotations

import math

from pydantic import BaseModel, ConfigDict, Field

from app.engine import compute
from app.engine.hardware import DGX_H100
from app.engine.models import get_model
from app.engine.plan import Plan, make_plan
from app.engine.training_state import training_bytes_per_parameter
from app.engine.workload import PlanRequest

# The training plan spreads the state over at least one dgx-1 (8 GPUs) with ZeRO-3 and recomputation.
NODE_GPUS = DGX_H100.gpus  # training is sized from one dgx-1


class TrainVsServe(BaseModel):
    """One model served (one GPU per replica, one user) and trained (ZeRO-3 over enough GPUs)."""

    model_config = ConfigDict(frozen=True)

    model: str = Field(description="Model name")
    parameters: int = Field(description="Parameters held in memory")
    serve: Plan = Field(description="Serving: bf16, batch 1, 8,192-token context, fewest GPUs that hold it")
    train: Plan = Field(
        description="Training: Adam, ZeRO-3 with activation checkpointing, 8,192-token sequences"
    )
    serve_gpus: int = Field(description="GPUs the serving plan uses (tensor parallel when one is not enough)")
    train_gpus: int = Field(description="GPUs the training plan uses: a dgx-1, or more when memory demands")
    serve_flops_per_token: float = Field(description="≈ 2 × active parameters")
    train_flops_per_token: float = Field(description="≈ 6 × active parameters (forward and backward)")
    flops_ratio: float = Field(description="Training FLOPs per token ÷ serving FLOPs per token")
    state_bytes: int = Field(description="Adam mixed-precision training state before activations")
    weight_bytes: int = Field(
        description="bf16 weights, all that serving keeps per replica besides the cache"
    )


def train_vs_serve(model_id: str) -> TrainVsServe:
    """Plans for serving and training one model, and the figures that set them apart."""
    arch = get_model(model_id)
    one = make_plan(PlanRequest(model=model_id))
    serve = one if one.fits else make_plan(PlanRequest(model=model_id, gpus=one.min_gpus or 1))
    base = PlanRequest(
        model=model_id, mode="train", gpus=NODE_GPUS, sharding="zero3", activation_checkpointing="full"
    )
    first = make_plan(base)
    gpus = NODE_GPUS if first.fits else max(NODE_GPUS, first.min_gpus or NODE_GPUS)
    train = first if gpus == NODE_GPUS else make_plan(base.model_copy(update={"gpus": gpus}))
    two, six = (
        compute.inference_flops(arch.active_parameters),
        compute.training_flops(arch.active_parameters, 1),
    )
    return TrainVsServe(
        model=arch.name,
        parameters=arch.parameters,
        serve=serve,
        train=train,
        serve_gpus=serve.request.gpus,
        train_gpus=gpus,
        serve_flops_per_token=two,
        train_flops_per_token=six,
        flops_ratio=six / two,
        state_bytes=math.ceil(arch.parameters * training_bytes_per_parameter("adam")),
        weight_bytes=one.per_gpu.weights,
    )
