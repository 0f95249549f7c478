"""Power follows work: one rule turns a busy share into watts, for a GPU and for a whole node.

A GPU's draw is its idle floor plus the busy share of the way to its TDP. The busy share is the share of
time the GPU has work (what nvidia-smi's utilisation counter reports): 1 for a fed training run, the
loader's share when the data loader starves it, the share of time requests are in flight when serving,
0 for a GPU no plan uses or a model loaded and waiting for requests. Every view that shows power (the
dgx-1 panel, the training run, the serving run, owning against renting) calls `watts`.

Linear in the busy share is a simplification: a memory-bound decode step keeps the GPU busy at well under
its TDP, so the figures at full busy are upper bounds for serving.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from app.engine.hardware import GPU, H100_SXM

# Idle draw, read off public nvidia-smi printouts of idle GPUs (no process, P0, persistence on):
# H100 80GB HBM3 64-73 W, so 70 W; A100-SXM4 50-70 W, so 60 W; H200 78 W. A GPU holding a loaded
# model but idle reads more (140-145 W with 72 GB allocated in wilicc/gpu-burn issue #114), which
# this floor leaves out. TDPs are the datasheets' (GPU.tdp_watts).
IDLE_WATTS: dict[str, float] = {"h100": 70.0, "a100": 60.0, "h200": 78.0}


class PowerSource(BaseModel):
    """Where a GPU's idle and full power come from (for /numbers)."""

    model_config = ConfigDict(frozen=True)

    gpu: str = Field(description="GPU id")
    idle_watts: float = Field(description="Draw at 0 % busy")
    tdp_watts: float = Field(description="Draw at 100 % busy: the datasheet TDP")
    source: str = Field(description="Where the two figures come from")


POWER_SOURCE = (
    "idle: nvidia-smi printouts of idle GPUs (H100 80GB HBM3 64-73 W, A100-SXM4 50-70 W, H200 78 W); "
    "TDP: NVIDIA datasheets (H100 and H200 SXM 700 W, A100 SXM4 400 W; Llama 3.1 model card: "
    "H100-80GB at 700 W)"
)


def watts(busy: float, idle_watts: float, full_watts: float) -> float:
    """Draw at a busy share: idle + (full − idle) × busy, the share clamped to 0-1."""
    share = min(1.0, max(0.0, busy))
    return idle_watts + (full_watts - idle_watts) * share


def idle_watts(gpu: GPU = H100_SXM) -> float:
    """A GPU's draw with nothing to do."""
    return IDLE_WATTS[gpu.id]


def gpu_watts(busy: float, gpu: GPU = H100_SXM) -> float:
    """One GPU's draw at a busy share: its idle floor at 0, its TDP at 1."""
    return watts(busy, idle_watts(gpu), gpu.tdp_watts)


def power_source(gpu: GPU) -> PowerSource:
    """A GPU's idle and full draw with their source."""
    return PowerSource(gpu=gpu.id, idle_watts=idle_watts(gpu), tdp_watts=gpu.tdp_watts, source=POWER_SOURCE)
