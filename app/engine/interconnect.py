"""Interconnect: one all-reduce of a model's gradients over NVLink, PCIe and the network, side by side."""

from __future__ import annotations

from pydantic import BaseModel, Field

from app.engine.collectives import achieved_over
from app.engine.compute import all_reduce, compute_seconds, training_flops
from app.engine.hardware import get_gpu, get_link, peak_flops
from app.engine.memory import weight_bytes
from app.engine.models import get_model


class LinkTime(BaseModel):
    """One link: its bandwidth and the time of the all-reduce over it."""

    id: str
    name: str
    bandwidth: float = Field(description="Line rate, bytes per second, one direction")
    achieved: float = Field(description="The bus bandwidth a ring reaches over it (app.engine.collectives)")
    seconds: float = Field(description="Ring all-reduce time as NCCL runs it: latency + bytes on the bus ÷ achieved")
    share_of_step: float = Field(description="All-reduce ÷ (compute of a step + all-reduce), no overlap")
    fraction_of_slowest: float = Field(description="Seconds ÷ the slowest link's seconds (for bars)")


class AllReduceComparison(BaseModel):
    """The gradients of one training step exchanged over each link."""

    model: str = Field(description="Model name")
    precision: str
    bytes: int = Field(description="Gradient bytes all-reduced each step (parameters × bytes)")
    gpus: int
    step_tokens: int = Field(description="Tokens each GPU computes in a step")
    compute_seconds: float = Field(description="One step's compute on one GPU: 6·N·tokens ÷ (peak × MFU)")
    links: list[LinkTime]
    fastest: str
    slowest: str
    ratio: float = Field(description="Slowest link's time ÷ fastest link's time")


def all_reduce_comparison(
    model: str, precision: str, gpus: int, links: list[str], step_tokens: int = 8192, mfu: float = 0.4,
    gpu: str = "h100",
) -> AllReduceComparison:
    """Ring all-reduce of the model's gradients over each named link: NCCL's latency + 2·(n−1)/n × bytes ÷ the
    bus bandwidth a ring reaches over it (compute.all_reduce, the figure a training plan uses over NVLink)."""
    arch = get_model(model)
    nbytes = weight_bytes(arch, precision)
    peak = peak_flops(get_gpu(gpu), precision)
    step = compute_seconds(training_flops(arch.active_parameters, step_tokens), 1, peak, mfu)
    found = [get_link(link) for link in links]
    times = [all_reduce(nbytes, gpus, lk.id) for lk in found]
    slowest = max(times) or 1.0
    rows = [
        LinkTime(id=lk.id, name=lk.name, bandwidth=lk.bandwidth, achieved=achieved_over(lk.bandwidth), seconds=t,
                 share_of_step=t / (step + t),
                 fraction_of_slowest=t / slowest)
        for lk, t in zip(found, times, strict=True)
    ]
    fast, slow = min(rows, key=lambda r: r.seconds), max(rows, key=lambda r: r.seconds)
    return AllReduceComparison(
        model=arch.name, precision=precision, bytes=nbytes, gpus=gpus, step_tokens=step_tokens,
        compute_seconds=step, links=rows, fastest=fast.id, slowest=slow.id,
        ratio=slow.seconds / fast.seconds if fast.seconds else 1.0,
    )
