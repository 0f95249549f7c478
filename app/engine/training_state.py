"""Training state: the bytes a parameter needs for its working weights, gradients and optimizer state, and how
ZeRO shards them over data-parallel GPUs."""

from __future__ import annotations

import math
from functools import lru_cache

from pydantic import BaseModel, ConfigDict, Field

from app.engine.errors import EngineError


class TrainingState(BaseModel):
    """Bytes a parameter needs for training: the working weights, their gradients, the optimizer state."""

    model_config = ConfigDict(frozen=True)

    weights: float = Field(description="Working copy of the weights, bytes a parameter")
    gradients: float = Field(description="Gradients, bytes a parameter")
    optimizer: float = Field(description="Optimizer state (fp32 master copy included), bytes a parameter")
    note: str = Field(description="What the optimizer keeps, in a sentence")

    @property
    def total(self) -> float:
        """Bytes a parameter, all three together."""
        return self.weights + self.gradients + self.optimizer


# Mixed precision (Micikevicius et al. 2018; the Ultra-Scale Playbook): 16-bit weights and gradients,
# an fp32 master copy (4 B) and the optimizer's fp32 moments: Adam 2 x 4 B, SGD momentum 4 B.
# 8-bit Adam (Dettmers et al. 2022, bitsandbytes) keeps both moments in 1 B each; its block-wise
# absmax constants (4 B per 2,048 values, 0.2 %) are not counted. fp8 training (Transformer Engine)
# keeps 16-bit working weights and casts them to fp8 for each matrix multiply. Gradients are kept at
# the working precision: an fp32 gradient accumulation buffer would add 4 B a parameter.
_MOMENTS = {"adam": 8.0, "adam-fp32": 8.0, "sgd-momentum": 4.0, "adam-8bit": 2.0}
_NOTES = {
    "adam": "Adam in mixed precision",
    "adam-fp32": "Adam in fp32 (weights, gradients and moments all 4 bytes)",
    "sgd-momentum": "SGD with momentum in mixed precision",
    "adam-8bit": "8-bit Adam in mixed precision",
}


def training_precision(optimizer: str, precision: str) -> str:
    """The precision of the working weights: adam-fp32 trains in fp32 whatever the plan asks."""
    return "fp32" if optimizer == "adam-fp32" else precision


@lru_cache(maxsize=64)
def training_state(optimizer: str, precision: str = "bf16") -> TrainingState:
    """Bytes a parameter for weights, gradients and optimizer state."""
    if optimizer not in _MOMENTS:
        raise EngineError(f"Unknown optimizer '{optimizer}'. Known: {', '.join(_MOMENTS)}.")
    working = training_precision(optimizer, precision)
    width = 4.0 if working == "fp32" else 2.0
    master = 0.0 if working == "fp32" else 4.0
    return TrainingState(
        weights=width, gradients=width, optimizer=master + _MOMENTS[optimizer], note=_NOTES[optimizer]
    )


def training_bytes_per_parameter(optimizer: str, precision: str = "bf16") -> float:
    """Training state a parameter: 16 for Adam in mixed precision (2 + 2 + 4 + 4 + 4)."""
    return training_state(optimizer, precision).total


_STAGE = {"none": 0, "zero1": 1, "zero2": 2, "zero3": 3}


def shard(weights: int, gradients: int, optimizer: int, sharding: str, n: int) -> tuple[int, int, int]:
    """Per-GPU weights, gradients and optimizer state under ZeRO over n data-parallel GPUs.

    ZeRO-1 shards the optimizer state, ZeRO-2 the gradients too, ZeRO-3 the weights too
    (Rajbhandari et al. 2020; the Ultra-Scale Playbook): 2Ψ+2Ψ+12Ψ/N, 2Ψ+14Ψ/N, 16Ψ/N for Adam.
    """
    stage = _STAGE[sharding]
    return (
        math.ceil(weights / n) if stage >= 3 else weights,
        math.ceil(gradients / n) if stage >= 2 else gradients,
        math.ceil(optimizer / n) if stage >= 1 else optimizer,
    )
