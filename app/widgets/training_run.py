"""Live training run: 6·N·D of maths at an MFU, played in fast simulated time, fed by a data loader."""

from __future__ import annotations

from typing import Annotated, ClassVar

from pydantic import BaseModel, Field, field_validator

from app.engine import compute as engine_compute
from app.engine.errors import DoesNotFit
from app.engine.hardware import get_gpu, peak_flops
from app.engine.models import check_model_id
from app.engine.plan import make_plan
from app.engine.plan import node_load as plan_node_load
from app.engine.run_load import training_load
from app.engine.text import gb, num, pct, plural, ratio, seconds
from app.engine.training_run import (
    RUN_CHECKPOINTING,
    RUN_SEQUENCE_TOKENS,
    TrainingResume,
    TrainingRun,
    TrainingSnapshot,
    loss_at,
    simulate_training,
)
from app.widgets import _live
from app.widgets._chart import Frame, Plot
from app.widgets.base import Widget, one_of

# A starved run plays slower on screen, but at most this many times slower than the GPUs' own pace.
MAX_SLOWDOWN = 4
# Below this share of time waiting, the loader is called "only just keeping up" rather than starving the GPUs.
STARVED_FROM = 0.01
GPU_CHOICES = (1, 2, 4, 8, 16, 32, 64)


class Params(_live.LiveParams):
    """Settings of the run; the live fields (start time, seed, replay length) come from LiveParams.

    A run continues across a change of its MFU, data loader, token target or replay length. A new model or GPU
    count is a new run: it sets the checkpoint's size and the nodes writing it, and a real job that changes its
    GPU count restarts from a checkpoint anyway. A new seed is a new run too (another loss wobble)."""

    STRETCH_SETTINGS: ClassVar[tuple[str, ...]] = ("mfu", "tokens", "loader_samples_per_second")
    STATE_SIZE: ClassVar[int] = 2  # training seconds done, tokens done
    RUN_IDENTITY: ClassVar[tuple[str, ...]] = ("model", "gpus", "seed")

    model: str = Field(default="llama-3.1-8b", description="Catalog model id")
    gpus: Annotated[int, one_of(*GPU_CHOICES)] = Field(default=8, description="Data-parallel GPUs (ZeRO-3)")
    mfu: float = Field(
        default=0.4, ge=0.05, le=1, allow_inf_nan=False, description="Share of peak FLOPS reached"
    )
    tokens: float = Field(default=1e9, ge=1e6, le=1e13, allow_inf_nan=False, description="Tokens to train on")
    loader_samples_per_second: float = Field(
        default=64,
        ge=0.1,
        le=1e6,
        allow_inf_nan=False,
        description=f"Sequences of {RUN_SEQUENCE_TOKENS:,} tokens a second the data loader delivers",
    )

    @field_validator("model")
    @classmethod
    def _known(cls, value: str) -> str:
        return check_model_id(value)


class LossChart(BaseModel):
    """The loss curve so far, on axes that span the whole run."""

    frame: Frame
    points: str
    now_x: float
    now_y: float
    checkpoints: list[float] = Field(description="x of each checkpoint shown")
    caption: str


class Result(_live.LiveResult):
    """Everything the training-run template shows."""

    gpu_options: list[tuple[str, str]] = [
        (str(n), f"{n} ({n // 8} dgx-1 nodes)" if n > 8 else str(n)) for n in GPU_CHOICES
    ]
    sequence_tokens: int = RUN_SEQUENCE_TOKENS
    speed: float = Field(description="Simulated seconds per wall second")
    pace: str = Field(default="", description="How simulated time compares with the learner's, in a sentence")
    advice: str = Field(default="", description="What would let a refused run start, in a sentence")
    starved_words: str = Field(default="", description="The loader's verdict: starved, or only just keeping up")
    snap: TrainingSnapshot | None = None
    parameters: int
    tokens: float
    gpus: int
    mfu: float
    peak_flops: float
    flops: float
    gpu_sequences_per_second: float = 0
    loader_tokens_per_second: float = 0
    starved_share: float = 0
    checkpoint_bytes: int = 0
    checkpoint_count: int = 0
    training_seconds: float = Field(default=0, description="Simulated seconds spent training")
    writing_seconds: float = Field(default=0, description="Simulated seconds spent writing checkpoints")
    chart: LossChart | None = None


