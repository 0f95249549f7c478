"""Interconnect, for a slide: one all-reduce of a model's gradients over NVLink, PCIe and the network."""

from __future__ import annotations

import re

from pydantic import BaseModel, Field, field_validator

from app.engine.hardware import LINKS
from app.engine.interconnect import AllReduceComparison, all_reduce_comparison
from app.engine.workload import Precision
from app.widgets._fields import ModelId
from app.widgets.base import Widget

BAR_WIDTH = 300
SHORT = {"nvlink": "NVLink", "pcie": "PCIe Gen5", "network": "Network"}


def _links(value: object) -> str:
    """Link ids as 'nvlink,pcie,network'; a YAML list or its text form is accepted too."""
    if isinstance(value, list | tuple):
        value = ",".join(str(v) for v in value)
    names = [n for n in re.split(r"[\s,\[\]'\"]+", str(value)) if n]
    unknown = [n for n in names if n not in LINKS]
    if unknown or not names:
        raise ValueError(f"Links are some of: {', '.join(LINKS)}.")
    return ",".join(dict.fromkeys(names))


class Params(BaseModel):
    """Whose gradients, over how many GPUs, on which links."""

    model: ModelId = Field(default="llama-3.1-8b", description="All-reduce this model's gradients")
    precision: Precision = Field(default="bf16", description="Precision of the gradients")
    gpus: int = Field(default=8, ge=2, le=1024, description="GPUs in the ring")
    links: str = Field(default="nvlink,pcie,network", description="Links compared, comma-separated")
    step_tokens: int = Field(default=8192, ge=1, le=10**7, description="Tokens each GPU computes in a step")
    mfu: float = Field(default=0.4, ge=0.01, le=1, allow_inf_nan=False,  # PlanRequest's floor: above 0 alone let
                       description="Share of peak reached")  # a subnormal make the step's compute infinite

    @field_validator("links", mode="before")
    @classmethod
    def _check_links(cls, value: object) -> str:
        return _links(value)


class Bar(BaseModel):
    id: str
    label: str
    y: float
    width: float
    seconds: float
    share_of_step: float
    bandwidth: float
    achieved: float


class InterconnectView(BaseModel):
    r: AllReduceComparison
    bars: list[Bar]
    bar_width: int = BAR_WIDTH
    height: int
    label_x: int = 84
    value_x: float
    view_width: float


def compute(params: Params) -> InterconnectView:
    """The engine's all-reduce over each link, as bars of time."""
    r = all_reduce_comparison(
        params.model, params.precision, params.gpus, params.links.split(","), params.step_tokens, params.mfu
    )
    bars = [
        Bar(
            id=lk.id,
            label=SHORT[lk.id],
            y=i * 30,
            width=round(BAR_WIDTH * lk.fraction_of_slowest, 2),
            seconds=lk.seconds,
            share_of_step=lk.share_of_step,
            bandwidth=lk.bandwidth,
            achieved=lk.achieved,
        )
        for i, lk in enumerate(r.links)
    ]
    return InterconnectView(
        r=r, bars=bars, height=30 * len(bars), value_x=84 + BAR_WIDTH + 6, view_width=84 + BAR_WIDTH + 76
    )


WIDGET = Widget(
    name="interconnect",
    title="One all-reduce, three links",
    params=Params,
    compute=compute,
    template="widgets/interconnect.html",
    description="Ring all-reduce of a model's gradients over NVLink, PCIe Gen5 and a 400 Gb/s network.",
)
