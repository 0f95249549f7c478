"""Memory capacity, for a slide: one GPU's share of a plan as a stacked bar against the GPU's memory."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field, ValidationInfo, field_validator

from app.engine.hardware import get_gpu
from app.engine.placement import COMPONENT_LABELS, COMPONENTS, NodeLoad, idle_node
from app.engine.plan import Plan, PlanRequest, make_plan, node_load
from app.engine.text import gb
from app.engine.workload import TRAINING_PRECISIONS, GpuId, Mode, Precision, Sharding, split_field
from app.widgets._fields import ModelId
from app.widgets._plot import Segment, Tick, linear_ticks, stacked
from app.widgets.base import Widget

BAR_WIDTH = 360


class Params(BaseModel):
    """A model served or trained on some GPUs of one type."""

    model: ModelId = Field(default="llama-3.1-70b", description="A catalog model id")
    mode: Mode = Field(default="serve", description="serve or train")
    precision: Precision = Field(default="bf16", description="Storage precision of the weights")
    gpu: GpuId = Field(default="h100", description="GPU type")
    gpus: int = Field(
        default=1,
        ge=1,
        le=64,
        description="GPUs sharing the work; serving: a count that divides the model's attention heads",
    )
    sharding: Sharding = Field(default="zero3", description="Training: how the state spreads over the GPUs")
    batch_size: int = Field(default=1, ge=1, le=1024, description="Sequences together")
    context_tokens: int = Field(
        default=8192, ge=1, le=131_072, description="Tokens cached, or sequence length"
    )

    @field_validator("precision")
    @classmethod
    def _trainable(cls, value: str, info: ValidationInfo) -> str:
        if info.data.get("mode") == "train" and value not in TRAINING_PRECISIONS:
            raise ValueError(f"Training needs fp32, bf16, fp16 or fp8 weights; {value} is for serving only.")
        return value

    @field_validator("gpus")
    @classmethod
    def _even_split(cls, value: int, info: ValidationInfo) -> int:
        """Serving splits every layer's attention heads over the GPUs (tensor parallel): the engine's rule and
        message, beside the field."""
        return split_field(value, info)

    def request(self) -> PlanRequest:
        return PlanRequest.model_validate(self.model_dump(include=set(PlanRequest.model_fields)))


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
