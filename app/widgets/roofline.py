"""The roofline: attainable FLOP/s = min(peak, intensity × bandwidth); batching moves decode to the ridge."""

from __future__ import annotations

from pydantic import BaseModel, Field, field_validator

from app.engine.decode import DecodePoint, DecodeRoofline, decode_roofline
from app.engine.models import get_model
from app.engine.placement import NodeLoad
from app.engine.plan import Plan, PlanRequest, make_plan, node_load
from app.engine.text import flops_rate, gb, plural
from app.engine.workload import Precision
from app.widgets._fields import MODEL_OPTIONS, PRECISION_OPTIONS, ModelId, PredictKey, check_key
from app.widgets._plot import LogAxis, Tick
from app.widgets.base import Prediction, Widget

PLOT_W, PLOT_H = 420, 210
X_AXIS = (-1, 4)  # intensity from 0.1 to 10,000 FLOPs per byte
Y_AXIS = (11, 16)  # attainable from 100 GFLOPS to 10 PFLOPS
PREDICT_KEYS = ("batch_at_ridge",)


class Params(BaseModel):
    """Model, precision and the decode batch."""

    model: ModelId = Field(default="llama-3.1-8b", description="A catalog model id")
    precision: Precision = Field(default="bf16", description="Storage precision of the weights")
    batch_size: int = Field(default=1, ge=1, le=1024, description="Sequences sharing each decode step")
    context_tokens: int = Field(
        default=1000, ge=0, le=131_072, description="KV cache per sequence (0: ignore it)"
    )
    predict: PredictKey = Field(default="", description="Ask for a guess first: true or batch_at_ridge")

    @field_validator("predict")
    @classmethod
    def _predict(cls, value: str) -> str:
        return check_key(value, PREDICT_KEYS)


class Dot(BaseModel):
    """An operating point in SVG units."""

    key: str
    label: str
    x: float
    y: float
    radius: float
    point: DecodePoint


class RooflineChart(BaseModel):
    """The roofs, the ridge and the operating points, in SVG units."""

    roof: str = Field(description="SVG polyline points of the roofline")
    achieved: str = Field(
        default="", description="SVG polyline points of what real kernels reach: MAMF share and achieved bandwidth"
    )
    ridge_x: float
    peak_y: float
    dots: list[Dot]
    x_ticks: list[Tick]
    y_ticks: list[Tick]
    width: int = PLOT_W
    height: int = PLOT_H
    x_mid: float = PLOT_W / 2
    y_mid: float = PLOT_H / 2


class RooflineView(BaseModel):
    """The engine's roofline of decode and its chart."""

    r: DecodeRoofline
    chart: RooflineChart
    models: list[tuple[str, str]]
    precisions: list[tuple[str, str]]
    announcement: str
    fits: bool = Field(description="True when the batch, weights and every sequence's KV cache fit one H100")
    needed: float = Field(description="Bytes the batch needs on the H100")
    capacity: float = Field(description="Bytes one H100 holds")
    stops: list[int] = Field(description="Batch sizes offered beside the box: round ones and the ridge's")
    node: NodeLoad = Field(exclude=True, description="The batch placed on dgx-1, from the same plan as `fits`")


