"""The plan: a model served or trained on dgx-1: what each GPU holds, whether it fits, how fast, and why."""

from __future__ import annotations

import re

from pydantic import BaseModel, Field, field_validator

from app.engine import memory
from app.engine.errors import DoesNotFit
from app.engine.fixes import fixes
from app.engine.hardware import get_gpu
from app.engine.models import Architecture
from app.engine.placement import COMPONENT_LABELS, COMPONENTS, NODE_GPUS, NodeLoad
from app.engine.plan import Plan, PlanRequest, make_plan, node_load
from app.engine.power import gpu_watts
from app.engine.text import gb
from app.engine.training_memory import state_breakdown
from app.engine.workload import split_counts
from app.widgets._fields import MODEL_OPTIONS, PRECISION_OPTIONS, PlanFields, PredictKey, check_key
from app.widgets._plot import Segment, Tick, linear_ticks, stacked
from app.widgets.base import Prediction, Widget

# Every knob of POST /api/plan that the widget can show, in the order the form lists them.
KNOBS: tuple[str, ...] = (
    "model",
    "mode",
    "precision",
    "kv_precision",
    "gpus",
    "sharding",
    "batch_size",
    "context_tokens",
    "prompt_tokens",
    "output_tokens",
    "train_tokens",
    "optimizer",
    "activation_checkpointing",
    "mfu",
)
DEFAULT_KNOBS = {
    "serve": ("model", "precision", "gpus", "batch_size", "context_tokens"),
    "train": ("model", "gpus", "sharding", "batch_size", "context_tokens", "activation_checkpointing"),
}
PREDICT_KEYS = ("gpu0_gb", "launch")
BAR_WIDTH = 460  # SVG units of the per-GPU bar's axis
# The engine's names of the parts, two of them said more fully beside the per-GPU bar.
LABELS = {**COMPONENT_LABELS, "loss_head": "Loss head (logits)", "runtime": "Runtime (CUDA, libraries)"}
BOTTLENECKS = {
    "capacity": "Capacity: it does not fit, so it does not run at all",
    "compute": "Compute: the GPUs' arithmetic sets the pace",
    "memory-bandwidth": "Memory bandwidth: reading the weights sets the pace",
}
OPTIONS: dict[str, list[tuple[str, str]]] = {
    "model": MODEL_OPTIONS,
    "mode": [("serve", "Serve (answer requests)"), ("train", "Train (learn the weights)")],
    "precision": PRECISION_OPTIONS,
    "kv_precision": PRECISION_OPTIONS,
    "sharding": [
        ("none", "None"),
        ("zero1", "ZeRO-1 (optimizer)"),
        ("zero2", "ZeRO-2 (+ gradients)"),
        ("zero3", "ZeRO-3 (+ weights)"),
    ],
    "activation_checkpointing": [
        ("none", "None: keep every activation"),
        ("selective", "Selective: keep the matrix multiplies' outputs"),
        ("full", "Full: keep each layer's input only"),
    ],
    "optimizer": [
        ("adam", "Adam, mixed precision"),
        ("adam-fp32", "Adam, fp32"),
        ("sgd-momentum", "SGD with momentum"),
        ("adam-8bit", "8-bit Adam"),
    ],
}


def _knob_list(value: object) -> str:
    """Knobs as a comma-separated string; a YAML list, 'all' or a list's text form are accepted too."""
    if isinstance(value, list | tuple):
        value = ",".join(str(v) for v in value)
    names = [n for n in re.split(r"[\s,\[\]'\"]+", str(value)) if n]
    if names == ["all"]:
        return "all"
    unknown = [n for n in names if n not in KNOBS]
    if unknown:
        raise ValueError(f"Unknown knob {', '.join(unknown)}. Knobs: all, {', '.join(KNOBS)}.")
    return ",".join(names)


class Params(PlanFields):
    """The engine's request of POST /api/plan (app.engine.workload.PlanRequest, through PlanFields: every field,
    bound, validator and message declared there, once), and how the widget presents it."""

    knobs: str = Field(default="", description="Controls shown: comma-separated names, 'all', or empty for a few")
    launch: bool = Field(default=False, description="Show a Launch button")
    fixes: bool = Field(default=False, description="Offer the smallest changes that make the plan fit")
    predict: PredictKey = Field(default="", description="Ask for a guess first: true, gpu0_gb or launch")
    launched: bool = Field(default=False, description="Launch was pressed (set by the button, not by lessons)")

    @field_validator("gpu")
    @classmethod
    def _on_dgx1(cls, value: str) -> str:
        """The plan is placed on dgx-1, whose GPUs are H100s (the memory-capacity slide compares GPU types)."""
        if value != "h100":
            raise ValueError("This plan runs on dgx-1, whose GPUs are H100s.")
        return value

    @field_validator("knobs", mode="before")
    @classmethod
    def _knobs(cls, value: object) -> str:
        return _knob_list(value)

    @field_validator("predict")
    @classmethod
    def _predict(cls, value: str) -> str:
        return check_key(value, PREDICT_KEYS)

    def shown(self) -> tuple[str, ...]:
        """The knobs that get a control; the others ride along as hidden fields."""
        if self.knobs == "all":
            return KNOBS
        return tuple(k for k in self.knobs.split(",") if k) or DEFAULT_KNOBS[self.mode]

    def predict_key(self) -> str:
        """The question asked before the reveal: GB on GPU 0 (serve) or whether the job starts (train)."""
        if self.predict == "auto":
            return "gpu0_gb" if self.mode == "serve" else "launch"
        return self.predict


