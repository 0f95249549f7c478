"""A training run in simulated time: a pure function of its parameters, a seed and the elapsed seconds.

A run whose settings changed part-way continues from where it stood (`resume`, issue 13 item 3): the tokens
trained on, the training seconds done, the checkpoints written and the simulated clock carry over, and only the
rate from the change on is the new one. Checkpoints are due every `checkpoint_every_seconds` of training time,
whatever the rate, so the clock that maps simulated seconds to training seconds is the same for the whole run
(as long as the model and the GPU count, which set the write time, stay); only tokens against training seconds
bend at each change.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from app.engine import compute, memory
from app.engine.errors import DoesNotFit
from app.engine.hardware import DGX_H100, GPU, get_gpu
from app.engine.models import Architecture
from app.engine.power import gpu_watts
from app.engine.randomness import normal
from app.engine.training_state import training_precision, training_state
from app.engine.workload import (
    FP8_SPEEDUP,
    MAX_GPUS,
    Checkpointing,
    CheckpointingField,
    Fp8Speedup,
    GpuId,
    ModelChoice,
    Optimizer,
    PlanRequest,
    Sharding,
    checkpointing_value,
)

TrainingPrecision = Literal["fp32", "bf16", "fp16", "fp8"]

# Loss of a model of N parameters after D tokens, fitted by Hoffmann et al. 2022 ("Training
# Compute-Optimal Large Language Models", approach 3): L = E + A / N^alpha + B / D^beta.
CHINCHILLA_E, CHINCHILLA_A, CHINCHILLA_B = 1.69, 406.4, 410.7
CHINCHILLA_ALPHA, CHINCHILLA_BETA = 0.34, 0.28
# Step-to-step wobble of the reported loss: 1 % (seeded), about what a smoothed training log shows.
LOSS_NOISE = 0.01
LOSS_CURVE_POINTS = 64
CHECKPOINTS_SHOWN = 10
# Tokens a sequence in the lessons' live training run and its checkpointing: Llama 3's pre-training
# sequences of 8,192 tokens (Llama 3 paper, section 3.4) with selective checkpointing, as torchtitan runs
# Llama 3.1 8B. One sequence a GPU under ZeRO-3 takes about 52 GB of an H100 on dgx-1 (state 16.1,
# activations 23.2, loss head 10.6, runtime 1.8) and fits down to 4 GPUs. The training-run widget and
# step 5 use it.
RUN_SEQUENCE_TOKENS = 8192
RUN_CHECKPOINTING: Checkpointing = "selective"


class TrainingRun(BaseModel):
    """A training run on dgx-1 nodes: the model, the parallel setup, the data loader and checkpointing."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)

    model: ModelChoice = Field(default="llama-3.1-8b", description="Catalog id or architecture object")
    gpu: GpuId = Field(default="h100", description="GPU type")
    precision: TrainingPrecision = Field(default="bf16", description="Working precision of the weights")
    gpus: int = Field(default=8, ge=1, le=MAX_GPUS, description="Data-parallel GPUs (8 a dgx-1 node)")
    sharding: Sharding = Field(default="zero1", description="ZeRO stage over the GPUs")
    optimizer: Optimizer = Field(default="adam", description="Optimizer and its state")
    batch_size: int = Field(default=1, ge=1, le=4096, description="Sequences per GPU in a micro-batch")
    context_tokens: int = Field(default=8192, ge=1, le=1_048_576, description="Tokens a sequence")
    train_tokens: float = Field(
        default=1e9, ge=1, le=1e16, allow_inf_nan=False, description="Tokens to train on"
    )
    activation_checkpointing: CheckpointingField = Field(
        default="full", description="none, selective or full (true/false: full/none)"
    )
    mfu: float = Field(
        default=0.4, ge=0.01, le=1, allow_inf_nan=False, description="Share of peak FLOPS reached"
    )
    fp8_speedup: Fp8Speedup = FP8_SPEEDUP
    loader_samples_per_second: float | None = Field(
        default=None,
        ge=0.001,
        le=1e9,
        allow_inf_nan=False,
        description="Sequences a second the data loader delivers to all GPUs; null: it keeps up",
    )
    checkpoint_every_seconds: float = Field(
        default=3600, ge=60, le=1e9, allow_inf_nan=False, description="Training time between checkpoints"
    )
    checkpoint_bandwidth: float = Field(
        default=10e9,
        ge=1e6,
        le=1e13,
        allow_inf_nan=False,
        description="Bytes a second one node writes a checkpoint at. Illustrative default (2025): 10 GB/s, "
        "a node's share of a parallel file system; not a measured figure",
    )

    @property
    def hardware(self) -> GPU:
        """The GPU the run uses, looked up once here."""
        return get_gpu(self.gpu)

    def plan_request(self) -> PlanRequest:
        """The same run as a training plan, to size its memory."""
        return PlanRequest(
            model=self.model,
            gpu=self.gpu,
            mode="train",
            precision=self.precision,
            gpus=self.gpus,
            sharding=self.sharding,
            optimizer=self.optimizer,
            batch_size=self.batch_size,
            context_tokens=self.context_tokens,
            train_tokens=self.train_tokens,
            activation_checkpointing=self.activation_checkpointing,
            mfu=self.mfu,
            fp8_speedup=self.fp8_speedup,
        )

    @field_validator("activation_checkpointing", mode="before")
    @classmethod
    def _checkpointing(cls, value: Any) -> Any:
        """Accept the old boolean form: true is full, false is none."""
        return checkpointing_value(value)


