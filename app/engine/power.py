"""Power follows work: one rule turns a busy share into watts, for a GPU and for a whole node.

A GPU's draw is its idle floor (higher once a model's weights sit in its memory) plus the busy share of the
way to its TDP; a node adds its non-GPU share (CPUs, memory, NVSwitches, NICs, fans). The facility widget, the
cost widget, the dgx-1 panel and both runs call this module, nothing else. The busy share is the share of
time the GPU has work (what nvidia-smi's utilisation counter reports): 1 for a fed training run, the
loader's share when the data loader starves it, the share of time requests are in flight when serving,
0 for a GPU no plan uses or a model loaded and waiting for requests. Every view that shows power (the
dgx-1 panel, the training run, the serving run, owning against renting) calls `watts`.

Linear in the busy share is a simplification: a memory-bound decode step keeps the GPU busy at well under
its TDP, so the figures at full busy are upper bounds for serving.
"""

from __future__ import annotations

from app.engine.hardware import DGX_H100, GPU, H100_SXM

# Idle draw, read off public nvidia-smi printouts of idle GPUs (no process, P0, persistence on):
# H100 80GB HBM3 64-73 W, so 70 W; A100-SXM4 50-70 W, so 60 W; H200 78 W. A GPU holding a loaded
# model but idle reads more (140-145 W with 72 GB allocated in wilicc/gpu-burn issue #114), which
# this floor leaves out. TDPs are the datasheets' (GPU.tdp_watts).
IDLE_WATTS: dict[str, float] = {"h100": 70.0, "a100": 60.0, "h200": 78.0}
# Idle with a model's weights in memory (HBM kept active, clocks up): 140 W on an H100 (the gpu-burn printout
# above). No printout found for the A100 or H200: they take the H100's 70 W step over their own floor.
LOADED_STEP_WATTS = 140.0 - IDLE_WATTS["h100"]
# The server's non-GPU share (two Xeons, 2 TiB of DDR5, four NVSwitch chips, ten ConnectX-7s, NVMe, fans):
# an 8-GPU H100 HGX node training Llama 2 13B with its GPUs near full use peaked at about 8.4 kW (Latif et al.,
# "Single-Node Power Demand During AI Training", IEEE Access 13, 2025), 18 % under the 10.2 kW rating; less the
# eight GPUs at their 700 W TDP that leaves 2.8 kW. Kept the same at every load: no published idle split of a
# DGX's non-GPU draw was found, so the idle node is an upper bound.
NODE_MEASURED_TRAINING_WATTS = 8400.0
NON_GPU_WATTS = NODE_MEASURED_TRAINING_WATTS - DGX_H100.gpus * H100_SXM.tdp_watts



POWER_SOURCE = (
    "idle: nvidia-smi printouts of idle GPUs (H100 80GB HBM3 64-73 W, A100-SXM4 50-70 W, H200 78 W; an H100 "
    "with 72 GB allocated 140-145 W, wilicc/gpu-burn issue #114); "
    "TDP: NVIDIA datasheets (H100 and H200 SXM 700 W, A100 SXM4 400 W; Llama 3.1 model card: "
    "H100-80GB at 700 W)"
)


def watts(busy: float, idle_watts: float, full_watts: float) -> float:
    """Draw at a busy share: idle + (full − idle) × busy, the share clamped to 0-1."""
    share = min(1.0, max(0.0, busy))
    return idle_watts + (full_watts - idle_watts) * share


def idle_watts(gpu: GPU = H100_SXM, loaded: bool = False) -> float:
    """A GPU's draw with nothing to do: its bare floor, or with a model's weights loaded."""
    return IDLE_WATTS[gpu.id] + (LOADED_STEP_WATTS if loaded else 0.0)


def gpu_watts(busy: float, gpu: GPU = H100_SXM, loaded: bool = False) -> float:
    """One GPU's draw at a busy share: its idle floor at 0 (higher with weights loaded), its TDP at 1."""
    return watts(busy, idle_watts(gpu, loaded), gpu.tdp_watts)


def node_watts(busy: float, loaded: bool = True, gpus_busy: int | None = None) -> float:
    """A dgx-1's draw: `gpus_busy` of its GPUs (all by default) at the busy share, the rest idle, plus the
    non-GPU share. A node put to work holds weights on every GPU it uses (`loaded`)."""
    n = DGX_H100.gpus if gpus_busy is None else gpus_busy
    gpu = DGX_H100.gpu
    return n * gpu_watts(busy, gpu, loaded) + (DGX_H100.gpus - n) * gpu_watts(0.0, gpu) + NON_GPU_WATTS


def node_load_for_watts(target: float) -> float:
    """The busy share at which a node draws `target` watts (0 to 1), the inverse of node_watts."""
    low, high = node_watts(0.0), node_watts(1.0)
    return min(1.0, max(0.0, (target - low) / (high - low)))

