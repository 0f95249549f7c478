"""Live serving run: requests arrive, wait and share a batch; past saturation the queue grows forever."""

from __future__ import annotations

from typing import Annotated, ClassVar

from pydantic import BaseModel, Field, field_validator

from app.engine.errors import DoesNotFit
from app.engine.models import CATALOG, check_model_id
from app.engine.plan import make_plan
from app.engine.plan import node_load as plan_node_load
from app.engine.run_load import serving_load, serving_request
from app.engine.serving_run import ServingRun, ServingSnapshot, ServingStretch, batch_that_fits, simulate_serving
from app.engine.text import num, seconds
from app.engine.workload import splits_heads
from app.widgets import _live
from app.widgets._chart import Frame, Plot, nice_max
from app.widgets.base import Widget, one_of

SIMULATED_SECONDS = 300  # the run shows five minutes of traffic; a real service keeps going
BATCH_CHOICES = (1, 4, 8, 16, 32, 64, 128, 256)
NODE_SPLITS = (1, 2, 4, 8)  # tensor-parallel splits tried, fewest GPUs first


class Params(_live.LiveParams):
    """Settings of the service; the live fields come from LiveParams.

    The service continues across a change of its arrival rate, batch limit or replay length; a new model (other
    weights, maybe more GPUs) or seed (other arrivals) is a new run."""

    STRETCH_SETTINGS: ClassVar[tuple[str, ...]] = ("arrival_rate", "max_batch")
    STATE_SIZE: ClassVar[int] = 1  # requests waiting
    RUN_IDENTITY: ClassVar[tuple[str, ...]] = ("model", "seed")

    model: str = Field(default="llama-3.1-8b", description="Catalog model id")
    arrival_rate: float = Field(
        default=1.0,
        ge=0.1,
        le=1000,
        allow_inf_nan=False,
        description="Requests arriving a second, on average",
    )
    max_batch: Annotated[int, one_of(*BATCH_CHOICES)] = Field(
        default=32, description="Most sequences decoded together"
    )

    @field_validator("model")
    @classmethod
    def _known(cls, value: str) -> str:
        return check_model_id(value)


class MiniChart(BaseModel):
    """A small time chart of the last simulated seconds."""

    frame: Frame
    points: str = ""
    bars: str = Field(default="", description="SVG path of the bars, one closed rectangle a second")
    limit_y: float | None = None
    caption: str


class Result(_live.LiveResult):
    """Everything the serving-run template shows."""

    batch_options: list[tuple[str, str]] = [(str(b), str(b)) for b in BATCH_CHOICES]
    gpus: int = 1
    precision: str = "bf16"
    horizon_seconds: int = SIMULATED_SECONDS
    speed: float = 0
    arrival_rate: float
    max_batch: int
    prompt_tokens: int = 0
    output_tokens: int = 0
    snap: ServingSnapshot | None = None
    load: float = Field(default=0, description="Arrival rate ÷ capacity")
    growth_per_second: float = Field(default=0, description="Queue growth a second past saturation")
    user_tokens_per_second: float = 0
    ttft_projected: bool = Field(
        default=False, description="The time to first token is longer than the run so far: a projection"
    )
    larger_batch: int | None = Field(
        default=None, description="A batch-limit choice above the present one that still fits in memory, if any"
    )
    fits_batch: int = Field(default=0, description="The largest batch the GPUs' memory holds, up to 4,096")
    arrivals_chart: MiniChart | None = None
    queue_chart: MiniChart | None = None
    ttft_chart: MiniChart | None = None


def _run(p: Params, gpus: int) -> ServingRun:
    return ServingRun(model=p.model, gpus=gpus, arrival_rate=p.arrival_rate, max_batch=p.max_batch)


def _fitting_run(p: Params) -> tuple[ServingRun, ServingSnapshot]:
    """The run on the fewest GPUs of dgx-1 that hold the model and one sequence's KV cache (tensor parallel), the
    plan's own memory breakdown; its batch is then what that memory holds (serving_run.batch_that_fits), so the
    dgx-1 panel, sized from the same plan, agrees. DoesNotFit if no split holds one sequence."""
    error: DoesNotFit | None = None
    for gpus in (n for n in NODE_SPLITS if splits_heads(CATALOG[p.model], n)):  # counts that divide the heads
        run = _run(p, gpus)
        try:
            return run, simulate_serving(run, p.seed, 0)
        except DoesNotFit as exc:
            error = exc
    assert error is not None
    raise error


def _time_plot(snap: ServingSnapshot, y_max: float) -> Plot:
    """A plot whose x axis is the simulated seconds the snapshot's history covers."""
    end = snap.history[-1].at_seconds if snap.history else 60
    return Plot(480, 170, x_min=max(0.0, end - 60), x_max=max(end, 60), y_max=y_max, bottom=38)


