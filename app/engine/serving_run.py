"""A serving run in simulated time: requests arrive, wait, join a continuous batch, and leave.

A pure function of its parameters, a seed and the elapsed seconds. Arrivals are a seeded Poisson
process counted second by second; the server admits requests as fast as its batch frees slots. To
bound the work of a call, only the last WINDOW_SECONDS are simulated second by second; the queue at
the window's start is the fluid (mean) backlog, (arrival rate - capacity) × time when saturated.

A run whose settings changed part-way (`resume`, issue 13 item 3) continues from the queue it had then;
each earlier stretch keeps its own arrival rate and batch limit, and its seconds read as they did when it
ended (its window simulated up to its own end), so the chart's past bars and queue do not move.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict, Field, ValidationInfo, field_validator

from app.engine import compute, memory
from app.engine.errors import DoesNotFit
from app.engine.hardware import get_gpu
from app.engine.memory import Knobs
from app.engine.models import Architecture
from app.engine.randomness import poisson
from app.engine.workload import MAX_GPUS, GpuId, ModelChoice, PlanRequest, Precision, split_field

WINDOW_SECONDS = 60
# Fixed-point iterations for the batch size the arrival rate sustains (converges in a handful).
_ITERATIONS = 40


class ServingRun(BaseModel):
    """A model served on some GPUs to a stream of requests."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)

    model: ModelChoice = Field(default="llama-3.1-8b", description="Catalog id or architecture object")
    gpu: GpuId = Field(default="h100", description="GPU type")
    precision: Precision = Field(default="bf16", description="Storage precision of the weights")
    kv_precision: Precision = Field(default="bf16", description="Storage precision of the KV cache")
    gpus: int = Field(
        default=1,
        ge=1,
        le=MAX_GPUS,
        description="GPUs the model is split over (tensor parallel): a count that divides its attention heads",
    )
    arrival_rate: float = Field(
        default=2.0,
        ge=0.001,
        le=100_000,
        allow_inf_nan=False,
        description="Requests arriving a second, on average",
    )
    prompt_tokens: int = Field(default=1000, ge=1, le=1_048_576, description="Prompt tokens a request")
    output_tokens: int = Field(default=500, ge=1, le=1_048_576, description="Tokens generated a request")
    max_batch: int = Field(default=64, ge=1, le=4096, description="Most sequences decoded together")
    mfu: float = Field(
        default=0.4, ge=0.01, le=1, allow_inf_nan=False, description="Share of peak FLOPS when compute binds"
    )

    @field_validator("gpus")
    @classmethod
    def _even_split(cls, value: int, info: ValidationInfo) -> int:
        """The run splits every layer's attention heads over its GPUs (tensor parallel): they must divide evenly."""
        return split_field(value, info, "serve")


class ServingStretch(BaseModel):
    """An earlier stretch of a run, ended by a change of its settings: until when, the queue then, and the
    settings that shaped it."""

    model_config = ConfigDict(frozen=True)

    until_seconds: float = Field(ge=0, le=1e12, allow_inf_nan=False, description="Simulated seconds it ended at")
    queue: float = Field(ge=0, le=1e15, allow_inf_nan=False, description="Requests waiting when it ended")
    arrival_rate: float = Field(ge=0.001, le=100_000, allow_inf_nan=False, description="Its arrivals a second")
    max_batch: int = Field(ge=1, le=4096, description="Its batch limit")


class Second(BaseModel):
    """One simulated second of the recent past."""

    at_seconds: float = Field(description="End of the second")
    arrivals: int = Field(description="Requests that arrived in it")
    queue: float = Field(description="Requests waiting at its end")
    ttft_seconds: float = Field(description="Time to first token of a request arriving then")


