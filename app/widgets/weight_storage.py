"""Weight-storage calculator: parameters x bits / 8, in GB and GiB, with a bar per precision.

It places nothing on the dgx-1 panel: the weights alone are a size, not a plan, and the panel's red "does not fit"
is a verdict only a whole plan (weights, KV cache, runtime) can give (learner walk W1)."""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, Field

from app.engine.storage import COMPARED_BITS, WeightStorage, precisions_at, weight_storage
from app.widgets._fields import TypedCount
from app.widgets.base import Widget, one_of


class Params(BaseModel):
    """Inputs of the calculator."""

    parameters: TypedCount = Field(
        default=7e9, ge=1e6, le=1e13, description="Number of parameters, e.g. 7e9 or 7000000000"
    )
    bits: Annotated[int, one_of(*COMPARED_BITS)] = Field(default=16, description="Bits stored per parameter")


BIT_OPTIONS = [(str(bits), f"{bits} ({' / '.join(precisions_at(bits))})") for bits in COMPARED_BITS]


class Result(WeightStorage):
    """The engine's weight storage, with the widths the learner may choose from."""

    bit_options: list[tuple[str, str]] = Field(default=BIT_OPTIONS, description="Bit widths and their precisions")


def compute(params: Params) -> Result:
    """The engine's weight storage for these inputs."""
    return Result(**dict(weight_storage(params.parameters, params.bits)))


WIDGET = Widget(
    name="weight-storage",
    title="Weight-storage calculator",
    params=Params,
    compute=compute,
    template="widgets/weight-storage.html",
    description="Ideal storage of the weights alone at each storage width, in GB and GiB.",
)
