"""Compute time: training FLOPs ÷ (GPUs × peak × MFU), with an MFU slider and the curve it moves along.

The run is also placed on the dgx-1 panel: each GPU's memory from the engine's training plan (Adam, ZeRO-3
over the GPUs, one sequence of the engine's sizing length a GPU with activation checkpointing, the same
assumptions as the cluster-scale widget). A fed GPU is busy all the time, as in step 5's training run: the MFU
is how much of its peak each busy second achieves, not how often it is busy, so the panel shows 100 % busy and
full power whatever the MFU, and names the MFU in its activity line.
"""

from __future__ import annotations

from pydantic import BaseModel, Field

from app.engine.models import get_model
from app.engine.placement import NODE_GPUS, GpuLoad, NodeLoad, spread
from app.engine.plan import PlanRequest, make_plan, node_load
from app.engine.sizing import SEQUENCE_TOKENS, ComputeTime, compute_time
from app.engine.text import gb, pct, plural, seconds
from app.engine.units import SECONDS_PER_DAY, SECONDS_PER_HOUR, SECONDS_PER_YEAR
from app.engine.workload import MAX_GPUS
from app.widgets._fields import MODEL_OPTIONS, ModelId
from app.widgets._plot import Tick, linear_ticks
from app.widgets.base import Widget

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
    """The engine's time, its chart, and the run as the dgx-1 panel shows it."""

    t: ComputeTime
    chart: TimeChart
    models: list[tuple[str, str]]
    announcement: str
    sequence_tokens: int = Field(description="Tokens a sequence in the panel's memory plan")
    node: NodeLoad = Field(description="The run on dgx-1's eight GPUs")
    refusal: str = Field(description="When the training plan does not fit the GPUs: that, said first; else empty")

    @property
    def first_gpu(self) -> GpuLoad:
        """GPU 0 as the panel shows it: the plan's memory on each GPU, its power (or the overflow)."""
        return self.node.gpus[0]


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


def _run_on_node(params: Params, model_name: str) -> NodeLoad:
    """The training plan's memory on each GPU, busy (fed) at the MFU; a plan that overflows shows why, stays idle."""
    # Beyond MAX_GPUS the plan is sized at MAX_GPUS: each GPU's share no longer changes at the panel's precision.
    req = PlanRequest(
        model=params.model, mode="train", gpus=min(params.gpus, MAX_GPUS), sharding="zero3",
        context_tokens=SEQUENCE_TOKENS, activation_checkpointing="full", train_tokens=params.tokens, mfu=params.mfu,
    )
    plan = make_plan(req)
    if not plan.fits:
        return node_load(plan)
    shown = node_load(plan).gpus[0]
    gpus = plural(params.gpus, "GPU")
    first = f", the first {NODE_GPUS} shown" if params.gpus > NODE_GPUS else ""
    return spread(
        shown.parts,
        params.gpus,
        activity=f"training {model_name} on {gpus} at {pct(params.mfu)} MFU{first}",
        utilisation=1.0,  # fed: never waiting on data (the training run's utilisation at full feed)
        capacity=shown.capacity,
    )


def compute(params: Params) -> TimeView:
    """Time of 6·N·D FLOPs at the chosen MFU, the curve over MFU, and the run placed on dgx-1."""
    t = compute_time(get_model(params.model), params.tokens, params.gpus, params.mfu)
    node = _run_on_node(params, t.model)
    refusal = "" if node.fits else (
        f"This run cannot start: on {plural(params.gpus, 'GPU')} the training plan needs "
        f"{gb(node.gpus[0].used, 1)} a GPU, more than its {gb(node.gpus[0].capacity, 0)}. Add GPUs."
    )
    said = refusal or f"At {pct(params.mfu)} MFU: {seconds(t.seconds)}."
    return TimeView(
        t=t, chart=_chart(t), models=MODEL_OPTIONS, announcement=said, sequence_tokens=SEQUENCE_TOKENS,
        node=node, refusal=refusal,
    )


def place(params: Params, view: TimeView) -> NodeLoad:
    """The run on dgx-1, as computed with the time."""
    return view.node


WIDGET = Widget(
    name="compute-time",
    title="Compute time",
    params=Params,
    compute=compute,
    template="widgets/compute-time.html",
    node_load=place,
    description="time = FLOPs ÷ (GPUs × peak × MFU), with an MFU slider; the run is placed on the dgx-1 "
    "panel (the training plan's memory per GPU under ZeRO-3, every GPU busy).",
)