def _run(p: Params) -> TrainingRun:
    return TrainingRun(
        model=p.model, gpus=p.gpus, sharding="zero3", batch_size=1, context_tokens=RUN_SEQUENCE_TOKENS,
        train_tokens=p.tokens, activation_checkpointing=RUN_CHECKPOINTING, mfu=p.mfu,
        loader_samples_per_second=p.loader_samples_per_second,
    )


def _chart(run: TrainingRun, snap: TrainingSnapshot, parameters: int, vocab: int) -> LossChart:
    """Loss against tokens: the x axis is the whole run, so the curve grows to the right as it trains."""
    start = loss_at(parameters, 0, vocab)
    plot = Plot(480, 220, x_max=max(run.train_tokens, snap.tokens_done), y_max=start * 1.05)
    xs = [0.0, *(p.tokens for p in snap.loss_curve), snap.tokens_done]
    ys = [start, *(p.loss for p in snap.loss_curve), snap.loss if snap.tokens_done else start]
    frame = plot.frame("Tokens trained on", "Loss (nats a token)", lambda v: _short(v), lambda v: f"{v:g}")
    shown = snap.loss_curve[-1] if snap.loss_curve else None
    caption = (
        f"Loss fell from {start:.2f} at the start (an untrained model guessing evenly among its {vocab:,} tokens) "
        f"to {snap.loss:.2f} after {_short(snap.tokens_done)} of {_short(run.train_tokens)} tokens."
        if shown
        else f"No loss yet: the run has not trained on its first {_short(run.train_tokens / 64)} tokens."
    )
    return LossChart(
        frame=frame,
        points=plot.points(xs, ys),
        now_x=plot.x(snap.tokens_done),
        now_y=plot.y(ys[-1]),
        checkpoints=[plot.x(c.tokens) for c in snap.checkpoints],
        caption=caption,
    )


def _pace(speed: float) -> str:
    """Simulated time against the learner's: never '0× faster' for a run replayed slower than real time."""
    if speed >= 1.5:
        return (f"Simulated time runs {ratio(speed, 0)} faster than yours: one second here is {seconds(speed)} of "
                "training.")
    if speed > 1 / 1.5:
        return "Simulated time runs at about your pace: one second here is about a second of training."
    return (f"This run is short, so it plays slower than real time: one second here is {seconds(speed)} of "
            "training.")


def _advice(params: Params) -> str:
    """What would let a refused run start: the fewest GPUs of the choices that hold it, or, when none do (each GPU
    keeps its own sequence's activations, which ZeRO-3 does not share), a smaller model."""
    for gpus in (n for n in GPU_CHOICES if n > params.gpus):
        try:
            simulate_training(_run(params.model_copy(update={"gpus": gpus})), params.seed, 0)
        except DoesNotFit:
            continue
        return f"{plural(gpus, 'GPU')} hold it; pick at least that many, or a smaller model. Step 4 shows the sum."
    most = make_plan(_run(params.model_copy(update={"gpus": GPU_CHOICES[-1]})).plan_request()).per_gpu
    if params.gpus == GPU_CHOICES[-1]:
        return (f"More GPUs would not help: ZeRO-3 shares the weights, gradients and optimizer state, but each GPU "
                f"still keeps its own sequence's activations and loss head, so each needs {gb(most.total, 1)}. Pick a "
                "smaller model. Step 4 shows the sum.")
    return (f"More GPUs would not help: even {GPU_CHOICES[-1]} need {gb(most.total, 1)} each, since ZeRO-3 shares "
            "the weights, gradients and optimizer state but each GPU keeps its own sequence's activations and loss "
            "head. Pick a smaller model. Step 4 shows the sum.")


def _short(tokens: float) -> str:
    """A token count for an axis: 500M, 1B, 1.5T."""
    for scale, unit in ((1e12, "T"), (1e9, "B"), (1e6, "M"), (1e3, "k")):
        if tokens >= scale:
            return f"{tokens / scale:.3g}{unit}"
    return f"{tokens:.0f}"


def _announce(state: _live.LiveState, snap: TrainingSnapshot | None) -> str:
    """What a screen reader hears: only when the status or the checkpoint count changes."""
    if state.status == "ready" or snap is None:
        return "Training run ready to start."
    if state.status == "finished":
        return f"Training run finished: {num(snap.tokens_done)} tokens, final loss {snap.loss:.2f}."
    if state.status == "paused":
        return f"Training run paused at {pct(snap.progress)}."
    saved = f" {plural(snap.checkpoints_written, 'checkpoint')} written."
    starved = " The GPUs are waiting on the data loader." if snap.loader_bound else ""
    return f"Training run running.{saved if snap.checkpoints_written else ''}{starved}"


