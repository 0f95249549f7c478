"""Training state line by line: what each byte of a parameter's training memory is for."""

from __future__ import annotations

import math

from pydantic import BaseModel, ConfigDict, Field

from app.engine.hardware import get_gpu
from app.engine.memory import bytes_per_parameter
from app.engine.models import Architecture
from app.engine.training_state import training_precision, training_state

# The optimizer's running averages, per parameter, in the order they are listed (Kingma & Ba 2015 for
# Adam's two moments; SGD with momentum keeps one velocity; 8-bit Adam, Dettmers et al. 2022, keeps
# both moments in one byte each). Their sums equal training_state.training_state's moments.
_MOMENT_LINES: dict[str, tuple[tuple[str, str, float], ...]] = {
    "adam": (("moment1", "Adam first moment (fp32)", 4.0), ("moment2", "Adam second moment (fp32)", 4.0)),
    "adam-fp32": (
        ("moment1", "Adam first moment (fp32)", 4.0),
        ("moment2", "Adam second moment (fp32)", 4.0),
    ),
    "sgd-momentum": (("momentum", "Momentum (fp32)", 4.0),),
    "adam-8bit": (
        ("moment1", "Adam first moment (8-bit)", 1.0),
        ("moment2", "Adam second moment (8-bit)", 1.0),
    ),
}


class StateLine(BaseModel):
    """One line of the training state: bytes a parameter and bytes for the whole model."""

    model_config = ConfigDict(frozen=True)

    key: str = Field(description="weights, gradients, master, moment1, moment2 or momentum")
    label: str = Field(description="What the line holds, for a learner")
    component: str = Field(description="The dgx-1 panel component it belongs to")
    bytes_per_parameter: float = Field(description="Bytes this line keeps for every parameter")
    bytes: int = Field(description="Bytes for the whole model")


class StateBreakdown(BaseModel):
    """Every line of a model's training state against the weights it needs to serve."""

    model_config = ConfigDict(frozen=True)

    model: str = Field(description="Model name")
    parameters: int = Field(description="Parameters held in memory")
    optimizer: str = Field(description="Optimizer id")
    note: str = Field(description="The optimizer and precision in words")
    lines: list[StateLine] = Field(description="Weights, gradients, master copy, optimizer moments")
    bytes_per_parameter: float = Field(description="Sum of the lines, bytes a parameter")
    bytes: int = Field(description="Sum of the lines for the whole model (before activations)")
    serve_bytes_per_parameter: float = Field(description="Bytes a parameter to serve at the same precision")
    serve_bytes: int = Field(description="The weights alone at that precision")
    ratio: float = Field(description="Training state ÷ serving weights")
    capacity: int = Field(description="Memory of one GPU")
    gpus_to_hold: int = Field(description="GPUs whose memory the state alone fills: ceil(state ÷ capacity)")


def state_lines(optimizer: str, precision: str = "bf16") -> list[tuple[str, str, str, float]]:
    """(key, label, panel component, bytes a parameter) for each line of the training state."""
    st = training_state(optimizer, precision)
    working = training_precision(optimizer, precision)
    lines = [
        ("weights", f"Weights ({working}), read by the forward and backward passes", "weights", st.weights),
        ("gradients", f"Gradients ({working}), one per weight", "gradients", st.gradients),
    ]
    if working != "fp32":
        lines.append(
            ("master", "Master copy of the weights (fp32) that the updates go into", "optimizer", 4.0)
        )
    lines += [(key, label, "optimizer", b) for key, label, b in _MOMENT_LINES[optimizer]]
    return lines


def state_breakdown(
    arch: Architecture, optimizer: str = "adam", precision: str = "bf16", gpu_id: str = "h100"
) -> StateBreakdown:
    """A model's training state, line by line, before activations."""
    n = arch.parameters
    lines = [
        StateLine(key=k, label=label, component=comp, bytes_per_parameter=b, bytes=math.ceil(n * b))
        for k, label, comp, b in state_lines(optimizer, precision)
    ]
    total = sum(x.bytes for x in lines)
    serve = bytes_per_parameter(precision)
    capacity = get_gpu(gpu_id).memory_bytes
    return StateBreakdown(
        model=arch.name,
        parameters=n,
        optimizer=optimizer,
        note=training_state(optimizer, precision).note,
        lines=lines,
        bytes_per_parameter=sum(x.bytes_per_parameter for x in lines),
        bytes=total,
        serve_bytes_per_parameter=serve,
        serve_bytes=math.ceil(n * serve),
        ratio=sum(x.bytes_per_parameter for x in lines) / serve,
        capacity=capacity,
        gpus_to_hold=math.ceil(total / capacity),
    )
