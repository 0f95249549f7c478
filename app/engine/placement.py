"""What sits on each of dgx-1's eight GPUs: the data behind the dgx-1 panel."""

from __future__ import annotations

from pydantic import BaseModel, Field, computed_field

from app.engine.hardware import DGX_H100, GPU, H100_SXM
from app.engine.power import NON_GPU_WATTS, gpu_watts, idle_watts

# Parts of a plan that occupy GPU memory, in the order the panel stacks them.
COMPONENTS: tuple[str, ...] = (
    "weights",
    "kv_cache",
    "activations",
    "loss_head",
    "gradients",
    "optimizer",
    "runtime",
)
# Each part's name as every view writes it: the dgx-1 panel, the memory widgets and the will-it-fit drill.
COMPONENT_LABELS: dict[str, str] = {
    "weights": "Weights",
    "kv_cache": "KV cache",
    "activations": "Activations",
    "loss_head": "Loss head",
    "gradients": "Gradients",
    "optimizer": "Optimizer state",
    "runtime": "Runtime",
}

# H100 SXM5 80GB: 80 GB HBM3 (NVIDIA H100 datasheet).
H100_CAPACITY_BYTES = 80 * 10**9
# An idle H100's draw (app.engine.power, from nvidia-smi printouts of idle H100s).
H100_IDLE_WATTS = idle_watts()
NODE_GPUS = DGX_H100.gpus  # the panel draws dgx-1's GPUs


class GpuLoad(BaseModel):
    """One GPU of the node: what its memory holds, how busy it is and what it draws."""

    index: int = Field(ge=0, description="GPU index, 0 to 7 on dgx-1")
    capacity: int = Field(description="Memory capacity in bytes")
    parts: dict[str, int] = Field(default_factory=dict, description="Bytes per component (see COMPONENTS)")
    utilisation: float = Field(default=0.0, ge=0.0, le=1.0, description="Share of time the GPU computes")
    power_w: float = Field(default=H100_IDLE_WATTS, ge=0.0, description="Power draw in watts")

    @computed_field  # type: ignore[prop-decorator]
    @property
    def used(self) -> int:
        """Bytes in use on this GPU."""
        return sum(self.parts.values())

    @computed_field  # type: ignore[prop-decorator]
    @property
    def overflow(self) -> int:
        """Bytes beyond capacity; 0 when the GPU's share fits."""
        return max(0, self.used - self.capacity)


class NodeLoad(BaseModel):
    """The whole dgx-1: eight GPUs and a sentence on what is running."""

    name: str = "dgx-1"
    gpus: list[GpuLoad]
    activity: str = Field(default="idle", description="What the node is doing, in a few words")
    why: str = Field(default="", description="Why a GPU overflows, when one does")
    shown_by: str = Field(default="", description="What placed this work, as the page names it (a widget's title)")

    @computed_field  # type: ignore[prop-decorator]
    @property
    def fits(self) -> bool:
        """True when no GPU overflows."""
        return all(g.overflow == 0 for g in self.gpus)

    @computed_field  # type: ignore[prop-decorator]
    @property
    def power_w(self) -> float:
        """Power of the eight GPUs together, in watts."""
        return sum(g.power_w for g in self.gpus)

    @computed_field  # type: ignore[prop-decorator]
    @property
    def server_power_w(self) -> float:
        """Power of the whole server: its GPUs plus the non-GPU share (app.engine.power.NON_GPU_WATTS)."""
        return self.power_w + NON_GPU_WATTS


def idle_node(capacity: int = H100_CAPACITY_BYTES, gpus: int = NODE_GPUS) -> NodeLoad:
    """dgx-1 with nothing loaded."""
    return NodeLoad(gpus=[GpuLoad(index=i, capacity=capacity) for i in range(gpus)])


def spread(
    per_gpu: dict[str, int],
    gpus_used: int,
    *,
    activity: str,
    utilisation: float = 0.0,
    why: str = "",
    capacity: int = H100_CAPACITY_BYTES,
    gpu: GPU = H100_SXM,
) -> NodeLoad:
    """Place the same per-GPU share on the first `gpus_used` GPUs (at most 8 shown); the rest idle.

    Each GPU's power follows its busy share (app.engine.power.gpu_watts), from the floor of a GPU holding
    weights; a GPU the plan does not use draws its bare idle floor.
    """
    shown = min(max(gpus_used, 0), NODE_GPUS)
    held = sum(int(v) for k, v in per_gpu.items() if k in COMPONENTS)
    holds = 0 < held <= capacity  # a plan that overflows never loads its weights
    watts, idle = gpu_watts(utilisation, gpu, loaded=holds), gpu_watts(0.0, gpu)
    gpus = [
        GpuLoad(
            index=i,
            capacity=capacity,
            parts={k: int(v) for k, v in per_gpu.items() if k in COMPONENTS and v > 0} if i < shown else {},
            utilisation=utilisation if i < shown else 0.0,
            power_w=watts if i < shown else idle,
        )
        for i in range(NODE_GPUS)
    ]
    return NodeLoad(gpus=gpus, activity=activity, why=why)