class ServingSnapshot(BaseModel):
    """The state of a serving run at one moment of simulated time."""

    elapsed_seconds: float = Field(description="Simulated seconds since the start")
    batch_limit: int = Field(description="Most sequences in the batch: max_batch or what the KV cache holds")
    batch_limited_by: str = Field(description="'max_batch' or 'kv-cache memory'")
    capacity_requests_per_second: float = Field(
        description="Requests a second the server finishes with a full batch"
    )
    saturated: bool = Field(description="True when requests arrive faster than the capacity: the queue grows")
    arrivals: int = Field(description="Requests that arrived in the last second")
    batch: float = Field(description="Sequences being decoded now (average)")
    queue: float = Field(description="Requests waiting for a slot in the batch")
    ttft_seconds: float = Field(description="Time to first token now: waiting plus prefill")
    tpot_seconds: float = Field(
        description="Time per output token now: one decode step with prefills interleaved"
    )
    throughput_tokens_per_second: float = Field(description="Output tokens a second, all sequences")
    requests_per_second: float = Field(description="Requests admitted a second (recent average)")
    prefill_seconds: float = Field(description="Prefill of one prompt")
    history: list[Second] = Field(description="The last simulated seconds, oldest first, for a chart")


class _Server(BaseModel):
    """The server's fixed figures, worked out once from the run."""

    arch: Architecture
    run: ServingRun
    weights: float
    kv_per_sequence: float
    kv_read_per_sequence: float
    batch_limit: int
    limited_by: str
    prefill: float

    def step(self, batch: float) -> float:
        """One decode step at this batch (at least one sequence): its weights and KV reads, or its compute."""
        b = max(1, math.ceil(batch))
        read = (
            self.weights * compute.weight_share_read(self.arch, b, self.run.precision)
            + max(batch, 1) * self.kv_read_per_sequence
        )
        comm = compute.tensor_parallel_seconds(self.arch, b, self.run.gpus, self.run.precision)
        gpu = get_gpu(self.run.gpu)
        bound = compute.decode_step(
            gpu, self.run.precision, read, self.arch.active_parameters, b, self.run.gpus, self.run.mfu, comm
        )
        return bound.seconds

    def capacity(self) -> float:
        """Requests a second at a full batch: each costs a prefill and its share of output steps."""
        return 1 / (self.prefill + self.run.output_tokens * self.step(self.batch_limit) / self.batch_limit)


