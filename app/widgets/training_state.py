"""Training-state breakdown: bytes a parameter to train, line by line, against the bytes it needs to serve."""

from __future__ import annotations

from pydantic import BaseModel, Field

from app.engine.errors import DoesNotFit
from app.engine.models import get_model
from app.engine.placement import NodeLoad, spread
from app.engine.text import gb
from app.engine.training_memory import StateBreakdown, state_breakdown
from app.engine.workload import Optimizer
from app.widgets._fields import MODEL_OPTIONS, ModelId
from app.widgets._plot import Segment, Tick, linear_ticks, stacked
from app.widgets.base import Widget

BAR_WIDTH = 400
OPTIMIZERS = [
    ("adam", "Adam, mixed precision"),
    ("adam-fp32", "Adam, fp32"),
    ("sgd-momentum", "SGD with momentum"),
    ("adam-8bit", "8-bit Adam"),
]


class Params(BaseModel):
    """A model and an optimizer."""

    model: ModelId = Field(default="llama-3.1-8b", description="A catalog model id")
    optimizer: Optimizer = Field(default="adam", description="The optimizer and its state")


class StateView(BaseModel):
    """The engine's breakdown with its two bars: training state and serving weights, on one GB axis."""

    state: StateBreakdown
    train: list[Segment]
    serve: list[Segment]
    ticks: list[Tick]
    capacity_x: float
    bar_width: int = BAR_WIDTH
    view_width: int = BAR_WIDTH + 110
    axis_mid: float = BAR_WIDTH / 2
    models: list[tuple[str, str]]
    optimizers: list[tuple[str, str]]
    announcement: str


def compute(params: Params) -> StateView:
    """Every line of the training state, summed, and the same model's weights to serve."""
    s = state_breakdown(get_model(params.model), params.optimizer)
    ticks = linear_ticks(max(s.bytes, s.capacity) / 1e9, BAR_WIDTH, lambda v: f"{v:,g}", target=5)
    px = BAR_WIDTH / (ticks[-1].value * 1e9)
    train = stacked([(x.component, x.label, float(x.bytes)) for x in s.lines], px)
    serve = stacked([("weights", "Weights to serve", float(s.serve_bytes))], px)
    said = (
        f"{s.bytes_per_parameter:g} bytes a parameter: {gb(s.bytes, 1)} of training state, "
        f"{s.ratio:g} times the weights."
    )
    return StateView(
        state=s,
        train=train,
        serve=serve,
        ticks=ticks,
        capacity_x=round(s.capacity * px, 2),
        models=MODEL_OPTIONS,
        optimizers=OPTIMIZERS,
        announcement=said,
    )


def place(params: Params, view: StateView) -> NodeLoad:
    """The training state alone on GPU 0; the master copy and the moments count as optimizer state."""
    s = view.state
    parts = {"weights": 0, "gradients": 0, "optimizer": 0}
    for line in s.lines:
        parts[line.component] += line.bytes
    why = (
        ""
        if s.bytes <= s.capacity
        else (
            f"{DoesNotFit(0, s.bytes, s.capacity)} That is the training state alone, before any activation: "
            f"the memory of {s.gpus_to_hold} GPUs."
        )
    )
    return spread(
        parts,
        1,
        activity=f"training state of {s.model} ({s.note}) on GPU 0, before activations",
        why=why,
        capacity=s.capacity,
    )


WIDGET = Widget(
    name="training-state",
    title="Training-state breakdown",
    params=Params,
    compute=compute,
    template="widgets/training-state.html",
    node_load=place,
    description="Bytes a parameter for weights, gradients, master copy and optimizer moments, summed.",
)
