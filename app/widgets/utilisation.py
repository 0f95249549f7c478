"""Utilisation, for a slide: busy is not useful. One serving GPU's busy share against its useful work."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from app.engine.placement import NodeLoad, spread
from app.engine.plan import PlanRequest, make_plan, node_load
from app.engine.text import pct
from app.engine.utilisation import ServingUtilisation, serving_utilisation
from app.engine.workload import GpuId, Precision
from app.widgets._fields import ModelId
from app.widgets.base import Widget

GAUGE_WIDTH = 240


class Params(BaseModel):
    """A model served on one GPU; the batch is the lever."""

    model: ModelId = Field(default="llama-3.1-8b", description="A catalog model id")
    precision: Precision = Field(default="bf16", description="Storage precision of the weights")
    gpu: GpuId = Field(default="h100", description="GPU type")
    mode: Literal["serve"] = Field(default="serve", description="Serving only: the busy-but-idle case")
    batch_size: int = Field(default=1, ge=1, le=256, description="Sequences decoded together")
    context_tokens: int = Field(
        default=2048, ge=1, le=131_072, description="Tokens each sequence keeps cached"
    )
    price_per_gpu_hour: float = Field(
        default=3.00, gt=0, le=1000, allow_inf_nan=False, description="Illustrative hourly price of one GPU"
    )

    def request(self) -> PlanRequest:
        return PlanRequest(
            model=self.model,
            precision=self.precision,
            gpu=self.gpu,
            mode="serve",
            batch_size=self.batch_size,
            context_tokens=self.context_tokens,
        )


class Gauge(BaseModel):
    key: str
    label: str
    value: float
    width: float
    y: float


class UtilisationView(BaseModel):
    u: ServingUtilisation
    gauges: list[Gauge]
    gauge_width: int = GAUGE_WIDTH
    label_x: int = 130
    value_x: int = 130 + GAUGE_WIDTH + 6
    view_width: int = 130 + GAUGE_WIDTH + 74
    needed_bytes: int
    capacity: int


def compute(params: Params) -> UtilisationView:
    """Busy and useful shares of one decode step, as gauges."""
    req = params.request()
    u = serving_utilisation(req, params.price_per_gpu_hour)
    rows = [
        ("busy", "Busy", u.busy),
        ("compute", "Useful compute", u.useful_compute),
        ("bandwidth", "Bandwidth used", u.useful_bandwidth),
    ]
    gauges = [
        Gauge(key=k, label=label, value=v, width=round(GAUGE_WIDTH * min(v, 1.0), 2), y=i * 30)
        for i, (k, label, v) in enumerate(rows)
    ]
    mem = make_plan(req).per_gpu
    return UtilisationView(u=u, gauges=gauges, needed_bytes=mem.total, capacity=mem.capacity)


def place(params: Params, view: UtilisationView) -> NodeLoad:
    """The serving plan on GPU 0, decoding without pause: busy as the slide says, power from that share."""
    plan = make_plan(params.request())
    loaded = node_load(plan)
    if not plan.fits:
        return loaded
    name = f"serving {plan.request.architecture.name} ({plan.request.precision}) on GPU 0"
    return spread(
        loaded.gpus[0].parts, 1, utilisation=view.u.busy, capacity=loaded.gpus[0].capacity,
        activity=f"{name}, decoding without pause: busy {pct(view.u.busy)}, "
        f"useful compute {pct(view.u.useful_compute, 1)}",
    )


WIDGET = Widget(
    name="utilisation",
    title="Busy is not useful",
    params=Params,
    compute=compute,
    template="widgets/utilisation.html",
    node_load=place,
    description="A serving GPU's busy share against its useful compute and bandwidth, and the cost.",
)