def _chart(r: DecodeRoofline) -> RooflineChart:
    """Log-log geometry: the slope up to the ridge, the flat roof after it, decode's points under them."""
    xs, ys = (
        LogAxis(lo=X_AXIS[0], hi=X_AXIS[1], length=PLOT_W),
        LogAxis(lo=Y_AXIS[0], hi=Y_AXIS[1], length=PLOT_H, flip=True),
    )
    rl = r.roofline
    left = 10.0 ** X_AXIS[0]
    corners = [(left, left * rl.bandwidth), (rl.ridge, rl.peak_flops), (10.0 ** X_AXIS[1], rl.peak_flops)]
    knee = rl.achieved_peak_flops / rl.achieved_bandwidth
    below = [
        (left, left * rl.achieved_bandwidth),
        (knee, rl.achieved_peak_flops),
        (10.0 ** X_AXIS[1], rl.achieved_peak_flops),
    ]
    points = [("weights", "Decode, weights only", r.weights_only)]
    if r.with_kv is not None:
        points.append(
            ("kv", f"Decode with each sequence's KV cache ({plural(r.context_tokens, 'token')})", r.with_kv)
        )
    return RooflineChart(
        roof=" ".join(f"{xs.pos(a)},{ys.pos(b)}" for a, b in corners),
        achieved=" ".join(f"{xs.pos(a)},{ys.pos(b)}" for a, b in below),
        ridge_x=xs.pos(rl.ridge),
        peak_y=ys.pos(rl.peak_flops),
        dots=[
            Dot(
                key=k,
                label=label,
                x=xs.pos(p.point.intensity),
                y=ys.pos(p.point.flops),
                radius=7 if k == "weights" else 5,
                point=p,
            )
            for k, label, p in points
        ],
        x_ticks=xs.ticks(lambda e: f"{10.0**e:,g}"),
        y_ticks=ys.ticks(lambda e: flops_rate(10.0**e)),
    )


def _plan(params: Params) -> Plan:
    """The batch served on one H100: every sequence brings its own KV cache."""
    ctx = max(params.context_tokens, 1)
    return make_plan(
        PlanRequest(
            model=params.model,
            precision=params.precision,
            batch_size=params.batch_size,
            context_tokens=ctx,
            prompt_tokens=min(1000, ctx),
        )
    )


def compute(params: Params) -> RooflineView:
    """Decode at the chosen batch on the H100's roofline, from the engine, and whether that batch fits."""
    r = decode_roofline(get_model(params.model), params.precision, params.batch_size, params.context_tokens)
    w = r.weights_only
    plan = _plan(params)
    side = "compute" if w.point.binds == "compute" else "memory"
    said = f"Batch {params.batch_size}: {w.point.intensity:,.0f} FLOPs per byte, {side} side of the ridge."
    if not plan.fits:
        said = (f"Batch {params.batch_size} does not fit on one H100: it needs {gb(plan.per_gpu.total, 1)} "
                f"of {gb(plan.per_gpu.capacity, 0)}.")
    ridge = [n for n in (r.batch_at_ridge, r.batch_at_ridge_with_kv) if n and n <= 1024]
    return RooflineView(
        r=r, chart=_chart(r), models=MODEL_OPTIONS, precisions=PRECISION_OPTIONS, announcement=said,
        fits=plan.fits, needed=plan.per_gpu.total, capacity=plan.per_gpu.capacity,
        stops=sorted({1, 8, 32, 64, 128, 256, 512, 1024, *ridge}), node=node_load(plan),
    )


def place(params: Params, view: RooflineView) -> NodeLoad:
    """The batch served on one H100: every sequence brings its own KV cache (placed from compute's own plan)."""
    return view.node


def predict(params: Params, view: RooflineView) -> Prediction:
    """The batch at which decode reaches the ridge, guessed before the slider is shown."""
    r = view.r
    n = r.batch_at_ridge
    said = f"{n:,} sequences, counting the weights alone" if n else "never, even counting the weights alone"
    if n and r.with_kv is not None and r.batch_at_ridge_with_kv is None:
        said += (f"; with each sequence's KV cache of {plural(r.context_tokens, 'token')} read as well, decode never "
                 "reaches it")
    if n and r.max_batch_fits is not None and n > r.max_batch_fits:
        said += f", and at most {r.max_batch_fits:,} sequences' caches fit on one H100"
    return Prediction(
        key="batch_at_ridge",
        unit="sequences",
        question="Counting the weights alone, how many sequences must share each decode step before it reaches "
        "the ridge?",
        answer=float(n or 0),
        answer_text=said,
    )


WIDGET = Widget(
    name="roofline",
    title="The roofline",
    params=Params,
    compute=compute,
    template="widgets/roofline.html",
    node_load=place,
    description="Log-log roofline of an H100 with decode's operating point moved by the batch.",
    predict=predict,
)
