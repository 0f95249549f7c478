"""Compute time: training FLOPs ÷ (GPUs × peak × MFU), with an MFU slider and the curve it moves along."""

from __future__ import annotations

from pydantic import BaseModel, Field

from app.engine.models import get_model
from app.engine.sizing import ComputeTime, compute_time
from app.engine.units import SECONDS_PER_DAY, SECONDS_PER_HOUR, SECONDS_PER_YEAR
from app.format import seconds
from app.widgets._fields import MODEL_OPTIONS, ModelId
from app.widgets._plot import Tick, linear_ticks
from app.widgets.base import Widget
from app.widgets.registry import register

PLOT_W, PLOT_H = 400, 160  # SVG units of the plot area
LABELLED = (1, 3, 5, 7, 10)  # tenths of MFU whose ticks carry a label
MFU_FROM = 0.1  # the chart starts at 10 % MFU: below it the curve leaves the page
UNITS = (
    (SECONDS_PER_YEAR, "years"),
    (SECONDS_PER_DAY, "days"),
    (SECONDS_PER_HOUR, "hours"),
    (60, "minutes"),
    (1, "seconds"),
)


class Params(BaseModel):
    """The run and its efficiency."""

    model: ModelId = Field(default="llama-3.1-8b", description="A catalog model id")
    tokens: float = Field(default=15e12, ge=1e6, le=1e16, allow_inf_nan=False, description="Training tokens")
    gpus: int = Field(default=8, ge=1, le=1_000_000, description="GPUs")
    mfu: float = Field(default=0.4, ge=0.05, le=1, allow_inf_nan=False, description="Model FLOPs utilisation")


class TimeChart(BaseModel):
    """Time against MFU, in SVG units."""

    points: str = Field(description="SVG polyline points of the curve")
    marker_x: float
    marker_y: float
    x_ticks: list[Tick]
    y_ticks: list[Tick]
    unit: str
    width: int = PLOT_W
    height: int = PLOT_H
    x_mid: float = PLOT_W / 2
    y_mid: float = PLOT_H / 2


class TimeView(BaseModel):
    """The engine's time and its chart."""

    t: ComputeTime
    chart: TimeChart
    models: list[tuple[str, str]]
    announcement: str


def _chart(t: ComputeTime) -> TimeChart:
    """The curve from 10 % to 100 % MFU in the largest unit that keeps its numbers readable."""
    curve = [p for p in t.curve if p.mfu >= MFU_FROM - 1e-9]
    top = curve[0].seconds
    size, unit = next((s, u) for s, u in UNITS if top >= 2 * s or s == 1)
    y_ticks = linear_ticks(top / size, PLOT_H, lambda v: f"{v:,g}", target=4)
    y_end = y_ticks[-1].value * size
    y_ticks = [Tick(value=k.value, pos=round(PLOT_H - k.pos, 2), label=k.label) for k in y_ticks]

    def x(mfu: float) -> float:
        return round((mfu - MFU_FROM) / (1 - MFU_FROM) * PLOT_W, 2)

    def y(secs: float) -> float:
        return round(PLOT_H - secs / y_end * PLOT_H, 2)

    return TimeChart(
        points=" ".join(f"{x(p.mfu)},{y(p.seconds)}" for p in curve),
        marker_x=x(max(t.mfu, MFU_FROM)),
        marker_y=y(t.seconds) if t.mfu >= MFU_FROM else 0.0,
        x_ticks=[
            Tick(value=m / 10, pos=x(m / 10), label=f"{m * 10} %" if m in LABELLED else "")
            for m in range(1, 11)
        ],
        y_ticks=y_ticks,
        unit=unit,
    )


def compute(params: Params) -> TimeView:
    """Time of 6·N·D FLOPs at the chosen MFU, and the curve over MFU."""
    t = compute_time(get_model(params.model), params.tokens, params.gpus, params.mfu)
    said = f"At {params.mfu:.0%} MFU: {seconds(t.seconds)}."
    return TimeView(t=t, chart=_chart(t), models=MODEL_OPTIONS, announcement=said)


WIDGET = register(
    Widget(
        name="compute-time",
        title="Compute time",
        params=Params,
        compute=compute,
        template="widgets/compute-time.html",
        description="time = FLOPs ÷ (GPUs × peak × MFU), with an MFU slider.",
    )
)
