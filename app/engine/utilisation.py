"""Busy is not useful: a GPU decoding one sequence runs kernels all the time and uses little of its compute.

"Busy" is the share of time at least one kernel runs, what nvidia-smi's utilisation counter reports; while
requests keep a server decoding, it is 100 %. "Useful" is the achieved rate as a share of peak: FLOP/s
against the dense tensor peak, and bytes/s against the memory bandwidth.
"""

from __future__ import annotations

from pydantic import BaseModel, Field

from app.engine import compute
from app.engine.hardware import peak_flops
from app.engine.plan import make_plan
from app.engine.workload import PlanRequest


class ServingUtilisation(BaseModel):
    """One decode step of a serving plan, seen as busy time and as useful work."""

    batch_size: int
    gpus: int
    fits: bool = Field(description="The plan fits in the GPUs' memory")
    step_seconds: float = Field(description="One decode step: a token for every sequence of the batch")
    tokens_per_second: float = Field(description="Output tokens a second, whole batch")
    busy: float = Field(description="Share of time a kernel runs: 1 while requests keep the GPU decoding")
    useful_compute: float = Field(description="Achieved FLOP/s ÷ dense peak")
    useful_bandwidth: float = Field(description="Achieved bytes/s ÷ memory bandwidth")
    binds: compute.Binds = Field(description="Which bound sets the step time")
    flops_per_step: float = Field(description="FLOPs of one step on one GPU")
    bytes_per_step: float = Field(description="Bytes one GPU reads in one step")
    peak_flops: float
    bandwidth: float
    price_per_gpu_hour: float = Field(description="Illustrative hourly price of one GPU")
    usd_per_million_tokens: float = Field(description="GPU time for a million output tokens at that price")


def serving_utilisation(req: PlanRequest, price_per_gpu_hour: float) -> ServingUtilisation:
    """Busy and useful shares of one decode step, and what a million tokens cost at an hourly price."""
    if req.mode != "serve":  # served, validated afresh: the GPU count must split the heads
        req = PlanRequest.model_validate({**dict(req), "mode": "serve"})
    plan = make_plan(req)
    assert plan.serve is not None  # serve mode always has serving figures
    arch, gpu = req.architecture, req.hardware
    mem = plan.per_gpu
    read = mem.weights * compute.weight_share_read(arch, req.batch_size, req.precision) + mem.kv_cache
    flops = compute.inference_flops(arch.active_parameters, req.batch_size) / req.gpus
    bound = plan.serve.decode  # the plan's own decode step, computed once
    step = plan.serve.decode_seconds_per_token
    peak = peak_flops(gpu, req.precision)
    tokens = req.batch_size / step
    return ServingUtilisation(
        batch_size=req.batch_size, gpus=req.gpus, fits=plan.fits, step_seconds=step, tokens_per_second=tokens,
        busy=1.0, useful_compute=flops / step / peak, useful_bandwidth=read / step / gpu.bandwidth,
        binds=bound.binds, flops_per_step=flops,
        bytes_per_step=read, peak_flops=peak, bandwidth=gpu.bandwidth, price_per_gpu_hour=price_per_gpu_hour,
        usd_per_million_tokens=req.gpus * price_per_gpu_hour / 3600 / tokens * 1e6,
    )
