"""Every hardware and model constant the engine uses, with its source, read from the engine's own records."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from app.engine import collectives, compute, cost, memory, power, training_speed
from app.engine.anchors import AnchorRow, anchor_rows
from app.engine.hardware import DGX_H100, GPUS, HBM_ACHIEVED_SHARE, LINKS, NVLINK_4_ACHIEVED
from app.engine.models import CATALOG, SOURCES
from app.engine.power import POWER_SOURCE, idle_watts

Unit = Literal[
    "bytes", "bytes/s", "FLOP/s", "W", "count", "GHz", "s", "tokens", "share", "USD", "USD/kWh",
    "bytes a token, layer and unit of width",
]


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
            Constant(group=gpu.name, name="idle power with a model's weights loaded", value=idle_watts(gpu, True),
                     unit="W", source=POWER_SOURCE + "; A100 and H200: the H100's step from loading, assumed"),
            Constant(group=gpu.name, name="matrix multiplies reach (MAMF share of peak)",
                     value=gpu.matmul_efficiency, unit="share",
                     source="stas00/ml-engineering, compute/accelerator/README.md, Maximum Achievable Matmul FLOPS "
                     "table (A100 SXM 267.9 of 312, H100 SXM 792.1 of 989; H200 as H100)"),
            Constant(group=gpu.name, name="attention reaches (FlashAttention-2, share of peak)",
                     value=gpu.attention_efficiency, unit="share",
                     source="FlashAttention-3 paper (arXiv 2407.08608): FA2 reaches 35 % of the H100; FlashAttention-2 "
                     "paper (arXiv 2307.08691): 50-73 % of the A100"),
            Constant(group=gpu.name, name="memory bandwidth decode kernels reach",
                     value=gpu.bandwidth * HBM_ACHIEVED_SHARE, unit="bytes/s",
                     source="the datasheet bandwidth × 68.5 %: gpt-fast's batch-1 decode of Llama-2-7B read"
                     "1,397 of the A100's 2,039 GB/s (pytorch-labs/gpt-fast README); the same share for every GPU"),
            Constant(group=gpu.name, name="NVLink, one way", value=gpu.nvlink_bandwidth, unit="bytes/s",
                     source=gpu.source),
            Constant(group=gpu.name, name="PCIe x16, one way", value=gpu.pcie_bandwidth, unit="bytes/s",
                     source=gpu.source),
            Constant(group=gpu.name, name="streaming multiprocessors", value=gpu.sms, unit="count", source=gpu.source),
            Constant(group=gpu.name, name="L2 cache", value=gpu.l2_bytes, unit="bytes", source=gpu.source),
        ]
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
    ]
    rows += [Constant(group="Links", name=lk.name, value=lk.bandwidth, unit="bytes/s", source=lk.source)
             for lk in LINKS.values()]
    rows.append(Constant(group="Links", name="NVLink 4 bus bandwidth every collective reaches",
                         value=NVLINK_4_ACHIEVED, unit="bytes/s",
                         source="jax-ml scaling-book, GPU chapter"))
    rows.append(Constant(group="Links", name="rails' bus bandwidth across nodes (used beyond 8 GPUs)",
                         value=collectives.bus_bandwidth(16), unit="bytes/s",
                         source="8 × 50 GB/s at NVLink's achieved share of its line rate (an assumption)"))
    return rows


def _engine_constants() -> list[Constant]:
    """The engine's own assumptions that are not hardware."""
    nccl = "NVIDIA/nccl src/graph/tuning.cc: Ring latencies by protocol"
    rows = [
        Constant(group="Engine", name="CUDA context, libraries and workspaces a GPU", value=memory.RUNTIME_BYTES,
                 unit="bytes", source="engine-cases.md ('CUDA context and kernels take 1-2 GB'); EleutherAI's "
                 "1.2 x weights rule for the 8B serve plan"),
        Constant(group="Engine", name="fixed cost of a serving forward pass (scheduling, launches, sampling)",
                 value=compute.STEP_OVERHEAD_SECONDS, unit="s",
                 source="NVIDIA NeMo Framework performance summary, Llama 2 7B at batch 1, 128 + 20 tokens, "
                 "TensorRT-LLM: 153.8 ms on H100 and 234.0 ms on A100, less the weight reads, over 21 passes"),
        Constant(group="Engine", name="tokens a serving step carries (chunked prefill budget)",
                 value=compute.STEP_TOKEN_BUDGET, unit="tokens",
                 source="vLLM max_num_batched_tokens and TensorRT-LLM max_num_tokens defaults (8,192)"),
        Constant(group="Engine", name="training: non-matmul work as HBM traffic",
                 value=training_speed.NON_MATMUL_BYTES, unit="bytes a token, layer and unit of width",
                 source="fitted once to torchtitan's Llama 3.1 8B on 8 H100 (FSDP, selective, compile: 6,667 "
                 "tokens/s a GPU); every other training anchor checks it"),
        Constant(group="Engine", name="server's non-GPU power (CPUs, memory, NVSwitch, NICs, fans)",
                 value=power.NON_GPU_WATTS, unit="W",
                 source="Latif et al. 2025 (IEEE Access 13): 8.4 kW peak on an 8-GPU H100 HGX node training, less "
                 "8 × 700 W; kept the same at every load (no idle split published)"),
        Constant(group="Engine", name="price of electricity (every widget's default)",
                 value=cost.ELECTRICITY_USD_PER_KWH, unit="USD/kWh",
                 source="US commercial average 2023, EIA Electric Power Monthly (illustrative)"),
        Constant(group="Engine", name="price of one dgx-1 (every widget's default)", value=cost.DGX_PRICE_USD,
                 unit="USD", source="SemiAnalysis' estimate of a DGX H100's price (May 2023), via Epoch AI "
                 "(illustrative)"),
    ]
    for p in collectives.PROTOCOLS:
        rows += [
            Constant(group="Engine", name=f"collective base latency, {p.name}", value=p.base_seconds, unit="s",
                     source=nccl),
            Constant(group="Engine", name=f"collective step latency over NVLink, {p.name}",
                     value=p.nvlink_step_seconds, unit="s", source=nccl),
            Constant(group="Engine", name=f"collective step latency across the network, {p.name}",
                     value=p.network_step_seconds, unit="s", source=nccl),
        ]
    return rows


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
        ]
        if arch.experts > 1:
            fields += [("experts a layer", arch.experts, "count"), ("experts a token", arch.experts_per_token, "count")]
        if arch.sliding_window is not None:
            fields.append(("sliding window", arch.sliding_window, "tokens"))
        rows += [Constant(group=arch.name, name=name, value=v, unit=u, source=src) for name, v, u in fields]
    return rows