def _charts(snap: ServingSnapshot) -> tuple[MiniChart, MiniChart, MiniChart]:
    """Arrivals against capacity, the queue, and time to first token over the last simulated minute."""
    h = snap.history
    xs = [s.at_seconds for s in h]
    mu = snap.capacity_requests_per_second
    arr = _time_plot(snap, nice_max(max([mu, *(s.arrivals for s in h)]) * 1.1))
    step = arr.width_of(1)  # one second
    base = arr.y(0)
    bars = " ".join(
        f"M{arr.x(s.at_seconds - 1) + step * 0.1:.1f} {base}V{arr.y(s.arrivals)}h{step * 0.8:.1f}V{base}Z" for s in h
    )
    arrivals = MiniChart(
        frame=arr.frame("Simulated time (s)", "Requests / s", _secs, num), bars=bars, limit_y=arr.y(mu),
        caption=f"Requests arriving each second over the last {len(h)} simulated seconds; the dashed line is "
        f"what the server can finish: {mu:.1f} a second.",
    )
    queue_plot = _time_plot(snap, nice_max(max([1.0, *(s.queue for s in h)])))
    peak_queue = max([0.0, *(s.queue for s in h)])
    queue = MiniChart(
        frame=queue_plot.frame("Simulated time (s)", "Waiting (requests)", _secs, num),
        points=queue_plot.points(xs, [s.queue for s in h]) if h else "",
        caption=f"Requests waiting for a batch slot: {snap.queue:,.0f} now, at most {peak_queue:,.0f} "
        "in this minute.",
    )
    ttft_plot = _time_plot(snap, nice_max(max([snap.prefill_seconds * 2, *(s.ttft_seconds for s in h)])))
    ttft = MiniChart(
        frame=ttft_plot.frame("Simulated time (s)", "First token (s)", _secs, _ttft_label),
        points=ttft_plot.points(xs, [s.ttft_seconds for s in h]) if h else "",
        caption=f"Time to first token of a request arriving each second: {seconds(snap.ttft_seconds)} now.",
    )
    return arrivals, queue, ttft


def _secs(value: float) -> str:
    return f"{value:.0f}"


def _ttft_label(value: float) -> str:
    return f"{value:g}"


VERDICTS = {
    "keeping up": "keeping up",
    "draining": "draining the queue left from before",
    "saturated": "saturated: the queue keeps growing",
}


def _announce(state: _live.LiveState, snap: ServingSnapshot | None) -> str:
    """What a screen reader hears: only when the status or the verdict changes."""
    if state.status == "ready" or snap is None:
        return "Serving run ready to start."
    verdict = VERDICTS[snap.state]
    if state.status == "finished":
        return f"Serving run finished after {SIMULATED_SECONDS // 60} simulated minutes, {verdict}."
    if state.status == "paused":
        return "Serving run paused."
    return f"Serving run running, {verdict}."


def _resume(stretches: list[_live.Stretch]) -> list[ServingStretch]:
    """The stretches before the last, each with its own settings, ended by the next one's start."""
    return [
        ServingStretch(
            until_seconds=nxt.at, queue=nxt.state[0], arrival_rate=s.settings[0], max_batch=int(s.settings[1])
        )
        for s, nxt in zip(stretches, stretches[1:], strict=False)
    ]


class _Continuation:
    """The engine's answers _live.resolve needs, for this service."""

    def __init__(self, params: Params, run: ServingRun) -> None:
        self.params, self.run = params, run

    def close(self, stretches: list[_live.Stretch], simulated: float) -> tuple[float, tuple[float, ...]]:
        rate, batch = stretches[-1].settings
        old = self.run.model_copy(update={"arrival_rate": rate, "max_batch": int(batch)})
        at = min(simulated, SIMULATED_SECONDS)
        return at, (simulate_serving(old, self.params.seed, at, _resume(stretches)).queue,)

    def end(self, stretches: list[_live.Stretch]) -> float:
        return SIMULATED_SECONDS


def compute(params: Params) -> Result:
    """The service's state now: settings, button pressed and start time in, snapshot and charts out."""
    base = dict(model_name=CATALOG[params.model].name, arrival_rate=params.arrival_rate, max_batch=params.max_batch)
    try:
        run, _ = _fitting_run(params)
    except DoesNotFit as exc:
        plan = make_plan(serving_request(_run(params, NODE_SPLITS[-1]), 1))
        lead = "Even split over dgx-1's 8 GPUs the model does not fit: "
        return Result(**base, **_live.refused(exc, lead), gpus=8, node=plan_node_load(plan))
    speed = SIMULATED_SECONDS / params.play_seconds
    live = _live.resolve(params, speed, _live.clock(), _Continuation(params, run))
    snap = simulate_serving(run, params.seed, live.simulated, _resume(live.stretches))
    shown = None if live.status == "ready" else snap
    arrivals, queue, ttft = _charts(snap)
    mu = snap.capacity_requests_per_second
    fits = batch_that_fits(run.model_copy(update={"max_batch": 4096}))
    larger = next((b for b in BATCH_CHOICES if params.max_batch < b <= fits), None)
    return Result(
        **base, fits=True, gpus=run.gpus, precision=run.precision, live=live, speed=speed,
        prompt_tokens=run.prompt_tokens, output_tokens=run.output_tokens, snap=snap, load=params.arrival_rate / mu,
        growth_per_second=max(0.0, params.arrival_rate - mu), user_tokens_per_second=1 / snap.tpot_seconds,
        ttft_projected=snap.ttft_seconds > max(snap.elapsed_seconds, 1.0), larger_batch=larger, fits_batch=fits,
        arrivals_chart=arrivals, queue_chart=queue, ttft_chart=ttft, announcement=_announce(live, shown),
        node=serving_load(run, shown, running=live.running, finished=live.status == "finished"),
    )


WIDGET = Widget(
    name="serving-run",
    title="A chat service on dgx-1",
    params=Params,
    compute=compute,
    template="widgets/serving-run.html",
    description="A live serving run: arrivals, continuous batching, queue, time to first token, time per "
    "output token, throughput, and what saturation looks like.",
)
