"""Bandwidth vs capacity, for a slide: fitting is one question, decode speed another."""

from __future__ import annotations

from pydantic import BaseModel, Field

from app.engine.hardware import HBM_ACHIEVED_SHARE
from app.engine.limits import GpuLimits, compare_gpus
from app.engine.plan import PlanRequest, make_plan
from app.engine.workload import GpuId, Precision
from app.widgets._fields import ModelId
from app.widgets._plot import LogAxis, Tick
from app.widgets.base import Widget

BAR_WIDTH = 300
SHORT_NAMES = {"a100": "A100", "h100": "H100", "h200": "H200"}
AXIS = LogAxis(lo=-1, hi=4, length=BAR_WIDTH)  # FLOPs per byte, 0.1 to 10,000


class Params(BaseModel):
    """A model served to one or a few users on one GPU."""

    model: ModelId = Field(default="llama-3.1-8b", description="A catalog model id")
    precision: Precision = Field(default="bf16", description="Storage precision of the weights")
    gpu: GpuId = Field(default="h100", description="The GPU looked at closely")
    batch_size: int = Field(default=1, ge=1, le=512, description="Sequences decoded together")
    context_tokens: int = Field(default=8192, ge=1, le=131_072, description="Tokens each sequence keeps cached")

    def request(self) -> PlanRequest:
        return PlanRequest(
            model=self.model,
            precision=self.precision,
            gpu=self.gpu,
            batch_size=self.batch_size,
            context_tokens=self.context_tokens,
        )


class CompareRow(BaseModel):
    """One GPU in the comparison table, in the units of its column headings."""

    gpu: str
    name: str
    tb_per_s: float
    tflops: float
    tokens_per_second: float = Field(description="The ceiling: bytes read at the datasheet bandwidth, no fixed cost")
    served_tokens_per_second: float = Field(description="What serving reaches: achieved bandwidth, fixed cost a step")
    fits: bool
    chosen: bool


class LimitsView(BaseModel):
    chosen: GpuLimits
    served_tokens_per_second: float = Field(description="Each sequence on the chosen GPU, as the plan serves it")
    achieved_share: float = Field(default=HBM_ACHIEVED_SHARE, description="Share of the bandwidth decode reaches")
    others: list[GpuLimits]
    rows: list[CompareRow]
    capacity_needed_width: float
    capacity_width: float
    memory_time_width: float
    compute_time_width: float
    bar_width: int = BAR_WIDTH
    label_x: int = 110
    end_x: int = 110 + BAR_WIDTH
    view_width: int = 110 + BAR_WIDTH + 10
    axis_view_width: int = BAR_WIDTH + 50
    intensity_x: float
    ridge_x: float
    ticks: list[Tick]
    gpu_names: dict[str, str]


def _served(params: Params, gpu: str) -> float:
    """One sequence's decode speed on one GPU of this kind as the plan serves it (the figure the flagship shows)."""
    serve = make_plan(params.request().model_copy(update={"gpu": gpu})).serve
    assert serve is not None  # a serving request always has serving figures
    return serve.tokens_per_second


def compute(params: Params) -> LimitsView:
    """Capacity and decode bounds on every GPU, the chosen one drawn."""
    rows = compare_gpus(params.request())
    served = {g.gpu: _served(params, g.gpu) for g in rows}
    chosen = next(g for g in rows if g.gpu == params.gpu)
    cap_top = max(chosen.needed_bytes, chosen.memory_bytes)
    time_top = max(chosen.memory_seconds, chosen.compute_seconds)
    return LimitsView(
        chosen=chosen,
        served_tokens_per_second=served[chosen.gpu],
        others=rows,
        rows=[
            CompareRow(
                gpu=g.gpu,
                name=SHORT_NAMES[g.gpu],
                tb_per_s=g.bandwidth / 1e12,
                tflops=g.peak_flops / 1e12,
                tokens_per_second=g.tokens_per_second,
                served_tokens_per_second=served[g.gpu],
                fits=g.fits,
                chosen=g.gpu == chosen.gpu,
            )
            for g in rows
        ],
        capacity_needed_width=round(BAR_WIDTH * chosen.needed_bytes / cap_top, 2),
        capacity_width=round(BAR_WIDTH * chosen.memory_bytes / cap_top, 2),
        memory_time_width=round(BAR_WIDTH * chosen.memory_seconds / time_top, 2),
        compute_time_width=max(1.0, round(BAR_WIDTH * chosen.compute_seconds / time_top, 2)),
        intensity_x=AXIS.pos(chosen.intensity),
        ridge_x=AXIS.pos(chosen.ridge),
        ticks=AXIS.ticks(lambda e: f"{10.0**e:,g}"),
        gpu_names=SHORT_NAMES,
    )


WIDGET = Widget(
    name="bandwidth-capacity",
    title="Fits, and how fast it reads",
    params=Params,
    compute=compute,
    template="widgets/bandwidth-capacity.html",
    description="Does it fit, and decode time per token from bandwidth: one model on A100, H100, H200.",
)