def _resume(stretches: list[_live.Stretch]) -> list[TrainingResume]:
    """Where the run stood at each change: the start of every stretch after the first."""
    return [
        TrainingResume(elapsed_seconds=s.at, training_seconds=s.state[0], tokens_done=s.state[1])
        for s in stretches[1:]
    ]


class _Continuation:
    """The engine's answers _live.resolve needs, for this run."""

    def __init__(self, params: Params, run: TrainingRun) -> None:
        self.params, self.run = params, run

    def close(self, stretches: list[_live.Stretch], simulated: float) -> tuple[float, tuple[float, ...]]:
        settings = dict(zip(Params.STRETCH_SETTINGS, stretches[-1].settings, strict=True))
        old = _run(self.params.model_copy(update=settings))
        snap = simulate_training(old, self.params.seed, simulated, _resume(stretches))
        # past its end a run stands still: its training seconds and tokens are the final ones
        return min(simulated, snap.total_seconds), (snap.training_seconds, snap.tokens_done)

    def end(self, stretches: list[_live.Stretch]) -> float:
        return simulate_training(self.run, self.params.seed, stretches[-1].at, _resume(stretches)).total_seconds


def compute(params: Params) -> Result:
    """The run's state now: settings, button pressed and start time in, snapshot and chart out."""
    run = _run(params)
    arch = run.plan_request().architecture
    gpu = get_gpu(run.gpu)
    peak = peak_flops(gpu, run.precision)
    base = dict(
        model_name=arch.name,
        parameters=arch.active_parameters,
        tokens=run.train_tokens,
        gpus=run.gpus,
        mfu=run.mfu,
        peak_flops=peak,
        flops=engine_compute.training_flops(arch.active_parameters, run.train_tokens),
    )
    try:
        first = simulate_training(run, params.seed, 0)
        ideal = simulate_training(run.model_copy(update={"loader_samples_per_second": None}), params.seed, 0)
    except DoesNotFit as exc:
        plan = make_plan(run.plan_request())
        return Result(**base, **_live.refused(exc, "This run cannot start: "), speed=0, node=plan_node_load(plan),
                      advice=_advice(params))
    speed = max(
        ideal.total_seconds / params.play_seconds, first.total_seconds / (MAX_SLOWDOWN * params.play_seconds)
    )
    live = _live.resolve(params, speed, _live.clock(), _Continuation(params, run))
    snap = simulate_training(run, params.seed, live.simulated, _resume(live.stretches))
    shown = None if live.status == "ready" else snap
    done = simulate_training(run, params.seed, first.total_seconds)
    rate = min(first.gpu_tokens_per_second, first.loader_tokens_per_second or first.gpu_tokens_per_second)
    node = training_load(run, shown, running=live.running)
    starved = 1 - min(1.0, (snap.loader_tokens_per_second or 0) / snap.gpu_tokens_per_second)
    return Result(
        **base, fits=True, live=live, speed=speed, snap=snap, pace=_pace(speed),
        starved_words=("The GPUs are starved." if starved >= STARVED_FROM else
                       "The GPUs wait, but only a little."),
        gpu_sequences_per_second=snap.gpu_tokens_per_second / RUN_SEQUENCE_TOKENS,
        loader_tokens_per_second=snap.loader_tokens_per_second or 0.0,
        starved_share=starved,
        checkpoint_bytes=done.checkpoints[-1].bytes, checkpoint_count=done.checkpoints_written,
        training_seconds=run.train_tokens / rate, writing_seconds=first.total_seconds - run.train_tokens / rate,
        chart=_chart(run, snap, arch.parameters, arch.vocab), announcement=_announce(live, shown),
        node=node,
    )


WIDGET = Widget(
    name="training-run",
    title="A training run on dgx-1",
    params=Params,
    compute=compute,
    template="widgets/training-run.html",
    description="A live training run: 6·N·D FLOPs at an MFU, tokens/s, ETA, loss, utilisation, power, "
    "checkpoints, and a data loader that can starve the GPUs.",
)
