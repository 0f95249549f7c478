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
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationInfo, field_validator

from app.engine import compute, memory
from app.engine.errors import DoesNotFit
from app.engine.hardware import GPU, get_gpu
from app.engine.memory import Knobs
from app.engine.models import Architecture
from app.engine.randomness import poisson
from app.engine.workload import MAX_GPUS, GpuId, ModelChoice, PlanRequest, Precision, split_field

WINDOW_SECONDS = 60
ServingState = Literal["keeping up", "draining", "saturated"]
# Fewer requests waiting than this is an empty queue (the fluid backlog decays towards zero, never to it).
EMPTY_QUEUE = 0.5
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
    mfu: float | None = Field(
        default=None, ge=0.01, le=1, allow_inf_nan=False,
        description="Share of peak FLOPS the maths reaches; null: the GPU's measured matrix-multiply share",
    )

    @field_validator("gpus")
    @classmethod
    def _even_split(cls, value: int, info: ValidationInfo) -> int:
        """The run splits every layer's attention heads over its GPUs (tensor parallel): they must divide evenly."""
        return split_field(value, info, "serve")

    @property
    def hardware(self) -> GPU:
        """The GPU the run uses, looked up once here."""
        return get_gpu(self.gpu)


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
    state: ServingState = Field(
        description="keeping up (no queue), draining (arrivals below capacity, a queue left from before) or "
        "saturated (arrivals above capacity): the one verdict the widget and the dgx-1 panel show"
    )
    drain_seconds: float | None = Field(
        description="Simulated seconds until the queue clears at the present rates; null when it does not shrink"
    )
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
    """The server's fixed figures, worked out once from the run.

    Steps are those of a continuous-batching server with chunked prefill (vLLM, TensorRT-LLM): every forward
    pass carries the running sequences' next tokens and chunks of waiting prompts, at most STEP_TOKEN_BUDGET
    tokens in all, and costs what app.engine.compute.serve_step says (maths, reads, all-reduces, fixed cost)."""

    arch: Architecture
    run: ServingRun
    gpu: GPU
    weights: float
    kv_per_sequence: float
    kv_read_per_sequence: float
    batch_limit: int
    limited_by: str

    @property
    def budget(self) -> int:
        """Tokens a step carries at most."""
        return compute.STEP_TOKEN_BUDGET

    def step(self, decodes: float, prefill_tokens: float = 0.0) -> float:
        """One forward pass carrying `decodes` running sequences (at least one token in all) and
        `prefill_tokens` prompt tokens."""
        run, arch = self.run, self.arch
        tokens = max(1, math.ceil(decodes + prefill_tokens))
        read = self.weights * compute.weight_share_read(arch, tokens, run.precision) + max(
            decodes, 0.0
        ) * self.kv_read_per_sequence
        context = run.prompt_tokens + run.output_tokens / 2
        attention = compute.decode_attention_flops(arch, context, decodes) + compute.decode_attention_flops(
            arch, run.prompt_tokens / 2, prefill_tokens
        )
        return compute.serve_step(arch, self.gpu, run.precision, run.gpus, tokens, read, attention, run.mfu).seconds

    def saturated_batch(self) -> float:
        """Sequences decoding at once when requests queue: the batch limit, or fewer when the token budget must
        also carry the prompts that keep it full (each finishing sequence is replaced by a prompt of P tokens
        every O steps, so B + B·P/O ≤ budget)."""
        p, o = self.run.prompt_tokens, self.run.output_tokens
        return max(1.0, min(float(self.batch_limit), self.budget * o / (o + p)))

    def capacity(self) -> float:
        """Requests a second with every slot busy: B sequences finish every O steps of a step that also
        prefills B·P/O prompt tokens."""
        b = self.saturated_batch()
        o, p = self.run.output_tokens, self.run.prompt_tokens
        return b / (o * self.step(b, b * p / o))

    def prefill(self, batch: float) -> float:
        """Time to first token of a request admitted at once: its prompt in chunks of what the budget leaves
        beside `batch` running sequences, each chunk a step that also decodes them."""
        room = max(1.0, self.budget - batch)
        chunks = math.ceil(self.run.prompt_tokens / room)
        return chunks * self.step(batch, self.run.prompt_tokens / chunks)