class TrainingResume(BaseModel):
    """Where a run stood when its settings changed: the settings from then on continue from here."""

    model_config = ConfigDict(frozen=True)

    elapsed_seconds: float = Field(ge=0, le=1e15, allow_inf_nan=False, description="Simulated seconds then")
    training_seconds: float = Field(ge=0, le=1e15, allow_inf_nan=False, description="Training seconds done then")
    tokens_done: float = Field(ge=0, le=1e17, allow_inf_nan=False, description="Tokens trained on then")


class LossPoint(BaseModel):
    """The training loss after some tokens."""

    tokens: float = Field(description="Tokens trained on")
    loss: float = Field(description="Cross-entropy loss in nats a token")


class Checkpoint(BaseModel):
    """A saved copy of the weights and optimizer state."""

    index: int = Field(description="1 for the first checkpoint")
    written_at_seconds: float = Field(description="Simulated time the write finished")
    tokens: float = Field(description="Tokens trained on when it was taken")
    loss: float = Field(description="Loss when it was taken")
    bytes: int = Field(description="Size: weights and optimizer state (fp32 master copy included)")


class TrainingSnapshot(BaseModel):
    """The state of a training run at one moment of simulated time."""

    elapsed_seconds: float = Field(description="Simulated seconds since the start")
    training_seconds: float = Field(default=0, description="Simulated seconds spent training so far (not writing)")
    phase: Literal["training", "checkpointing", "finished"] = Field(description="What the run is doing now")
    finished: bool = Field(description="True once every token is trained on and the last checkpoint written")
    progress: float = Field(description="Share of the training tokens done, 0 to 1")
    tokens_done: float = Field(description="Tokens trained on so far")
    steps_done: int = Field(description="Optimizer steps so far (a step: batch × context × GPUs tokens)")
    tokens_per_second: float = Field(description="Tokens a second now (0 while checkpointing or finished)")
    gpu_tokens_per_second: float = Field(description="Tokens a second the GPUs could take at their MFU")
    loader_tokens_per_second: float | None = Field(description="Tokens a second the data loader delivers")
    loader_bound: bool = Field(description="True when the data loader, not the GPUs, sets the pace")
    utilisation: float = Field(description="Share of the GPUs' possible work they do now, 0 to 1")
    power_watts: float = Field(
        description="Power of all the GPUs now, in watts: each at its busy share (app.engine.power.gpu_watts)"
    )
    eta_seconds: float = Field(description="Simulated seconds until the run finishes")
    total_seconds: float = Field(description="Simulated seconds of the whole run, checkpoints included")
    loss: float = Field(description="Training loss now")
    loss_curve: list[LossPoint] = Field(description="Loss so far at fixed points of the run, for a chart")
    checkpoints_written: int = Field(description="Checkpoints written so far")
    checkpoints: list[Checkpoint] = Field(description="The last checkpoints written (at most 10)")


class _Pace(BaseModel):
    """The run's fixed rates, worked out once from its parameters, and the path its tokens took so far."""

    rate: float
    knots: list[tuple[float, float]] = Field(description="(training seconds, tokens) at the start and each change")
    final_tokens: float = Field(description="Tokens done when the training is over")
    gpu_rate: float
    loader_rate: float | None
    step_tokens: float
    compute_seconds: float
    write_seconds: float
    checkpoint_bytes: int
    parameters: int


