"""The data path: storage → loader → compute (→ network) → checkpoint; the slowest stage sets the pace."""

from __future__ import annotations

from pydantic import BaseModel, Field

from app.engine.memory import RUNTIME_BYTES
from app.engine.pipeline import DataPath, DataPathResult, data_path
from app.engine.placement import NodeLoad, spread
from app.engine.text import num, pct, plural, seconds
from app.engine.units import GB, MB
from app.widgets._fields import engine_range
from app.widgets._plot import Segment, stacked
from app.widgets.base import Widget

DIAGRAM_WIDTH = 400  # SVG units: five boxes of 68 with gaps of 15
BOX, GAP = 68, 15
TIME_WIDTH = 400


class Params(BaseModel):
    """The classifier's data path, as the lesson describes it; every rate a learner can change."""

    dataset_samples: int = Field(
        default=1_281_167, ge=1, le=10**10, description="Samples (images) in one epoch"
    )
    sample_kb: float = Field(default=110, **engine_range(DataPath, "sample_bytes", 1e3, le=1e6),
                             description="Average stored size of one sample, kB")
    storage_mb_s: float = Field(default=2000, **engine_range(DataPath, "storage_read_bytes_per_s", MB, le=1e7),
                                description="What the storage delivers, MB/s")
    loader_workers: int = Field(default=4, ge=1, le=64, description="Loader worker processes")
    samples_per_s_per_worker: float = Field(
        default=500, **engine_range(DataPath, "samples_per_s_per_worker", le=1e7),
        description="Samples one worker decodes a second"
    )
    gpus: int = Field(default=8, ge=1, le=1024, description="GPUs training together")
    gpu_samples_per_s: float = Field(
        default=5000, **engine_range(DataPath, "gpu_samples_per_s", le=1e9),
        description="Samples a second the GPUs consume",
    )
    checkpoint_gb: float = Field(default=1, ge=0, le=1e5, description="Size of one checkpoint, GB")
    checkpoint_every_minutes: float = Field(
        default=30, ge=1, le=10_080, description="Minutes between checkpoints"
    )
    storage_write_mb_s: float = Field(default=1000, **engine_range(DataPath, "storage_write_bytes_per_s", MB, le=1e7),
                                      description="Checkpoint write speed, MB/s")
    distributed: bool = Field(
        default=False, description="Spread over several servers: a network stage appears"
    )
    nodes: int = Field(default=2, ge=2, le=1024, description="Servers exchanging gradients")
    network_gb_s: float = Field(
        default=50, **engine_range(DataPath, "network_bytes_per_s", GB, le=1e4),
        description="Network link, GB/s one way (400 Gb/s = 50)"
    )
    gradient_mb: float = Field(default=100, **engine_range(DataPath, "gradient_bytes", MB, le=1e7),
                               description="Gradients exchanged each step, MB")
    batch_samples: int = Field(
        default=1024, ge=1, le=10**7, description="Samples in one step, all GPUs together"
    )
    static: bool = Field(default=False, description="Diagram only, without controls")

    def engine(self) -> DataPath:
        return DataPath(
            dataset_samples=self.dataset_samples,
            sample_bytes=self.sample_kb * 1e3,
            storage_read_bytes_per_s=self.storage_mb_s * MB,
            loader_workers=self.loader_workers,
            samples_per_s_per_worker=self.samples_per_s_per_worker,
            gpus=self.gpus,
            gpu_samples_per_s=self.gpu_samples_per_s,
            checkpoint_bytes=self.checkpoint_gb * GB,
            checkpoint_every_s=self.checkpoint_every_minutes * 60,
            storage_write_bytes_per_s=self.storage_write_mb_s * MB,
            distributed=self.distributed,
            nodes=self.nodes,
            gradient_bytes=self.gradient_mb * MB,
            batch_samples=self.batch_samples,
            network_bytes_per_s=self.network_gb_s * GB,
        )


class Box(BaseModel):
    """A stage drawn as a box in the diagram."""

    id: str
    name: str
    x: float
    rate: str = Field(description="Samples a second, formatted, or the checkpoint's size and interval")
    unit: str
    limits: bool
    arrow: bool = Field(description="Draw an arrow from the previous box")


