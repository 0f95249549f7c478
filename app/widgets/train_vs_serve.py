"""Training and inference side by side, every row computed for the model chosen."""

from __future__ import annotations

from pydantic import BaseModel, Field

from app.engine.comparison import TrainVsServe, train_vs_serve
from app.engine.models import get_model
from app.engine.text import plural
from app.widgets._fields import MODEL_OPTIONS, ModelId
from app.widgets.base import Widget

LIMITS = {"compute": "compute", "memory-bandwidth": "memory bandwidth", "capacity": "capacity"}


class Params(BaseModel):
    """The model to compare the two jobs for."""

    model: ModelId = Field(default="llama-3.1-8b", description="A catalog model id")


class ComparisonView(BaseModel):
    """The engine's comparison, with the limits in words."""

    c: TrainVsServe
    active_parameters: int = Field(description="N in 2·N and 6·N: the parameters one token passes through")
    experts: int = Field(description="MLP experts a layer (1: a dense model)")
    experts_per_token: int = Field(description="Experts each token is routed to")
    serve_limit: str
    train_limit: str
    models: list[tuple[str, str]]
    announcement: str


def compute(params: Params) -> ComparisonView:
    """Serving and training plans for the model, from the engine."""
    c = train_vs_serve(params.model)
    arch = get_model(params.model)
    said = f"{c.model}: serving on {plural(c.serve_gpus, 'GPU')}, training on {plural(c.train_gpus, 'GPU')}."
    return ComparisonView(
        c=c,
        active_parameters=arch.active_parameters,
        experts=arch.experts,
        experts_per_token=arch.experts_per_token,
        serve_limit=LIMITS[c.serve.bottleneck],
        train_limit=LIMITS[c.train.bottleneck],
        models=MODEL_OPTIONS,
        announcement=said,
    )


WIDGET = Widget(
    name="train-vs-serve",
    title="Training and inference, side by side",
    params=Params,
    compute=compute,
    template="widgets/train-vs-serve.html",
    description="Memory, FLOPs per token, limit, metric and schedule for both jobs of one model.",
)