def _pace(run: TrainingRun, arch: Architecture, resume: Sequence[TrainingResume] = ()) -> _Pace:
    """GPU demand, loader supply, the rate that follows, the checkpoint cost, and what is left after `resume`."""
    flops_per_token = compute.training_model_flops(arch, 1, run.context_tokens)
    working = training_precision(run.optimizer, run.precision)
    peak = compute.training_peak(run.hardware, working, run.fp8_speedup)
    gpu_rate = run.gpus * peak * run.mfu / flops_per_token
    loader = (
        None if run.loader_samples_per_second is None else run.loader_samples_per_second * run.context_tokens
    )
    rate = gpu_rate if loader is None else min(gpu_rate, loader)
    state = training_state(run.optimizer, run.precision)
    ckpt = math.ceil(arch.parameters * (state.weights + state.optimizer))
    nodes = math.ceil(run.gpus / DGX_H100.gpus)
    write = ckpt / (run.checkpoint_bandwidth * nodes)
    knots, left = _knots(run, write, resume)
    return _Pace(
        rate=rate,
        knots=knots,
        final_tokens=knots[-1][1] + left,
        gpu_rate=gpu_rate,
        loader_rate=loader,
        step_tokens=run.batch_size * run.context_tokens * run.gpus,
        compute_seconds=knots[-1][0] + left / rate,
        write_seconds=write,
        checkpoint_bytes=ckpt,
        parameters=arch.parameters,
    )


def _clock(run: TrainingRun, write_seconds: float, elapsed: float) -> float:
    """Training seconds by `elapsed` in a run that writes a checkpoint after every interval of training."""
    cycles, into = divmod(elapsed, run.checkpoint_every_seconds + write_seconds)
    return cycles * run.checkpoint_every_seconds + min(into, run.checkpoint_every_seconds)


def _knots(
    run: TrainingRun, write_seconds: float, resume: Sequence[TrainingResume]
) -> tuple[list[tuple[float, float]], float]:
    """The (training seconds, tokens) the run stood at when it started and at each change, and the tokens left.

    A change made once every token was trained on (the final checkpoint being written, or written) leaves
    nothing to train: a larger target is a new run. So does a target at or below the tokens already done."""
    knots = [(0.0, 0.0)]
    for point in resume:
        seconds = max(point.training_seconds, knots[-1][0])
        knots.append((seconds, max(point.tokens_done, knots[-1][1])))
    last = resume[-1] if resume else None
    over = last is not None and _clock(run, write_seconds, last.elapsed_seconds) > last.training_seconds + 1e-3
    return knots, 0.0 if over else max(0.0, run.train_tokens - knots[-1][1])


def _tokens_at(p: _Pace, seconds: float) -> float:
    """Tokens done after `seconds` of training: along the path so far, then at the run's rate."""
    last_seconds, last_tokens = p.knots[-1]
    if seconds >= p.compute_seconds:
        return p.final_tokens
    if seconds >= last_seconds:
        return last_tokens + (seconds - last_seconds) * p.rate
    for (s0, t0), (s1, t1) in zip(p.knots, p.knots[1:], strict=False):
        if seconds <= s1:
            return t0 + (t1 - t0) * (seconds - s0) / (s1 - s0) if s1 > s0 else t1
    return last_tokens


def loss_at(parameters: float, tokens: float, vocab: int) -> float:
    """Chinchilla's fitted loss after `tokens` tokens, capped at ln(vocab): the loss of a uniform guess."""
    if tokens <= 0:
        return math.log(vocab)
    model_term = CHINCHILLA_A / math.pow(parameters, CHINCHILLA_ALPHA)
    data_term = CHINCHILLA_B / math.pow(tokens, CHINCHILLA_BETA)
    return min(math.log(vocab), CHINCHILLA_E + model_term + data_term)


def _noisy_loss(arch: Architecture, tokens: float, seed: int, index: int) -> float:
    """The fitted loss with a seeded 1 % wobble, the same for the same (seed, index); before the first token it
    is exactly ln(vocab), the untrained model's even guess (the curve and the tile start from the same figure)."""
    if tokens <= 0:
        return loss_at(arch.parameters, 0, arch.vocab)
    return loss_at(arch.parameters, tokens, arch.vocab) * (1 + LOSS_NOISE * normal(seed, "loss", index))


