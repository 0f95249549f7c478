"""Capacity against bandwidth: whether a model fits on one GPU, and what then limits its decode speed.

Capacity is a wall: the weights, KV cache and runtime fit in memory or the job does not start. Bandwidth is
a speed: each decode step reads the weights and the cache once, so time per step ≥ bytes ÷ bandwidth, while
compute needs only 2 × parameters × batch FLOPs ÷ peak. Below the ridge point (peak ÷ bandwidth) the first
bound is the larger one, and a GPU with more bandwidth decodes faster while one with more compute would not.
"""

from __future__ import annotations

from pydantic import BaseModel, Field

from app.engine import compute
from app.engine.hardware import GPUS, peak_flops
from app.engine.memory import per_gpu
from app.engine.workload import PlanRequest


class GpuLimits(BaseModel):
    """One GPU running one serving request: capacity and the two decode bounds (compute at peak)."""

    gpu: str
    name: str
    memory_bytes: int
    needed_bytes: int = Field(description="Weights + KV cache + prefill workspace + runtime on this GPU")
    weights: int
    kv_cache: int
    other: int = Field(description="Workspace and runtime")
    fits: bool
    bandwidth: float
    peak_flops: float
    bytes_per_step: float = Field(description="Weights and KV cache read by one decode step")
    memory_seconds: float = Field(description="Bytes ÷ bandwidth")
    compute_seconds: float = Field(description="2 × active parameters × batch ÷ peak")
    binds: compute.Binds
    tokens_per_second: float = Field(description="One sequence, at the larger bound")
    intensity: float = Field(description="FLOPs per byte of the decode step")
    ridge: float = Field(description="Peak ÷ bandwidth, FLOPs per byte")


def gpu_limits(req: PlanRequest) -> GpuLimits:
    """Capacity and decode bounds of a serving request on one GPU of its type."""
    req = req.model_copy(update={"mode": "serve", "gpus": 1})
    arch, gpu = req.architecture, req.hardware
    mem = per_gpu(req)
    read = mem.weights * compute.weight_share_read(arch, req.batch_size, req.precision) + mem.kv_cache
    flops = compute.inference_flops(arch.active_parameters, req.batch_size)
    step = compute.decode_step(gpu, req.precision, read, arch.active_parameters, req.batch_size)
    return GpuLimits(
        gpu=gpu.id, name=gpu.name, memory_bytes=gpu.memory_bytes, needed_bytes=mem.total, weights=mem.weights,
        kv_cache=mem.kv_cache, other=mem.total - mem.weights - mem.kv_cache,
        fits=mem.total <= gpu.memory_bytes,
        bandwidth=gpu.bandwidth, peak_flops=peak_flops(gpu, req.precision), bytes_per_step=read,
        memory_seconds=step.memory_seconds, compute_seconds=step.compute_seconds, binds=step.binds,
        tokens_per_second=1 / step.seconds, intensity=compute.intensity(flops, read),
        ridge=compute.ridge(gpu.id, req.precision),
    )


def compare_gpus(req: PlanRequest) -> list[GpuLimits]:
    """The same request on every GPU the engine knows (A100, H100, H200)."""
    return [gpu_limits(req.model_copy(update={"gpu": g})) for g in GPUS]
