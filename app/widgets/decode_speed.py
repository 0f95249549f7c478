"""Decode speed: one user's tokens/s ≤ memory bandwidth ÷ bytes read per token, by model, precision, GPU."""

from __future__ import annotations

from pydantic import BaseModel, Field, field_validator

from app.engine.decode import DecodeComparison, decode_comparison
from app.engine.hardware import HBM_ACHIEVED_SHARE
from app.engine.models import get_model
from app.engine.placement import NodeLoad
from app.engine.plan import PlanRequest, node_load
from app.engine.workload import GpuId, Precision
from app.widgets._fields import GPU_OPTIONS, MODEL_OPTIONS, PRECISION_OPTIONS, ModelId, PredictKey, check_key
from app.widgets._plot import Tick, linear_ticks
from app.widgets.base import Prediction, Widget

BAR_WIDTH = 340
PREDICT_KEYS = ("tokens_per_second",)


class Params(BaseModel):
    """Model, precision, GPU generation and the conversation's length."""

    model: ModelId = Field(default="llama-3.1-8b", description="A catalog model id")
    precision: Precision = Field(default="bf16", description="Storage precision of the weights")
    gpu: GpuId = Field(default="h100", description="GPU generation")
    context_tokens: int = Field(default=8192, ge=1, le=1_048_576, description="Tokens in the KV cache")
    predict: PredictKey = Field(default="", description="Ask for a guess first: true or tokens_per_second")

    @field_validator("predict")
    @classmethod
    def _predict(cls, value: str) -> str:
        return check_key(value, PREDICT_KEYS)


class SpeedBar(BaseModel):
    """One generation's ceiling: weights only (the full bar) and with the KV cache (the solid part)."""

    gpu: str
    name: str
    selected: bool
    y: float
    weights_width: float
    with_kv_width: float


class DecodeView(BaseModel):
    """The engine's ceilings and their bars."""

    d: DecodeComparison
    bars: list[SpeedBar]
    ticks: list[Tick]
    bar_width: int = BAR_WIDTH
    view_width: int = BAR_WIDTH + 140
    axis_mid: float = BAR_WIDTH / 2
    models: list[tuple[str, str]]
    precisions: list[tuple[str, str]]
    gpus: list[tuple[str, str]]
    refusal: str = Field(description="When the chosen GPU cannot hold the plan: that, said first; else empty")
    unread_bytes: float = Field(description="Weights a decode step does not read: other tokens' embedding rows")
    achieved_share: float = Field(default=HBM_ACHIEVED_SHARE, description="Share of peak HBM bandwidth achieved")
    announcement: str


def compute(params: Params) -> DecodeView:
    """Decode ceilings on A100, H100 and H200 from the engine; one axis of tokens/s."""
    d = decode_comparison(get_model(params.model), params.precision, params.gpu, params.context_tokens)
    top = max(s.weights_only_tokens_per_second for s in d.speeds)
    ticks = linear_ticks(top, BAR_WIDTH, lambda v: f"{v:,g}", target=5)
    px = BAR_WIDTH / ticks[-1].value
    names = dict(GPU_OPTIONS)
    bars = [
        SpeedBar(
            gpu=s.gpu,
            name=names[s.gpu],
            selected=s.gpu == params.gpu,
            y=6 + 30 * i,
            weights_width=round(s.weights_only_tokens_per_second * px, 2),
            with_kv_width=round(s.tokens_per_second * px, 2),
        )
        for i, s in enumerate(d.speeds)
    ]
    chosen = d.chosen
    refusal = "" if chosen.fits else (
        f"{d.model} in {d.precision} does not fit on one {chosen.gpu_name}, so it decodes no tokens there: "
        f"every speed shown for it is arithmetic only."
    )
    said = refusal or f"{names[params.gpu]}: about {chosen.tokens_per_second:,.0f} tokens a second for one user."
    return DecodeView(
        d=d,
        bars=bars,
        ticks=ticks,
        models=MODEL_OPTIONS,
        precisions=PRECISION_OPTIONS,
        gpus=GPU_OPTIONS,
        refusal=refusal,
        unread_bytes=chosen.model_weight_bytes - chosen.weight_bytes,
        announcement=said,
    )


def place(params: Params, view: DecodeView) -> NodeLoad:
    """The same model served on one of dgx-1's H100s: weights and KV cache on GPU 0."""
    return node_load(
        PlanRequest(model=params.model, precision=params.precision, context_tokens=params.context_tokens)
    )


def predict(params: Params, view: DecodeView) -> Prediction:
    """How fast one user is served, guessed before the ceiling is shown."""
    s = view.d.chosen
    return Prediction(
        key="tokens_per_second",
        unit="tokens/s",
        question=f"How many tokens a second can one {dict(GPU_OPTIONS)[s.gpu]} produce for one user of "
        f"{view.d.model} in {view.d.precision}?",
        answer=s.tokens_per_second,
        answer_text=f"{s.tokens_per_second:,.0f} tokens/s",
    )


WIDGET = Widget(
    name="decode-speed",
    title="Decode speed",
    params=Params,
    compute=compute,
    template="widgets/decode-speed.html",
    node_load=place,
    description="tokens/s ≤ bandwidth ÷ bytes read per token, on A100, H100 and H200.",
    predict=predict,
)