def _server(run: ServingRun) -> _Server:
    """Size the server: weights, KV a sequence, the batch the memory allows, and one prefill."""
    req = _one_sequence(run)
    arch, knobs = req.architecture, Knobs.of(req)
    w, kv, work, _, _, _, rt = memory.parts(arch, knobs)
    capacity = get_gpu(run.gpu).memory_bytes
    free = capacity - w - work - rt
    if free < kv:
        raise DoesNotFit(0, w + kv + work + rt, capacity)
    limit = min(run.max_batch, int(free // kv))
    # A sequence in the batch is on average half-way through its output.
    average = (run.prompt_tokens + run.output_tokens / 2) / (run.prompt_tokens + run.output_tokens)
    return _Server(
        arch=arch,
        run=run,
        weights=w,
        kv_per_sequence=kv,
        kv_read_per_sequence=kv * average,
        batch_limit=limit,
        limited_by="max_batch" if limit == run.max_batch else "kv-cache memory",
        prefill=_prefill(run, arch, w).seconds,
    )


def _one_sequence(run: ServingRun) -> PlanRequest:
    """The run's server holding one sequence of a request's prompt and output: what each sequence costs."""
    return PlanRequest(
        model=run.model, gpu=run.gpu, precision=run.precision, kv_precision=run.kv_precision, gpus=run.gpus,
        batch_size=1, context_tokens=run.prompt_tokens + run.output_tokens, prompt_tokens=run.prompt_tokens,
        output_tokens=run.output_tokens, mfu=run.mfu,
    )  # fmt: skip


def _prefill(run: ServingRun, arch: Architecture, weights: int) -> compute.Bound:
    """One request's prefill on the run's GPUs (its weights read once, its prompt's FLOPs done)."""
    return compute.prefill(
        get_gpu(run.gpu),
        run.precision,
        weights,
        arch.active_parameters,
        run.prompt_tokens,
        run.gpus,
        run.mfu,
        compute.tensor_parallel_seconds(arch, run.prompt_tokens, run.gpus, run.precision),
        compute.attention_flops(arch, run.prompt_tokens),
    )


def _sustained_batch(s: _Server, rate: float) -> tuple[float, float]:
    """Batch size and time per output token when requests are admitted at `rate` a second.

    A share rate × prefill of the time goes to prefills, so a token takes step ÷ (1 − that share);
    Little's law gives the batch: rate × (prefill + output tokens × time per token).
    """
    busy = min(rate * s.prefill, 0.999)
    batch = 0.0
    for _ in range(_ITERATIONS):
        tpot = s.step(batch) / (1 - busy)
        nxt = min(float(s.batch_limit), rate * (s.prefill + s.run.output_tokens * tpot))
        if abs(nxt - batch) < 1e-6:
            break
        batch = nxt
    return batch, s.step(batch) / (1 - busy)


def _seconds(run: ServingRun, s: _Server, seed: int, since: tuple[int, float], stop: int) -> tuple[list[Second], float]:
    """The seconds of a stretch that began at second `since[0]` with `since[1]` requests waiting, over the last
    WINDOW_SECONDS up to `stop` (the fluid backlog before them), and the queue at `stop`."""
    mu = s.capacity()
    first = max(since[0], stop - WINDOW_SECONDS)
    queue = max(0.0, since[1] + (run.arrival_rate - mu) * (first - since[0]))
    history: list[Second] = []
    for k in range(first, stop):
        arrivals = poisson(run.arrival_rate, seed, "arrivals", k)
        served = min(queue + arrivals, mu)
        queue = queue + arrivals - served
        history.append(
            Second(at_seconds=k + 1, arrivals=arrivals, queue=queue, ttft_seconds=queue / mu + s.prefill)
        )
    return history, queue


def _history(
    run: ServingRun, s: _Server, seed: int, end: int, resume: Sequence[ServingStretch]
) -> tuple[list[Second], float]:
    """The last WINDOW_SECONDS up to `end`, earlier stretches as they read when they ended, and the queue now."""
    history: list[Second] = []
    since = (0, 0.0)
    for past in resume:
        stop = max(since[0], min(int(past.until_seconds), end))
        if stop > end - WINDOW_SECONDS:
            old = run.model_copy(update={"arrival_rate": past.arrival_rate, "max_batch": past.max_batch})
            seconds, _ = _seconds(old, _server(old), seed, since, stop)
            history += [h for h in seconds if h.at_seconds > end - WINDOW_SECONDS]
        since = (stop, past.queue)
    own, queue = _seconds(run, s, seed, since, end)
    return (history + own)[-WINDOW_SECONDS:], queue


def simulate_serving(
    run: ServingRun, seed: int, elapsed_seconds: float, resume: Sequence[ServingStretch] = ()
) -> ServingSnapshot:
    """The serving run's state after `elapsed_seconds` of simulated time; same inputs, same state.

    `resume` lists the run's earlier stretches, oldest first, each ended by a change of its settings: this
    run's settings hold from the last one's end, starting from the queue it left."""
    s = _server(run)
    mu = s.capacity()
    elapsed = max(0.0, elapsed_seconds)
    history, queue = _history(run, s, seed, int(elapsed), resume)
    recent = history[-10:]
    admitted = mu if queue > 0 else min(mu, sum(h.arrivals for h in recent) / max(1, len(recent)))
    batch, tpot = _sustained_batch(s, admitted)
    return ServingSnapshot(
        elapsed_seconds=elapsed,
        batch_limit=s.batch_limit,
        batch_limited_by=s.limited_by,
        capacity_requests_per_second=mu,
        saturated=run.arrival_rate > mu,
        arrivals=history[-1].arrivals if history else 0,
        batch=batch,
        queue=queue,
        ttft_seconds=queue / mu + s.prefill,
        tpot_seconds=tpot,
        throughput_tokens_per_second=batch / tpot,
        requests_per_second=admitted,
        prefill_seconds=s.prefill,
        history=history,
    )