def plan_request(run: ServingRun, batch: int) -> PlanRequest:
    """The serving run as a plan: `batch` sequences, each caching a whole request's tokens. The run's batch
    limit, the dgx-1 panel and the plan widget all read memory from this one request."""
    return PlanRequest(
        model=run.model, gpu=run.gpu, precision=run.precision, kv_precision=run.kv_precision, gpus=run.gpus,
        batch_size=batch, context_tokens=run.prompt_tokens + run.output_tokens, prompt_tokens=run.prompt_tokens,
        output_tokens=run.output_tokens, mfu=run.mfu,
    )


def batch_that_fits(run: ServingRun) -> int:
    """The largest batch up to max_batch whose plan fits in a GPU's memory (memory grows with the batch);
    DoesNotFit, with the plan's own figures, when not even one sequence fits."""
    gpu = run.hardware

    def total(batch: int) -> int:
        req = plan_request(run, batch)
        return memory.total(req.architecture, Knobs.of(req))

    if total(1) > gpu.memory_bytes:
        raise DoesNotFit(0, total(1), gpu.memory_bytes)
    lo, hi = 1, run.max_batch
    while lo < hi:
        mid = (lo + hi + 1) // 2
        lo, hi = (mid, hi) if total(mid) <= gpu.memory_bytes else (lo, mid - 1)
    return lo


def _server(run: ServingRun) -> _Server:
    """Size the server: weights, KV a sequence, the batch the memory allows (the plan's own breakdown)."""
    req = plan_request(run, 1)
    arch, knobs = req.architecture, Knobs.of(req)
    w, kv, _, _, _, _, _ = memory.parts(arch, knobs)
    limit = batch_that_fits(run)
    # A sequence in the batch is on average half-way through its output.
    average = (run.prompt_tokens + run.output_tokens / 2) / (run.prompt_tokens + run.output_tokens)
    return _Server(
        arch=arch,
        run=run,
        gpu=run.hardware,
        weights=w,
        kv_per_sequence=kv,
        kv_read_per_sequence=kv * average,
        batch_limit=limit,
        limited_by="max_batch" if limit == run.max_batch else "kv-cache memory",
    )


def _sustained_batch(s: _Server, rate: float) -> tuple[float, float]:
    """Batch size and time per output token when requests are admitted at `rate` a second.

    Each step carries the running sequences and the prompt tokens that arrived during it (rate × P × step);
    Little's law gives the batch: rate × (time to first token + output tokens × time per token).
    """
    batch = 0.0
    tpot = s.step(1)
    for _ in range(_ITERATIONS):
        tpot = s.step(max(batch, 1.0), min(rate * s.run.prompt_tokens * tpot, s.budget))
        nxt = min(s.saturated_batch(), rate * (s.prefill(batch) + s.run.output_tokens * tpot))
        if abs(nxt - batch) < 1e-6:
            break
        batch = nxt
    return batch, tpot


def _seconds(run: ServingRun, s: _Server, seed: int, since: tuple[int, float], stop: int) -> tuple[list[Second], float]:
    """The seconds of a stretch that began at second `since[0]` with `since[1]` requests waiting, over the last
    WINDOW_SECONDS up to `stop` (the fluid backlog before them), and the queue at `stop`."""
    mu = s.capacity()
    start = max(since[0], stop - WINDOW_SECONDS)
    queue = max(0.0, since[1] + (run.arrival_rate - mu) * (start - since[0]))
    first = s.prefill(s.saturated_batch())  # a waiting request's own prefill, once a slot frees
    history: list[Second] = []
    for k in range(start, stop):
        arrivals = poisson(run.arrival_rate, seed, "arrivals", k)
        served = min(queue + arrivals, mu)
        queue = queue + arrivals - served
        history.append(
            Second(at_seconds=k + 1, arrivals=arrivals, queue=queue, ttft_seconds=queue / mu + first)
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
    prefill = s.prefill(batch)
    saturated = run.arrival_rate > mu
    state: ServingState = "saturated" if saturated else "draining" if queue >= EMPTY_QUEUE else "keeping up"
    return ServingSnapshot(
        elapsed_seconds=elapsed,
        batch_limit=s.batch_limit,
        batch_limited_by=s.limited_by,
        capacity_requests_per_second=mu,
        saturated=saturated,
        state=state,
        drain_seconds=queue / (mu - run.arrival_rate) if state == "draining" else None,
        arrivals=history[-1].arrivals if history else 0,
        batch=batch,
        queue=queue,
        ttft_seconds=queue / mu + prefill,
        tpot_seconds=tpot,
        throughput_tokens_per_second=batch / tpot,
        requests_per_second=admitted,
        prefill_seconds=prefill,
        history=history,
    )
