"""The five questions of infrastructure work, each answered for one model with a number from the engine."""

from __future__ import annotations

import math
from typing import Literal
from urllib.parse import urlencode

from pydantic import BaseModel, Field, field_validator

from app.engine import compute as engine_compute
from app.engine.cost import CostAssumptions, break_even_utilisation
from app.engine.errors import DoesNotFit
from app.engine.hardware import DGX_H100
from app.engine.models import CATALOG, check_model_id, get_model
from app.engine.plan import Plan, PlanRequest, make_plan
from app.engine.sizing import ClusterScale, cluster_scale
from app.engine.text import gb, num, pct, plural, sci, seconds, usd
from app.engine.training_run import RUN_CHECKPOINTING, RUN_SEQUENCE_TOKENS, TrainingRun, simulate_training
from app.engine.workload import ASSUMED_MFU
from app.widgets._fields import MODEL_OPTIONS
from app.widgets.base import Widget
from app.widgets.training_run import GPU_CHOICES

LESSON = "what-ai-workloads-need"
MFU = ASSUMED_MFU  # the MFU a sizing starts from when the learner names none (app.engine.workload)
DEFAULT_MODEL = PlanRequest().model


class Params(BaseModel):
    """The model the five answers are for, and the training job the GPU count is sized for."""

    model: str = Field(default="llama-3.1-8b", description="Catalog model id")
    train_tokens: float = Field(
        default=15e12, ge=1e6, le=1e16, allow_inf_nan=False, description="Tokens to train on"
    )
    deadline_days: float = Field(
        default=90, ge=0.1, le=3650, allow_inf_nan=False, description="Days the run may take (from 0.1, 2.4 hours)"
    )

    @field_validator("model")
    @classmethod
    def _known(cls, value: str) -> str:
        return check_model_id(value)


class Link(BaseModel):
    """A step of the lesson whose widget answers the question, named by the step's file, not its number."""

    step: str = Field(description="The step's name (its file's name without the number), e.g. number-one-compute")
    widget: str = Field(description="The widget on that step that works it out; empty for a drill")
    title: str = Field(description="What the widget shows")
    href: str


class Answer(BaseModel):
    """One question, its short answer, the number behind it, and where to work it out."""

    key: str
    question: str
    answer: str
    detail: str
    links: list[Link]


class Result(BaseModel):
    """The five answers."""

    model_name: str
    models: list[tuple[str, str]] = Field(default=MODEL_OPTIONS, description="Catalog models to pick from")
    answers: list[Answer]


# Where each question is worked out: (step, widget on that step, what it shows); a step is named by its file.
STEPS: dict[str, list[tuple[str, str, str]]] = {
    "fit": [("a-model-is-a-pile-of-numbers", "plan", "a plan on one GPU"),
            ("break-it-train-it-anyway", "plan", "training refused"),
            ("break-it-number-two-capacity", "plan", "an overflow and its fixes"),
            ("drill-will-it-fit", "", "the fit drill")],
    "speed": [("number-one-compute", "compute-time", "compute time and MFU"),
              ("number-three-memory-bandwidth", "decode-speed", "decode speed"),
              ("maths-or-memory-never-both", "roofline", "the roofline")],
    "gpus": [("training-at-real-scale", "cluster-scale", "GPUs for memory and for a deadline")],
    "failure": [("break-it-train-it-anyway", "plan", "the refused launch"),
                ("a-training-run-you-can-watch", "training-run", "a starved training run")],
    "cost": [("where-ai-runs", "own-vs-rent", "own against rent")],
}


def _query(widget_name: str, scenario: dict[str, object]) -> dict[str, str]:
    """The scenario's values the widget takes, as a query: only those that differ from its default and that it
    accepts, so the widget opens on the very scenario the answer quotes."""
    from app.widgets.registry import get_widget

    widget = get_widget(widget_name)  # the catalog lists this module: look up at call time
    if widget is None:
        return {}
    fields = widget.params.model_fields
    query: dict[str, str] = {}
    for key, value in scenario.items():
        if key not in fields or value == fields[key].default:
            continue
        text = f"{value:g}" if isinstance(value, float) else str(value)
        try:
            # with the values before it: a GPU count may suit one model only
            widget.params.model_validate({**query, key: text})
        except ValueError:
            continue  # outside the widget's range: it opens at its own value
        query[key] = text
    return query


