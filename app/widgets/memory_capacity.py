"""Memory capacity, for a slide: one GPU's share of a plan as a stacked bar against the GPU's memory."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel

from app.engine.hardware import get_gpu
from app.engine.placement import COMPONENT_LABELS, COMPONENTS, NodeLoad, idle_node
from app.engine.plan import Plan, PlanRequest, make_plan, node_load
from app.engine.text import gb
from app.engine.workload import ModelChoice, Sharding
from app.widgets._fields import PlanFields
from app.widgets._plot import Segment, Tick, linear_ticks, stacked
from app.widgets.base import Widget, default

BAR_WIDTH = 360


class Params(PlanFields):
    """A model served or trained on some GPUs of one type: the engine's request of POST /api/plan (through
    PlanFields: every field, bound, validator and message declared there, once), with the slide's own starting
    model and sharding."""

    model: ModelChoice = default(PlanRequest, "model", "llama-3.1-70b")
    sharding: Sharding = default(PlanRequest, "sharding", "zero3")


class Row(BaseModel):
    key: str
    label: str
    bytes: int


class CapacityView(BaseModel):
    """One GPU's share as a bar: segments, the capacity line, ticks, rows and the verdict."""

    plan: Plan
    model_name: str
    gpu_name: str
    mode: Literal["serve", "train"]
    gpus: int
    segments: list[Segment]
    rows: list[Row]
    ticks: list[Tick]
    capacity_x: float
    end_x: float
    over_width: float
    bar_width: int = BAR_WIDTH
    view_width: int = BAR_WIDTH + 56
    verdict: str
    over_bytes: int


def compute(params: Params) -> CapacityView:
    """The engine's plan, one GPU's share laid out against its capacity."""
    req = params.request()
    plan = make_plan(req)
    mem = plan.per_gpu
    parts = [(c, COMPONENT_LABELS[c], float(getattr(mem, c))) for c in COMPONENTS]
    ticks = linear_ticks(max(mem.total, mem.capacity) / 1e9, BAR_WIDTH, lambda v: f"{v:g} GB", target=4)
    scale = BAR_WIDTH / (ticks[-1].value * 1e9)
    over = max(0, mem.total - mem.capacity)
    each = "each GPU" if req.gpus > 1 else "one GPU"
    verdict = (
        f"Fits: {gb(mem.total, 1)} of {gb(mem.capacity, 0)} on {each}."
        if plan.fits
        else f"Does not fit: {each} would need {gb(mem.total, 1)} of {gb(mem.capacity, 0)}, "
        f"{gb(over, 1)} too much."
    )
    return CapacityView(
        plan=plan,
        model_name=req.architecture.name,
        gpu_name=get_gpu(req.gpu).name,
        mode=req.mode,
        gpus=req.gpus,
        segments=stacked(parts, scale),
        rows=[Row(key=c, label=label, bytes=int(v)) for c, label, v in parts if v],
        ticks=ticks,
        capacity_x=round(mem.capacity * scale, 2),
        end_x=round(mem.total * scale, 2),
        over_width=round(over * scale, 2),
        verdict=verdict,
        over_bytes=over,
    )


def place(params: Params, view: CapacityView) -> NodeLoad:
    """The plan on dgx-1, whose GPUs are H100s; another GPU type leaves the panel idle and says why."""
    if params.gpu != "h100":
        node = idle_node()
        node.activity = f"idle: this slide's plan uses {view.gpu_name}, and dgx-1 holds H100s"
        return node
    return node_load(view.plan)


WIDGET = Widget(
    name="memory-capacity",
    title="Does it fit in GPU memory?",
    params=Params,
    compute=compute,
    template="widgets/memory-capacity.html",
    node_load=place,
    description="One GPU's share of a model, served or trained, against its memory.",
)
