"""What a running simulation puts on dgx-1 at one moment: memory per GPU, utilisation and power.

The training and serving simulations (training_run, serving_run) give a run's state in time; this
module places that state on the eight GPUs for the dgx-1 panel.
"""

from __future__ import annotations

import math

from app.engine import memory
from app.engine.placement import COMPONENTS, NodeLoad, spread
from app.engine.serving_run import ServingRun, ServingSnapshot, batch_that_fits, plan_request
from app.engine.text import num
from app.engine.training_run import TrainingRun, TrainingSnapshot
from app.engine.workload import PlanRequest


def _gpus(n: int) -> str:
    return f"{num(n)} GPU" + ("s" if n > 1 else "")


def training_activity(run: TrainingRun, snap: TrainingSnapshot | None, running: bool) -> str:
    """A few words on what a training run is doing; they change only when its phase does."""
    name = f"training {run.plan_request().architecture.name} on {_gpus(run.gpus)}"
    if snap is None or snap.elapsed_seconds == 0:
        return f"{name}: ready to start"
    if snap.finished:
        return f"{name}: finished"
    if not running:
        return f"{name}: paused"
    if snap.phase == "checkpointing":
        return f"{name}: writing a checkpoint, GPUs waiting"
    return f"{name}: waiting on the data loader" if snap.loader_bound else f"{name}: computing"


def training_load(run: TrainingRun, snap: TrainingSnapshot | None, running: bool = True) -> NodeLoad:
    """The run's training state on each GPU; busy as the snapshot says while it runs, else idle."""
    mem = memory.per_gpu(run.plan_request())
    shares = {c: int(getattr(mem, c)) for c in COMPONENTS}
    busy = snap.utilisation if running and snap is not None and not snap.finished else 0.0
    return spread(
        shares,
        run.gpus,
        activity=training_activity(run, snap, running),
        utilisation=busy,
        capacity=mem.capacity,
        gpu=run.hardware,
    )


def serving_request(run: ServingRun, batch: int) -> PlanRequest:
    """The serving run as a plan: `batch` sequences, each caching a whole request's tokens
    (app.engine.serving_run.plan_request, the one the run sizes its batch limit from)."""
    return plan_request(run, batch)


def serving_utilisation(snap: ServingSnapshot | None) -> float:
    """Share of time the GPUs have work: 1 while requests queue, else 1 − e^(−batch).

    With Poisson arrivals the number of requests in service is Poisson distributed with mean `batch`
    (an infinite-server queue), so the server is empty, and the GPUs idle, with probability e^(−batch).
    This is time busy, as nvidia-smi reports it, not the share of peak FLOPS.
    """
    if snap is None or snap.elapsed_seconds == 0:
        return 0.0
    if snap.queue > 0:
        return 1.0
    return 1 - math.exp(-snap.batch)


def serving_load(
    run: ServingRun, snap: ServingSnapshot | None, running: bool = True, finished: bool = False
) -> NodeLoad:
    """Weights resident, the KV cache reserved for a full batch (servers allocate it up front), busy share.

    The batch is the run's own limit, sized from this same plan (serving_run.batch_that_fits), so the panel
    and the run agree on whether it fits; the words follow the run's state (keeping up, draining, saturated;
    paused; finished)."""
    limit = snap.batch_limit if snap is not None else batch_that_fits(run)  # before Start too: the run's own limit
    mem = memory.per_gpu(serving_request(run, max(1, limit)))
    shares = {c: int(getattr(mem, c)) for c in COMPONENTS}
    name = f"serving {serving_request(run, 1).architecture.name} on {_gpus(run.gpus)}"
    if snap is None or snap.elapsed_seconds == 0:
        activity = f"{name}: weights loaded, waiting for requests"
    elif finished:
        activity = f"{name}: finished, the replay is over"
    elif not running:
        activity = f"{name}: paused, no new requests admitted"
    elif snap.state == "saturated":
        activity = f"{name}: saturated, the queue grows"
    elif snap.state == "draining":
        activity = f"{name}: draining a queue of {num(snap.queue)}"
    else:
        activity = f"{name}: keeping up"
    busy = serving_utilisation(snap) if running else 0.0
    return spread(
        shares, run.gpus, activity=activity, utilisation=busy, capacity=mem.capacity, gpu=run.hardware
    )
