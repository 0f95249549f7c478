"""Batching: one decode step serves every sequence of the batch, so throughput climbs until compute binds."""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import BaseModel, Field

from app.engine import memory
from app.engine.compute import Binds
from app.engine.hardware import achieved_bandwidth, get_gpu
from app.engine.memory import Knobs
from app.engine.plan import serve_bounds
from app.engine.workload import PlanRequest

DEFAULT_BATCHES: tuple[int, ...] = (1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024)


class BatchPoint(BaseModel):
    """Serving at one batch size."""

    batch: int = Field(description="Sequences decoded together")
    fits: bool = Field(description="True when the batch's KV cache and workspace fit beside the weights")
    per_gpu_total: int = Field(description="Bytes on each GPU")
    decode_seconds_per_token: float = Field(description="One decode step: a token for every sequence")
    tokens_per_second: float = Field(description="Output tokens a second for one sequence")
    throughput_tokens_per_second: float = Field(description="Output tokens a second for the batch")
    intensity: float = Field(description="FLOPs per byte read in a decode step")
    binds: Binds = Field(description="Which bound sets the decode step")


def batch_sweep(req: PlanRequest, batches: Sequence[int] = DEFAULT_BATCHES) -> list[BatchPoint]:
    """The same serving plan at several batch sizes: memory, speed, and where it crosses the ridge."""
    arch, gpu = req.architecture, get_gpu(req.gpu)
    capacity = gpu.memory_bytes
    points = []
    for b in batches:
        at = req.model_copy(update={"batch_size": b})
        mem = memory.breakdown(arch, Knobs.of(at), capacity)
        _, step = serve_bounds(arch, at, mem, gpu)
        flops = 2 * arch.active_parameters * b / req.gpus
        points.append(
            BatchPoint(
                batch=b,
                fits=mem.total <= capacity,
                per_gpu_total=mem.total,
                decode_seconds_per_token=step.seconds,
                tokens_per_second=1 / step.seconds,
                throughput_tokens_per_second=b / step.seconds,
                intensity=flops / (step.memory_seconds * achieved_bandwidth(gpu)),
                binds=step.binds,
            )
        )
    return points