class Row(BaseModel):
    """A line of the per-GPU table: the text twin of the bar."""

    key: str
    label: str
    bytes: int
    share: float = Field(description="Share of one GPU's memory")


class FixLink(BaseModel):
    """A change that makes the plan fit, as the widget offers it."""

    sentence: str
    changes: dict[str, object]
    fields: str = Field(description="The plan fields it changes, comma-separated (a hook for tests)")


class LaunchOutcome(BaseModel):
    """What pressing Launch does: refused before anything starts, or accepted."""

    started: bool
    message: str


class PlanView(BaseModel):
    """The plan as the widget shows it: the engine's plan, the per-GPU bar and table, fixes, launch."""

    plan: Plan
    model_name: str
    gpu_name: str
    mode: str
    gpus: int
    shown: tuple[str, ...]
    options: dict[str, list[tuple[str, str]]]
    rows: list[Row]
    segments: list[Segment]
    ticks: list[Tick]
    capacity_x: float
    capacity_anchor: str = Field(description="SVG text-anchor of the capacity label")
    bar_width: int = BAR_WIDTH
    view_width: int = BAR_WIDTH + 40
    axis_mid: float = BAR_WIDTH / 2
    total_share: float = Field(description="Per-GPU total ÷ capacity")
    explanation: list[str] = Field(description="The engine's sentences; no speed for a plan that cannot run")
    over_bytes: int = Field(description="Bytes beyond capacity on each GPU, 0 when it fits")
    over_width: float = Field(description="SVG width of the part beyond capacity")
    bottleneck: str
    fixes: list[FixLink]
    launch: LaunchOutcome | None
    state_bytes: int = Field(description="Training state before activations (train mode), else 0")
    announcement: str
    gpus_hint: str = Field(description="The GPU counts that work for this model and mode, before the learner types")


def _launch(plan: Plan) -> LaunchOutcome:
    """Pressing Launch: the same arithmetic, so the same answer every time."""
    mem = plan.per_gpu
    if not plan.fits:
        reason = DoesNotFit(0, mem.total, mem.capacity)
        return LaunchOutcome(
            started=False,
            message=f"Launch refused before anything started. {reason} "
            "Nothing was allocated and no step ran; pressing Launch again gives this same "
            "answer, because the sum has not changed.",
        )
    return LaunchOutcome(
        started=True,
        message=f"Launch accepted: each GPU's share, {gb(mem.total, 1)} of "
        f"{gb(mem.capacity, 0)}, fits, so the job would start. Step 5 runs one you can watch.",
    )


FIX_OPENINGS = ("Smallest change that fits", "Or: ", "No single change")


def _sentences(plan: Plan) -> list[str]:
    """The engine's explanation; a plan that does not fit stops after the verdict and its fixes."""
    lines = plan.explanation
    if plan.fits:
        return lines
    end = lines.index(memory.verdict(plan.per_gpu)) + 1
    while end < len(lines) and lines[end].startswith(FIX_OPENINGS):
        end += 1
    return lines[:end]


def _anchor(x: float) -> str:
    """Text anchor of a label at x on the bar, kept inside the chart."""
    return "end" if x > BAR_WIDTH - 60 else "start" if x < 60 else "middle"


def _tick_label(gb_value: float) -> str:
    """A tick in GB: 2.5, 150, 1,000,000."""
    return f"{gb_value:,.0f}" if gb_value >= 1e5 else f"{gb_value:,g}"


def _fix_links(params: Params, req: PlanRequest, plan: Plan) -> list[FixLink]:
    """Up to three changes that make a plan that does not fit fit, as links the learner can follow."""
    found = fixes(req) if params.fixes and not plan.fits else []
    return [FixLink(sentence=f.sentence, changes={**f.changes, "launched": False}, fields=",".join(sorted(f.changes)))
            for f in found[:3]]


def _headline(plan: Plan) -> str:
    mem = plan.per_gpu
    if plan.fits:
        return f"Fits: {gb(mem.total)} of {gb(mem.capacity, 0)} on each GPU."
    return f"Does not fit: each GPU would need {gb(mem.total)} of {gb(mem.capacity, 0)}."