def _links(
    key: str,
    scenario: dict[str, object],
    steps: list[tuple[str, str, str]] | None = None,
    extra: dict[str, dict[str, object]] | None = None,
) -> list[Link]:
    """Links to the steps by name (the server finds their numbers); a widget opens on the answer's scenario, plus
    `extra` values for the named widget alone."""
    links = []
    for step, name, title in steps or STEPS[key]:
        values = {**scenario, **(extra or {}).get(name, {})}
        query: dict[str, str] = {"widget": name, **_query(name, values)} if name else {}
        href = f"/lessons/{LESSON}/step/{step}" + (f"?{urlencode(query)}" if query else "")
        links.append(Link(step=step, widget=name, title=title, href=href))
    return links


class _Plans(BaseModel):
    """The plans the answers read: serving on one GPU, training on one GPU, training sharded over eight."""

    model: str
    serve: Plan
    train: Plan
    sharded: Plan
    cluster: ClusterScale
    tokens: float
    days: float

    @property
    def scenario(self) -> dict[str, object]:
        """The values every answer shares, by the names the widgets give them."""
        return {"model": self.model, "tokens": self.tokens, "deadline_days": self.days, "mfu": MFU}


def _plans(p: Params) -> _Plans:
    def train(gpus: int, sharding: Literal["none", "zero3"], checkpointing: Literal["none", "full"]) -> Plan:
        return make_plan(
            PlanRequest(
                model=p.model,
                mode="train",
                gpus=gpus,
                sharding=sharding,
                mfu=MFU,
                activation_checkpointing=checkpointing,
                train_tokens=p.train_tokens,
            )
        )

    return _Plans(
        model=p.model,
        serve=make_plan(PlanRequest(model=p.model)),
        train=train(1, "none", "none"),
        sharded=train(DGX_H100.gpus, "zero3", "full"),
        cluster=cluster_scale(get_model(p.model), p.train_tokens, MFU, DGX_H100.gpus, p.deadline_days),
        tokens=p.train_tokens,
        days=p.deadline_days,
    )


def _fit(c: _Plans) -> Answer:
    serve, train, need = c.serve.per_gpu, c.train.per_gpu, c.sharded.min_gpus
    state = train.weights + train.gradients + train.optimizer
    verdict = "fits" if c.serve.fits else f"does not fit; it needs {num(c.serve.min_gpus or 0)} GPUs"
    sharded = f"{num(need)} GPUs" if need else "no number of GPUs"
    return Answer(
        key="fit",
        question="Does it fit?",
        links=_links("fit", {"model": c.model}),
        answer=f"Serving: {gb(serve.total, 1)} of {gb(serve.capacity, 0)}: {verdict}.",
        detail=f"Training with Adam on one GPU keeps {gb(state, 1)} of weights, gradients and optimizer "
        f"state, "
        f"{gb(train.total, 1)} with the activations and loss head of one {num(c.train.request.context_tokens)}-token "
        f"sequence: {'it fits' if c.train.fits else 'it does not fit'}. With ZeRO-3 and full activation "
        f"checkpointing it fits on {sharded}.",
    )


def _speed(c: _Plans) -> Answer:
    ridge = engine_compute.ridge("h100", "bf16")
    intensity = engine_compute.decode_intensity(1, "bf16")
    gpus = 1 if c.serve.fits else c.serve.min_gpus
    steps = STEPS["speed"]
    if gpus is None:  # no number of GPUs holds it: no speed to give
        answer = "Decoding for one user: no speed, because no number of H100s holds the model."
    else:  # a model too big for one H100 is timed where it runs, split evenly (tensor parallel)
        plan = c.serve if gpus == 1 else make_plan(PlanRequest(model=c.model, gpus=gpus))
        assert plan.serve is not None
        where = "one H100" if gpus == 1 else f"{num(gpus)} H100s, the fewest that hold it (it does not fit on one)"
        answer = (f"Decoding for one user: {plan.bottleneck.replace('-', ' ')}, "
                  f"{num(plan.serve.tokens_per_second)} tokens a second on {where}.")
        if gpus > 1 or c.model != DEFAULT_MODEL:
            # step 15 times one GPU and asks its guess about its own model first: the playground's plan, on as
            # many GPUs and this model, shows the very figure quoted
            where_short = "one H100" if gpus == 1 else f"{num(gpus)} H100s"
            steps = [*steps[:1], ("playground", "plan", f"decode on {where_short}"), *steps[2:]]
    return Answer(
        key="speed", question="What limits its speed?", answer=answer,
        links=_links("speed", c.scenario, steps, {"plan": {"gpus": gpus or 1, "mode": "serve"}}),
        detail=f"A decode step at batch 1 does about {intensity:.0f} FLOP per byte it reads, far below the "
        f"H100's ridge point of {ridge:.0f}: memory bandwidth, not maths, sets the pace. Prefill and "
        "training sit above the ridge and are compute-bound.",
    )


