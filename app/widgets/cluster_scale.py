"""Cluster-scale calculator: GPUs a run needs for its memory and for its deadline; days at a chosen count."""

from __future__ import annotations

import math

from pydantic import BaseModel, Field

from app.engine.models import get_model
from app.engine.sizing import ClusterScale, cluster_scale
from app.engine.text import num, plural, seconds
from app.widgets._fields import MODEL_OPTIONS, ModelId
from app.widgets._plot import LogAxis, Tick
from app.widgets.base import Widget

AXIS = 380  # SVG units of the log GPU axis


class Params(BaseModel):
    """The run and the cluster asked about."""

    model: ModelId = Field(default="llama-3.1-405b", description="A catalog model id")
    tokens: float = Field(
        default=15.6e12, ge=1e6, le=1e16, allow_inf_nan=False, description="Training tokens"
    )
    mfu: float = Field(
        default=0.41, ge=0.05, le=1, allow_inf_nan=False, description="Model FLOPs utilisation"
    )
    gpus: int = Field(default=16_384, ge=1, le=1_000_000, description="GPUs to size the time for")
    deadline_days: float = Field(
        default=90, ge=1, le=3650, allow_inf_nan=False, description="Days the run may take"
    )


class GpuBar(BaseModel):
    """One demand for GPUs as a bar on the log axis."""

    key: str
    label: str
    gpus: int | None
    width: float
    y: float


class ClusterView(BaseModel):
    """The engine's sizing and its bars."""

    c: ClusterScale
    bars: list[GpuBar]
    ticks: list[Tick]
    axis: int = AXIS
    axis_mid: float = AXIS / 2
    view_width: int = AXIS + 200
    models: list[tuple[str, str]]
    refusal: str = Field(description="When the chosen count cannot hold the run: that, said first; else empty")
    announcement: str


def compute(params: Params) -> ClusterView:
    """Both walls of the run, and bars of GPUs on a log scale."""
    c = cluster_scale(get_model(params.model), params.tokens, params.mfu, params.gpus, params.deadline_days)
    demands = [
        ("state", "Memory: state only", c.gpus_for_state),
        ("memory", "Memory: all of it", c.gpus_for_memory),
        ("deadline", f"Deadline: {plural(params.deadline_days, 'day')}", c.gpus_for_deadline),
        ("chosen", "Your count", c.gpus),
    ]
    top = max(n or 1 for _, _, n in demands)
    axis = LogAxis(lo=0, hi=max(3, math.ceil(math.log10(top) + 1e-9)), length=AXIS)
    bars = [
        GpuBar(key=k, label=label, gpus=n, width=axis.pos(n) if n else 0.0, y=4 + 26 * i)
        for i, (k, label, n) in enumerate(demands)
    ]
    refusal = _refusal(c)
    said = refusal or (
        f"{seconds(c.seconds_at_gpus)} on {plural(c.gpus, 'GPU')}; the deadline needs {num(c.gpus_for_deadline)}."
    )
    return ClusterView(
        c=c, bars=bars, ticks=axis.ticks(lambda e: f"{10**e:,}"), models=MODEL_OPTIONS, refusal=refusal,
        announcement=said,
    )


def _refusal(c: ClusterScale) -> str:
    """A count that cannot hold the run gets no time: the run never starts, whatever the arithmetic says."""
    if c.holds_state:
        return ""
    need = f"it needs at least {num(c.gpus_for_memory)}" if c.gpus_for_memory else "no number of GPUs holds it"
    have = "has" if c.gpus == 1 else "have"
    return f"This run cannot start: {plural(c.gpus, 'GPU')} {have} too little memory to hold it; {need}."


WIDGET = Widget(
    name="cluster-scale",
    title="Cluster-scale calculator",
    params=Params,
    compute=compute,
    template="widgets/cluster-scale.html",
    description="GPUs needed for memory and for a deadline, and days at a chosen count.",
)