def constants() -> list[Constant]:
    """Every constant, grouped: GPUs, dgx-1, links, the engine's assumptions, then the models."""
    return _gpu_constants() + _node_constants() + _engine_constants() + _model_constants()


class Departure(BaseModel):
    """A reference case (shared/reference/engine-cases.md) the engine no longer reproduces as its plan figure,
    because a published measurement says otherwise: what the case says, what the engine says now, and why."""

    model_config = ConfigDict(frozen=True)

    case: str = Field(description="The reference case")
    case_says: str = Field(description="Its figure")
    engine_says: str = Field(description="The engine's plan figure now, and where the case's figure still is")
    because: str = Field(description="The measurement that moved it")


DEPARTURES: tuple[Departure, ...] = (
    Departure(case="10 and 11: decode of Llama 3.1 8B on one H100", case_says="208.6 tokens/s (4.79 ms a token)",
              engine_says="the ceiling still (decode widget, roofline); a plan decodes at 68.5 % of the bandwidth "
              "plus 1.6 ms a pass, about 120 tokens/s",
              because="gpt-fast's batch-1 decode reads at 68.5 % of the A100's datasheet bandwidth; NeMo's batch-1 "
              "latencies leave 1.6 ms a forward pass (issue 25 items 1 and 3)"),
    Departure(case="12: prefill of 2,048 tokens at 100 % / 50 % of peak", case_says="33.3 / 66.5 ms",
              engine_says="the same maths, plus 1.6 ms a forward pass; without an mfu the plan uses the GPU's MAMF "
              "share (80.1 % on an H100)",
              because="NeMo's short-prompt latencies (item 1) and the MAMF table (item 3)"),
    Departure(case="14 and 15: training time from 6·N·D", case_says="66 days; 7.2 × 10^23 FLOPs and 7.2 years",
              engine_says="6·N·D plus causal attention: 69 days for the 405B, 8.2 × 10^23 FLOPs for the 8B at "
              "8,192 tokens; training_flops() still gives 6·N·D",
              because="attention is counted the same way in training as in prefill (item 7); Llama 3's and "
              "torchtitan's MFU count it"),
    Departure(case="16: all-reduce of Llama 3.1 8B's bf16 gradients over 8 GPUs by NVLink",
              case_says="62.5 ms (2 × 7/8 × 16.06 GB ÷ 450 GB/s)",
              engine_says="76.0 ms: NCCL's latency plus the bytes on the bus at the 370 GB/s a ring reaches, in "
              "the plan, step 18 and the interconnect slide; all_reduce_seconds at the line rate still gives 62.5",
              because="NCCL tests reach about 370 GB/s of bus bandwidth over NVLink 4 for large messages "
              "(NVIDIA/nccl-tests issue 212; scaling book), not the 450 GB/s line rate (issue 25 items 5 and 9)"),
    Departure(case="18: dgx-1 for 24 h", case_says="244.8 kWh at 10.2 kW",
              engine_says="the rating's upper bound still; busy, the power rule draws 8.4 kW (201.6 kWh a day)",
              because="an 8-GPU H100 node training measured 8.4 kW at most (Latif et al. 2025; item 8)"),
    Departure(case="MLPerf Llama 2 70B prompt length", case_says="1,024 tokens (the task's cap)",
              engine_says="300 tokens, an assumption",
              because="at 1,024 tokens the published 21,806 tokens/s would need 86 % of the fp8 peak in matrix "
              "multiplies alone"),
)


class Numbers(BaseModel):
    """The page an infrastructure engineer checks our numbers on: anchors beside the engine, then constants."""

    anchors: list[AnchorRow] = Field(description="Published measurements beside the engine's figures")
    constants: list[Constant] = Field(description="Every hardware and model constant with its source")
    departures: list[Departure] = Field(description="Reference cases a measurement overrode, and why")


def numbers() -> Numbers:
    """Anchors, constants and the reference cases measurements overrode, for /numbers."""
    return Numbers(anchors=anchor_rows(), constants=constants(), departures=list(DEPARTURES))