def gpus_hint(arch: Architecture, mode: str) -> str:
    """Which GPU counts work, in words step 1 has taught: training takes any count; serving splits every layer over
    the GPUs, so only counts that divide its attention heads (learner walk W3)."""
    if mode == "train":
        return "1 to 8 on dgx-1 (each GPU trains on its own sequences); more take more than one server."
    counts = split_counts(arch)
    here, beyond = [n for n in counts if n <= NODE_GPUS], [n for n in counts if n > NODE_GPUS]
    more = f"; {_or(beyond)} GPUs take more than one server" if beyond else ""
    return (f"For {arch.name}: {_or(here)} on dgx-1. Serving gives each GPU an equal share of every layer, and a "
            f"layer's {arch.heads} attention heads cannot be cut, so the count must divide {arch.heads}{more}.")


def _or(counts: list[int]) -> str:
    words = [f"{n:,}" for n in counts]
    return words[0] if len(words) == 1 else f"{', '.join(words[:-1])} or {words[-1]}"


def compute(params: Params) -> PlanView:
    """The engine's plan for these fields, laid out for the widget."""
    req = params.request()
    plan = make_plan(req)
    mem = plan.per_gpu
    parts = [(c, LABELS[c], float(getattr(mem, c))) for c in COMPONENTS]
    ticks = linear_ticks(max(mem.total, mem.capacity) / 1e9, BAR_WIDTH, _tick_label, target=6)
    scale = BAR_WIDTH / (ticks[-1].value * 1e9)
    rows = [Row(key=c, label=label, bytes=int(v), share=v / mem.capacity) for c, label, v in parts if v > 0]
    launch = _launch(plan) if params.launched else None
    arch = req.architecture
    return PlanView(
        plan=plan, model_name=arch.name,
        gpu_name=get_gpu(req.gpu).name, mode=req.mode, gpus=req.gpus, shown=params.shown(), options=OPTIONS,
        rows=rows, segments=stacked(parts, scale), ticks=ticks,
        capacity_x=max(round(mem.capacity * scale, 2), 1.0),  # visible even beside a huge total
        capacity_anchor=_anchor(mem.capacity * scale), total_share=mem.total / mem.capacity,
        over_bytes=max(0, mem.total - mem.capacity), over_width=round(max(0, mem.total - mem.capacity) * scale, 2),
        bottleneck=BOTTLENECKS[plan.bottleneck], fixes=_fix_links(params, req, plan), explanation=_sentences(plan),
        launch=launch, announcement=launch.message if launch else _headline(plan),
        state_bytes=state_breakdown(arch, req.optimizer, req.precision).bytes if req.mode == "train" else 0,
        gpus_hint=gpus_hint(arch, req.mode),
    )


def place(params: Params, view: PlanView) -> NodeLoad:
    """The plan on dgx-1's eight GPUs, overflow and all. A training job that fits is only planned until Launch is
    pressed (learner walk W10): its memory is drawn as the plan reserves it, but no GPU is busy or draws more than
    its bare idle power."""
    node = node_load(view.plan)
    plan = view.plan
    if plan.request.mode != "train" or not plan.fits:
        return node
    if view.launch is not None and view.launch.started:
        return node.model_copy(update={"activity": f"{node.activity}: launched, computing"})
    idle = gpu_watts(0.0, get_gpu(plan.request.gpu))
    press = ", press Launch to start it" if params.launch else ""
    return node.model_copy(update={
        "gpus": [g.model_copy(update={"utilisation": 0.0, "power_w": idle}) for g in node.gpus],
        "activity": f"{node.activity}: planned, not launched{press}",
    })


def predict(params: Params, view: PlanView) -> Prediction:
    """The question a learner answers before the reveal, and the engine's answer to it."""
    mem = view.plan.per_gpu
    answer = {"unit": "GB", "answer": mem.total / 1e9, "answer_text": gb(mem.total, 1)}
    if params.predict_key() == "launch":
        return Prediction(
            **answer,
            key="launch",
            question="How many GB does each GPU need for this job?",
            choice_label="Will the job start?",
            choices=[("starts", "It starts"), ("refused", "It is refused")],
            answer_choice="starts" if view.plan.fits else "refused",
        )
    return Prediction(**answer, key="gpu0_gb", question=f"How many GB of GPU 0's {gb(mem.capacity, 0)} will it take?")


WIDGET = Widget(
    name="plan",
    title="Plan on dgx-1",
    params=Params,
    compute=compute,
    template="widgets/plan.html",
    node_load=place,
    description="Any model served or trained on dgx-1: memory per GPU, the verdict, speed and why.",
    predict=predict,
)