def _gpus(c: _Plans) -> Answer:
    k = c.cluster
    nodes = math.ceil(k.gpus_needed / DGX_H100.gpus)
    memory = num(k.gpus_for_memory) if k.gpus_for_memory else "more than any cluster"
    one = (f"one GPU at {pct(MFU)} MFU would need {seconds(k.seconds_on_one_gpu)}" if k.gpus_for_memory == 1 else
           f"one GPU cannot hold the run; as arithmetic only, at {pct(MFU)} MFU it would need "
           f"{seconds(k.seconds_on_one_gpu)}")
    return Answer(
        key="gpus", question="How many GPUs?",
        links=_links("gpus", c.scenario, extra={"cluster-scale": {"gpus": k.gpus_needed}}),
        answer=f"{plural(k.gpus_needed, 'H100')} ({plural(nodes, 'dgx-1 node')}) to train on "
        f"{sci(c.tokens)} tokens in {plural(c.days, 'day')}.",
        detail=f"Memory alone asks for {memory}; the deadline asks for {num(k.gpus_for_deadline)}: {one}.",
    )


def _fed_run(model: str) -> tuple[int, float] | None:
    """The training run's GPU count and tokens a second: dgx-1's eight GPUs if they hold it, else the fewest of
    the run widget's counts that do (None if none does)."""
    for gpus in (n for n in GPU_CHOICES if n >= DGX_H100.gpus):
        run = TrainingRun(model=model, gpus=gpus, sharding="zero3", batch_size=1, mfu=MFU,
                          context_tokens=RUN_SEQUENCE_TOKENS, activation_checkpointing=RUN_CHECKPOINTING)
        try:
            return gpus, simulate_training(run, 0, 0).gpu_tokens_per_second
        except DoesNotFit:
            continue
    return None


def _failure(c: _Plans) -> Answer:
    train = c.train.per_gpu
    answer = (f"Most often capacity: training on one GPU asks for {gb(train.total, 1)} of "
              f"{gb(train.capacity, 0)}." if not c.train.fits else
              "Most often capacity, caught by the memory sum before the job starts.")
    fed = _fed_run(c.model)
    if fed is None:
        detail = (f"Or a starved pipeline: a data loader slower than the GPUs leaves them waiting. No speed is given "
                  f"here: step 5's run, with selective checkpointing, cannot hold this model on up to "
                  f"{GPU_CHOICES[-1]} GPUs.")
        gpus = DGX_H100.gpus
    else:
        gpus, rate = fed
        where = f"{num(gpus)} H100s" if gpus == DGX_H100.gpus else (
            f"{num(gpus)} H100s (dgx-1's {DGX_H100.gpus} cannot hold the run)")
        detail = (f"Or a starved pipeline: {where} at {pct(MFU)} MFU take {num(rate)} tokens a second, "
                  f"{rate / RUN_SEQUENCE_TOKENS:,.1f} sequences of {RUN_SEQUENCE_TOKENS:,} tokens a second; a slower "
                  "data loader leaves them waiting.")
    return Answer(
        key="failure", question="Why did it fail?", answer=answer, detail=detail,
        links=_links("failure", {"model": c.model}, extra={"training-run": {"gpus": gpus, "mfu": MFU}}),
    )


def _cost(c: _Plans) -> Answer:
    assert c.train.train is not None
    hours = c.train.train.gpu_hours
    rent = CostAssumptions().rent_usd_per_gpu_hour
    even = break_even_utilisation(CostAssumptions())
    prices = "the illustrative prices of the own-vs-rent widget"
    detail = (f"Owning a dgx-1 pays above {pct(even)} utilisation at {prices}; below it, renting costs less."
              if even is not None else f"At {prices} renting costs less at any utilisation.")
    return Answer(
        key="cost", question="What does it cost?", links=_links("cost", c.scenario), detail=detail,
        answer=f"{num(hours)} GPU-hours to train on {sci(c.tokens)} tokens: {usd(hours * rent)} rented at "
        f"{usd(rent, 2)} an hour (illustrative).",
    )


def compute(params: Params) -> Result:
    """Five answers from the engine: memory, bound, GPU count, failure modes, cost."""
    c = _plans(params)
    answers = [_fit(c), _speed(c), _gpus(c), _failure(c), _cost(c)]
    return Result(model_name=CATALOG[params.model].name, answers=answers)


WIDGET = Widget(
    name="five-questions",
    title="The five questions, answered for one model",
    params=Params,
    compute=compute,
    template="widgets/five-questions.html",
    description="Does it fit, what limits its speed, how many GPUs, why did it fail, what does it cost: "
    "each answered with a number from the engine and a link to the step whose widget works it out.",
)