class DataPathView(BaseModel):
    """The engine's result laid out: the boxes, the epoch's time bar, and the sentences."""

    r: DataPathResult
    boxes: list[Box]
    diagram_width: int = DIAGRAM_WIDTH
    box_width: int = BOX
    box_mid: int = BOX // 2
    arrow_from: int = -GAP
    time: list[Segment]
    time_width: int = TIME_WIDTH
    busy_width: float
    headline: str
    caption: str
    advice: str


def _boxes(p: Params, r: DataPathResult) -> list[Box]:
    out = [
        Box(
            id=s.id,
            name=s.name,
            x=i * (BOX + GAP),
            rate=num(s.samples_per_s),
            unit="samples/s",
            limits=s.limits,
            arrow=i > 0,
        )
        for i, s in enumerate(r.stages)
    ]
    every = seconds(p.checkpoint_every_minutes * 60)
    out.append(
        Box(
            id="checkpoint",
            name="Checkpoint",
            x=len(out) * (BOX + GAP),
            rate=f"{p.checkpoint_gb:g} GB",
            unit=f"every {every}",
            limits=False,
            arrow=True,
        )
    )
    return out


def _advice(r: DataPathResult, p: Params) -> str:
    """What to change, for the stage that limits."""
    if r.limit == "loader":
        return (
            f"The loader limits: about {plural(r.needed_workers, 'worker')} at "
            f"{plural(p.samples_per_s_per_worker, 'sample')} a "
            "second each would keep up, or store the images already decoded."
        )
    if r.limit == "storage":
        return (
            "Storage limits: more workers cannot read faster than the disks deliver. "
            "Faster or local storage, or smaller samples."
        )
    if r.limit == "network":
        return (
            "The gradient exchange limits: a faster network, fewer exchanges (larger steps), "
            "or overlap it with compute."
        )
    return (
        "Compute sets the pace: the GPUs never wait for input. "
        "Only now would faster GPUs make the epoch shorter."
    )


def compute(params: Params) -> DataPathView:
    """The engine's data path for these rates, laid out for the diagram."""
    r = data_path(params.engine())
    parts = [(t.id, t.label, t.seconds) for t in r.time]
    limit = next(s for s in r.stages if s.limits)
    stages = "; ".join(f"{s.name.lower()} {plural(s.samples_per_s, 'sample', digits=0)} a second" for s in r.stages)
    caption = (
        f"The data path: {stages}; then a checkpoint of {params.checkpoint_gb:g} GB every "
        f"{plural(params.checkpoint_every_minutes, 'minute')}. The {limit.name.lower()} is the slowest stage "
        "and sets the pace."
    )
    headline = (
        f"The {limit.name.lower()} sets the pace at {plural(r.pace_samples_per_s, 'sample', digits=0)} a second; "
        f"the GPUs are busy {pct(r.gpu_busy)} of the time."
    )
    return DataPathView(
        r=r,
        boxes=_boxes(params, r),
        time=stacked(parts, TIME_WIDTH / r.epoch_seconds),
        busy_width=round(TIME_WIDTH * r.gpu_busy, 2),
        headline=headline,
        caption=caption,
        advice=_advice(r, params),
    )


def node_load(params: Params, view: DataPathView) -> NodeLoad:
    """The GPUs of the job, busy the share the data path lets them be (only the CUDA runtime is placed)."""
    r = view.r
    return spread(
        {"runtime": RUNTIME_BYTES},
        params.gpus,
        utilisation=r.gpu_busy,
        activity=f"training the image classifier on {plural(params.gpus, 'GPU')}: busy {pct(r.gpu_busy)}, "
        f"the {r.limit} sets the pace (model memory not modelled)",
    )


WIDGET = Widget(
    name="data-path",
    title="Follow the data path",
    params=Params,
    compute=compute,
    template="widgets/data-path.html",
    node_load=node_load,
    description="Rates of storage, loader, compute, network, checkpoint; the slowest sets the pace.",
)
