"""The data path of a training job: storage → loader → compute (→ network) → checkpoint.

Stages run concurrently (the loader prefetches while the GPUs compute), so the slowest rate sets the pace;
the GPUs wait for input when the loader or the storage delivers fewer samples a second than they consume.
The gradient exchange of a distributed job is not overlapped with compute here: each step computes, then
exchanges. Checkpoints pause training while they are written. Pure arithmetic, no clock, no randomness.
"""

from __future__ import annotations

import math
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from app.engine.compute import all_reduce_seconds
from app.engine.text import plural
from app.engine.units import GB, MB

StageId = Literal["storage", "loader", "compute", "network"]


class DataPath(BaseModel):
    """What the job reads, how fast each stage goes, and how it checkpoints."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    # Lower bounds are where the arithmetic stays finite (a rate of 5e-324 makes an epoch of infinite seconds):
    # one byte, one byte a second, one sample in about 12 days (1e-6 a second). Slower is no data path at all.
    # (gradient_bytes too: above 0 alone let a subnormal make the exchange 0 s and its rate a division by zero.)
    dataset_samples: int = Field(ge=1, le=10**12, description="Samples in one epoch")
    sample_bytes: float = Field(ge=1, le=1e10, description="Average stored size of one sample in bytes")
    storage_read_bytes_per_s: float = Field(ge=1, le=1e13, description="What the storage delivers, bytes/s")
    loader_workers: int = Field(ge=1, le=4096, description="Loader worker processes")
    samples_per_s_per_worker: float = Field(ge=1e-6, le=1e9, description="Samples one worker decodes a second")
    gpus: int = Field(ge=1, le=65_536, description="GPUs training together")
    gpu_samples_per_s: float = Field(ge=1e-6, le=1e12, description="Samples a second the GPUs consume together")
    checkpoint_bytes: float = Field(ge=0, le=1e15, description="Size of one checkpoint in bytes")
    checkpoint_every_s: float = Field(ge=1, le=1e9, description="Seconds of training between checkpoints")
    storage_write_bytes_per_s: float = Field(ge=1, le=1e13, description="Checkpoint write speed, bytes/s")
    distributed: bool = Field(default=False, description="Several servers: gradients cross a network")
    nodes: int = Field(default=2, ge=2, le=65_536, description="Servers exchanging gradients")
    gradient_bytes: float = Field(default=100 * MB, ge=1, le=1e13, description="Gradients a step, bytes")
    batch_samples: int = Field(default=1024, ge=1, le=10**9, description="Samples a step, all GPUs together")
    network_bytes_per_s: float = Field(default=50 * GB, ge=1, le=1e13, description="Network, bytes/s one way")


class Stage(BaseModel):
    """One stage of the path with the samples a second it can sustain."""

    id: StageId
    name: str
    samples_per_s: float = Field(description="Samples a second this stage can sustain")
    detail: str = Field(description="Where the rate comes from, in a phrase")
    limits: bool = Field(description="True for the slowest stage, which sets the pace")


class TimeShare(BaseModel):
    """Where the time of one epoch goes."""

    id: Literal["computing", "waiting", "exchanging", "checkpointing"]
    label: str
    seconds: float
    share: float = Field(description="Fraction of the epoch, 0 to 1")


class DataPathResult(BaseModel):
    """The pace of the job, the GPUs' busy share and the epoch's time, part by part."""

    stages: list[Stage]
    limit: StageId = Field(description="The slowest stage")
    pace_samples_per_s: float = Field(description="Samples a second the path achieves between checkpoints")
    gpu_busy: float = Field(description="Share of the epoch the GPUs compute (utilisation counters)")
    epoch_seconds: float
    time: list[TimeShare]
    checkpoint_seconds: float = Field(description="Pause to write one checkpoint")
    checkpoints_per_epoch: float = Field(description="Checkpoints an epoch on average")
    exchange_seconds: float = Field(description="Gradient all-reduce of one step (0 when not distributed)")
    needed_workers: int = Field(description="Loader workers at which the loader stops limiting")


def _exchange_seconds(p: DataPath) -> float:
    """Ring all-reduce of the gradients between the servers (bandwidth term only)."""
    return all_reduce_seconds(p.gradient_bytes, p.nodes, p.network_bytes_per_s) if p.distributed else 0.0


def stages(p: DataPath) -> list[Stage]:
    """Each stage's sustainable rate in samples a second; the slowest is marked."""
    storage = p.storage_read_bytes_per_s / p.sample_bytes
    loader = p.loader_workers * p.samples_per_s_per_worker
    read = f"{p.storage_read_bytes_per_s / MB:,.0f} MB/s ÷ {p.sample_bytes / 1e3:,.0f} kB a sample"
    rates: list[tuple[StageId, str, float, str]] = [
        ("storage", "Storage", storage, read),
        ("loader", "Loader", loader, f"{plural(p.loader_workers, 'worker')} × {p.samples_per_s_per_worker:,.0f}/s"),
        ("compute", "Compute", p.gpu_samples_per_s, f"{plural(p.gpus, 'GPU')} together"),
    ]
    exchange = _exchange_seconds(p)
    if p.distributed:
        step = f"{p.batch_samples:,} samples a step ÷ {exchange * 1e3:,.1f} ms all-reduce"
        rates.append(("network", "Network", p.batch_samples / exchange, step))
    slowest = min(reversed(rates), key=lambda r: r[2])[0]  # on a tie, the later stage: the input keeps up
    return [Stage(id=i, name=n, samples_per_s=r, detail=d, limits=i == slowest) for i, n, r, d in rates]


def data_path(p: DataPath) -> DataPathResult:
    """The epoch of a training job: pace, GPU busy share and where the time goes."""
    found = stages(p)
    supply = min(s.samples_per_s for s in found if s.id in ("storage", "loader"))
    exchange = _exchange_seconds(p)
    computing = p.dataset_samples / p.gpu_samples_per_s
    exchanging = p.dataset_samples / p.batch_samples * exchange
    training = max(p.dataset_samples / supply, computing + exchanging)
    write = p.checkpoint_bytes / p.storage_write_bytes_per_s
    checkpoints = training / p.checkpoint_every_s
    epoch = training + checkpoints * write
    parts = [
        ("computing", "GPUs computing", computing),
        ("waiting", "GPUs waiting for input", training - computing - exchanging),
        ("exchanging", "Exchanging gradients", exchanging),
        ("checkpointing", "Paused for checkpoints", checkpoints * write),
    ]
    time = [
        TimeShare.model_validate({"id": i, "label": label, "seconds": s, "share": s / epoch})
        for i, label, s in parts
        if i != "exchanging" or p.distributed
    ]
    loader_needed = min(p.gpu_samples_per_s, p.storage_read_bytes_per_s / p.sample_bytes)
    return DataPathResult(
        stages=found, limit=next(s.id for s in found if s.limits),
        pace_samples_per_s=p.dataset_samples / training,
        gpu_busy=computing / epoch, epoch_seconds=epoch, time=time, checkpoint_seconds=write,
        checkpoints_per_epoch=checkpoints, exchange_seconds=exchange,
        needed_workers=max(1, math.ceil(loader_needed / p.samples_per_s_per_worker - 1e-9)),
    )