def _compute_done(run: TrainingRun, p: _Pace, elapsed: float) -> tuple[float, bool]:
    """Seconds of training done by `elapsed` (never less than at the last change), and whether a checkpoint is
    being written now."""
    into = elapsed % (run.checkpoint_every_seconds + p.write_seconds)
    done = max(_clock(run, p.write_seconds, elapsed), p.knots[-1][0])
    return min(done, p.compute_seconds), into > run.checkpoint_every_seconds


def _loss_curve(run: TrainingRun, arch: Architecture, tokens_done: float, seed: int) -> list[LossPoint]:
    """The loss at fixed fractions of the run reached so far (the same points at every poll)."""
    points = []
    for i in range(1, LOSS_CURVE_POINTS + 1):
        tokens = run.train_tokens * i / LOSS_CURVE_POINTS
        if tokens > tokens_done:
            break
        points.append(LossPoint(tokens=tokens, loss=_noisy_loss(arch, tokens, seed, -i)))
    return points


def _total_seconds(run: TrainingRun, p: _Pace) -> float:
    """The whole run: training time plus every checkpoint write, the final one included."""
    writes = math.ceil(p.compute_seconds / run.checkpoint_every_seconds)
    return p.compute_seconds + writes * p.write_seconds


def simulate_training(
    run: TrainingRun, seed: int, elapsed_seconds: float, resume: Sequence[TrainingResume] = ()
) -> TrainingSnapshot:
    """The run's state after `elapsed_seconds` of simulated time; same inputs, same state.

    `resume` lists where the run stood at each earlier change of its settings, oldest first: the run continues
    from the last one at this run's rate, and the path before it (checkpoints taken then) stays as it was."""
    arch = get_arch(run)
    p = _pace(run, arch, resume)
    total = _total_seconds(run, p)
    elapsed = max(0.0, elapsed_seconds)
    done, writing = _compute_done(run, p, elapsed)
    finished = elapsed >= total
    training = not finished and not writing and done < p.compute_seconds
    tokens = _tokens_at(p, done)
    step = int(tokens // p.step_tokens)
    util = p.rate / p.gpu_rate if training else 0.0
    gpu = run.hardware
    count = _checkpoint_count(run, p, elapsed)
    return TrainingSnapshot(
        elapsed_seconds=elapsed,
        training_seconds=done,
        phase="finished" if finished else "training" if training else "checkpointing",
        finished=finished,
        progress=min(1.0, tokens / run.train_tokens),
        tokens_done=tokens,
        steps_done=step,
        tokens_per_second=p.rate if training else 0.0,
        gpu_tokens_per_second=p.gpu_rate,
        loader_tokens_per_second=p.loader_rate,
        loader_bound=p.rate < p.gpu_rate,
        utilisation=util,
        power_watts=run.gpus * gpu_watts(util, gpu),
        eta_seconds=max(0.0, total - elapsed),
        total_seconds=total,
        loss=_noisy_loss(arch, tokens, seed, step),
        loss_curve=_loss_curve(run, arch, tokens, seed),
        checkpoints_written=count,
        checkpoints=_checkpoints(run, arch, p, count, seed),
    )


def get_arch(run: TrainingRun) -> Architecture:
    """The run's architecture, refusing a run whose memory does not fit on its GPUs."""
    req = run.plan_request()
    mem = memory.per_gpu(req)
    if mem.total > mem.capacity:
        raise DoesNotFit(0, mem.total, mem.capacity)
    return req.architecture


def _checkpoint_count(run: TrainingRun, p: _Pace, elapsed: float) -> int:
    """Checkpoints written by `elapsed`: the i-th (of all but the last) is done at i × (interval + write)."""
    final = math.ceil(p.compute_seconds / run.checkpoint_every_seconds)
    if elapsed >= _total_seconds(run, p):
        return final
    return min(final - 1, int(elapsed // (run.checkpoint_every_seconds + p.write_seconds)))


def _checkpoints(run: TrainingRun, arch: Architecture, p: _Pace, count: int, seed: int) -> list[Checkpoint]:
    """The last (at most 10) of the first `count` checkpoints."""
    found = []
    for i in range(max(1, count - CHECKPOINTS_SHOWN + 1), count + 1):
        trained = min(i * run.checkpoint_every_seconds, p.compute_seconds)
        tokens = _tokens_at(p, trained)
        found.append(
            Checkpoint(
                index=i,
                written_at_seconds=trained + i * p.write_seconds,
                tokens=tokens,
                loss=_noisy_loss(arch, tokens, seed, int(tokens // p.step_tokens)),
                bytes=p.checkpoint_bytes,
            )
        )
    return found
