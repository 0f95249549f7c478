"""Every hardware and model constant the engine uses, with its source, read from the engine's own records."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from app.engine import compute, memory
from app.engine.anchors import AnchorRow, anchor_rows
from app.engine.hardware import DGX_H100, GPUS, LINKS, NVLINK_4_ACHIEVED
from app.engine.models import CATALOG, SOURCES
from app.engine.power import POWER_SOURCE, idle_watts

Unit = Literal["bytes", "bytes/s", "FLOP/s", "W", "count", "GHz", "s", "tokens"]


class Constant(BaseModel):
    """One figure the engine computes with, and where it comes from."""

    model_config = ConfigDict(frozen=True)

    group: str = Field(description="The record it belongs to: a GPU, dgx-1, a link, a model, the engine")
    name: str = Field(description="What the figure is")
    value: float = Field(description="The figure, in `unit`")
    unit: Unit = Field(description="Its unit")
    source: str = Field(description="Where it comes from")


def _gpu_constants() -> list[Constant]:
    """Each GPU's datasheet figures and its idle draw."""
    rows = []
    for gpu in GPUS.values():
        rows += [
            Constant(group=gpu.name, name="memory (planning figure)", value=gpu.memory_bytes, unit="bytes",
                     source=gpu.source),
            Constant(group=gpu.name, name="memory bandwidth", value=gpu.bandwidth, unit="bytes/s", source=gpu.source),
            *(Constant(group=gpu.name, name=f"dense {p} peak", value=v, unit="FLOP/s", source=gpu.source)
              for p, v in gpu.peak_flops.items()),
            Constant(group=gpu.name, name="TDP (power at 100 % busy)", value=gpu.tdp_watts, unit="W",
                     source=gpu.source),
            Constant(group=gpu.name, name="idle power (0 % busy)", value=idle_watts(gpu), unit="W",
                     source=POWER_SOURCE),
            Constant(group=gpu.name, name="NVLink, one way", value=gpu.nvlink_bandwidth, unit="bytes/s",
                     source=gpu.source),
            Constant(group=gpu.name, name="PCIe x16, one way", value=gpu.pcie_bandwidth, unit="bytes/s",
                     source=gpu.source),
            Constant(group=gpu.name, name="streaming multiprocessors", value=gpu.sms, unit="count", source=gpu.source),
            Constant(group=gpu.name, name="L2 cache", value=gpu.l2_bytes, unit="bytes", source=gpu.source),
        ]  # fmt: skip
    return rows


def _node_constants() -> list[Constant]:
    """dgx-1: the node, its CPUs, its network and its links."""
    n, cpu, src = DGX_H100, DGX_H100.cpu, DGX_H100.source
    group = f"dgx-1 ({n.name})"
    rows = [
        Constant(group=group, name="GPUs", value=n.gpus, unit="count", source=src),
        Constant(group=group, name="NVSwitch chips", value=n.nvswitch_chips, unit="count", source=src),
        Constant(group=group, name="system memory", value=n.system_memory_bytes, unit="bytes", source=src),
        Constant(group=group, name="compute network ports", value=n.network.links, unit="count", source=src),
        Constant(group=group, name="network to other nodes, all eight rails", value=compute.node_network_bandwidth(),
                 unit="bytes/s", source=f"{n.network.links} x {n.network.link.source}"),
        Constant(group=group, name="data NVMe drives", value=n.nvme.data_drives, unit="count", source=src),
        Constant(group=group, name="one data drive", value=n.nvme.data_drive_bytes, unit="bytes", source=src),
        Constant(group=group, name="maximum power", value=n.max_power_watts, unit="W", source=src),
        Constant(group=cpu.name, name="cores", value=cpu.cores, unit="count", source=cpu.source),
        Constant(group=cpu.name, name="base clock", value=cpu.base_ghz, unit="GHz", source=cpu.source),
        Constant(group=cpu.name, name="boost clock", value=cpu.boost_ghz, unit="GHz", source=cpu.source),
        Constant(group=cpu.name, name="AVX-512 fp32 peak (arithmetic)", value=cpu.peak_flops_fp32_avx512,
                 unit="FLOP/s", source=cpu.source),
        Constant(group=cpu.name, name="AMX bf16 peak (arithmetic)", value=cpu.peak_flops_bf16_amx, unit="FLOP/s",
                 source=cpu.source),
        Constant(group=cpu.name, name="DRAM bandwidth (arithmetic)", value=cpu.memory_bandwidth, unit="bytes/s",
                 source=cpu.source),
    ]  # fmt: skip
    rows += [Constant(group="Links", name=lk.name, value=lk.bandwidth, unit="bytes/s", source=lk.source)
             for lk in LINKS.values()]  # fmt: skip
    rows.append(Constant(group="Links", name="NVLink 4 reached in practice", value=NVLINK_4_ACHIEVED,
                         unit="bytes/s", source="jax-ml scaling-book, GPU chapter"))  # fmt: skip
    return rows


