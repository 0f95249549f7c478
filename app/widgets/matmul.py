"""Matrix-multiply counter: (m × k) by (k × n) costs 2·m·k·n FLOPs; the bytes it moves and its intensity."""

from __future__ import annotations

from pydantic import BaseModel, Field

from app.engine.matmul import Matmul, matmul
from app.engine.workload import Precision
from app.widgets._fields import PRECISION_OPTIONS
from app.widgets._plot import Tick, linear_ticks
from app.widgets.base import Widget

BAR_WIDTH = 360  # SVG units of the bytes axis
DIM_MAX = 1_000_000  # a million rows or columns: well past any layer of the catalog
NAMES = {"inputs": "Inputs (m × k)", "weights": "Weights (k × n)", "outputs": "Outputs (m × n)"}


class Params(BaseModel):
    """The three sizes of the multiply and the storage precision."""

    m: int = Field(default=1, ge=1, le=DIM_MAX, description="Rows of the input: tokens processed together")
    k: int = Field(default=4096, ge=1, le=DIM_MAX, description="Numbers in each input row (the weight matrix's rows)")
    n: int = Field(
        default=14_336, ge=1, le=DIM_MAX, description="Columns of the weight matrix: numbers in each output row"
    )
    precision: Precision = Field(default="bf16", description="Storage precision of every number")


class Bar(BaseModel):
    """One matrix's bytes as a bar."""

    name: str
    label: str
    rows: int
    cols: int
    bytes: float
    width: float
    y: float = Field(description="Top of the bar's row in SVG units")


class MatmulView(BaseModel):
    """The engine's count and its bars."""

    mm: Matmul
    bars: list[Bar]
    ticks: list[Tick]
    unit: str = Field(description="MB or GB on the bytes axis")
    options: list[tuple[str, str]]
    bar_width: int = BAR_WIDTH
    view_width: int = BAR_WIDTH + 140
    axis_mid: float = BAR_WIDTH / 2
    memory_bound: bool
    announcement: str


def compute(params: Params) -> MatmulView:
    """FLOPs, bytes and intensity from the engine; bars of bytes on a shared axis."""
    mm = matmul(params.m, params.k, params.n, params.precision)
    top = max(x.bytes for x in mm.matrices)
    scale, unit = (1e9, "GB") if top >= 1e9 else (1e6, "MB")
    ticks = linear_ticks(top / scale, BAR_WIDTH, lambda v: f"{v:g}")
    px = BAR_WIDTH / (ticks[-1].value * scale)
    bars = [
        Bar(
            name=x.name,
            label=NAMES[x.name],
            rows=x.rows,
            cols=x.cols,
            bytes=x.bytes,
            width=round(x.bytes * px, 2),
            y=6 + 28 * i,
        )
        for i, x in enumerate(mm.matrices)
    ]
    said = f"{mm.flops:,.0f} FLOPs; {mm.intensity:,.1f} FLOPs per byte moved."
    return MatmulView(
        mm=mm,
        bars=bars,
        ticks=ticks,
        unit=unit,
        options=PRECISION_OPTIONS,
        memory_bound=mm.time.binds == "memory-bandwidth",
        announcement=said,
    )


WIDGET = Widget(
    name="matmul",
    title="Matrix-multiply counter",
    params=Params,
    compute=compute,
    template="widgets/matmul.html",
    description="2·m·k·n FLOPs of one matrix multiply, the bytes of its matrices and its intensity.",
)