def _engine_constants() -> list[Constant]:
    """The engine's own assumptions that are not hardware."""
    nccl = "NVIDIA/nccl src/graph/tuning.cc: Ring/LL latency model"
    return [
        Constant(group="Engine", name="CUDA context, libraries and workspaces a GPU", value=memory.RUNTIME_BYTES,
                 unit="bytes", source="engine-cases.md ('CUDA context and kernels take 1-2 GB'); EleutherAI's "
                 "1.2 x weights rule for the 8B serve plan"),
        Constant(group="Engine", name="all-reduce base latency", value=compute.ALL_REDUCE_BASE_SECONDS, unit="s",
                 source=nccl),
        Constant(group="Engine", name="all-reduce step latency over NVLink",
                 value=compute.ALL_REDUCE_NVLINK_STEP_SECONDS, unit="s", source=nccl),
        Constant(group="Engine", name="all-reduce step latency across the network",
                 value=compute.ALL_REDUCE_NETWORK_STEP_SECONDS, unit="s", source=nccl),
    ]  # fmt: skip


def _model_constants() -> list[Constant]:
    """Each catalog model's shape, as its config.json gives it."""
    rows = []
    for arch in CATALOG.values():
        src = SOURCES[arch.id]
        fields: list[tuple[str, float, Unit]] = [
            ("parameters", arch.parameters, "count"), ("layers", arch.layers, "count"),
            ("hidden size", arch.hidden, "count"), ("attention heads", arch.heads, "count"),
            ("KV heads", arch.n_kv_heads, "count"), ("head width", arch.n_head_dim, "count"),
            ("MLP width", arch.ffn, "count"), ("vocabulary", arch.vocab, "tokens"),
            ("context", arch.context, "tokens"),
        ]  # fmt: skip
        if arch.experts > 1:
            fields += [("experts a layer", arch.experts, "count"), ("experts a token", arch.experts_per_token, "count")]
        if arch.sliding_window is not None:
            fields.append(("sliding window", arch.sliding_window, "tokens"))
        rows += [Constant(group=arch.name, name=name, value=v, unit=u, source=src) for name, v, u in fields]
    return rows


def constants() -> list[Constant]:
    """Every constant, grouped: GPUs, dgx-1, links, the engine's assumptions, then the models."""
    return _gpu_constants() + _node_constants() + _engine_constants() + _model_constants()


class Numbers(BaseModel):
    """The page an infrastructure engineer checks our numbers on: anchors beside the engine, then constants."""

    anchors: list[AnchorRow] = Field(description="Published measurements beside the engine's figures")
    constants: list[Constant] = Field(description="Every hardware and model constant with its source")


def numbers() -> Numbers:
    """Anchors and constants together, for /numbers."""
    return Numbers(anchors=anchor_rows(), constants=constants())
