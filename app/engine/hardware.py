"""The hardware: H100, A100 and H200 GPUs, the links between them, the Xeon CPUs and the dgx-1 node."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from app.engine.errors import EngineError
from app.engine.units import GB, TB, TFLOPS, GiB, MiB, TiB

# Plans are checked against a named budget, not the card's size. The "80GB" on an H100's box is binary:
# 80 GiB of HBM3 (85.9 GB), of which nvidia-smi and CUDA report 81,559 MiB (85.5 GB), the rest reserved
# (NVIDIA H100 datasheet; nvidia-smi totals collected in modal-labs/modal-client PR #2797). We plan
# against 80 x 10^9 bytes: the lessons' decimal GB, and close to what serving engines leave themselves
# (vLLM's default gpu_memory_utilization of 0.9 x 85.5 GB = 77 GB). The headroom to 85.5 GB stands for
# the allocator's fragmentation and what the estimate leaves out.
H100_PLANNING_BUDGET = 80 * GB


class Link(BaseModel):
    """A data path between GPUs or nodes, with its bandwidth in one direction."""

    model_config = ConfigDict(frozen=True)

    id: str = Field(description="Short id: nvlink, pcie or network")
    name: str = Field(description="What the link is")
    bandwidth: float = Field(description="Bytes per second in one direction")
    source: str = Field(default="", description="Where the bandwidth comes from")


class GPU(BaseModel):
    """A data-centre GPU with the figures its datasheet gives; FLOP rates are dense (no 2:4 sparsity)."""

    model_config = ConfigDict(frozen=True)

    id: str = Field(description="Short id: h100, a100 or h200")
    name: str = Field(description="Product name")
    memory_bytes: int = Field(
        description="Planning budget in bytes: the box's figure read as decimal GB (80 x 10^9 for '80GB'); "
        "what plans are checked against, a little under what the card holds"
    )
    physical_memory_bytes: int = Field(description="HBM on the card in bytes (binary: '80GB' is 80 GiB)")
    cuda_memory_bytes: int = Field(description="Total memory nvidia-smi and CUDA report, in bytes")
    bandwidth: float = Field(description="Memory bandwidth in bytes per second")
    peak_flops: dict[str, float] = Field(
        description="Dense peak FLOP/s per precision (tensor cores where the precision has them)"
    )
    tdp_watts: float = Field(description="Thermal design power in watts")
    nvlink_bandwidth: float = Field(description="NVLink bandwidth in bytes per second, one direction")
    pcie_bandwidth: float = Field(description="PCIe x16 bandwidth in bytes per second, one direction")
    sms: int = Field(description="Streaming multiprocessors")
    source: str = Field(default="", description="Where these figures come from")
    l2_bytes: int = Field(description="L2 cache in bytes")
    matmul_efficiency: float = Field(
        description="Share of the dense peak the best large matrix multiplies reach (measured MAMF ÷ peak)"
    )
    attention_efficiency: float = Field(
        description="Share of the dense 16-bit peak FlashAttention-2 (what PyTorch's SDPA runs) reaches"
    )


def pcie_x16_bandwidth(gigatransfers: float) -> float:
    """Bytes per second one way of a PCIe x16 link with 128b/130b encoding (PCIe 3.0 and later)."""
    return gigatransfers * 1e9 * 16 * 128 / 130 / 8


# PCIe Gen5 x16: 32 GT/s x 16 lanes, 128b/130b encoding = 63.0 GB/s each way; NVIDIA's "128 GB/s"
# counts both directions (PCI-SIG PCIe 5.0 specification).
PCIE_GEN5_X16 = pcie_x16_bandwidth(32)
# PCIe Gen4 x16: 16 GT/s, the A100's host link (PCI-SIG PCIe 4.0 specification).
PCIE_GEN4_X16 = pcie_x16_bandwidth(16)

# What real kernels reach, as shares of the datasheet peaks; one rule for every GPU.
# Matrix multiplies: the Maximum Achievable Matmul FLOPS (MAMF) measured with bf16 inputs over many large
# shapes (stas00/ml-engineering, compute/accelerator/README.md, "Maximum Achievable Matmul FLOPS comparison
# table"): A100 SXM 267.9 of 312 TFLOPS (85.9 %), H100 SXM 792.1 of 989 (80.1 %). The same share is used for
# fp8 and int8 (the table has no fp8 row for the H100).
MAMF_A100 = 267.9 / 312
MAMF_H100 = 792.1 / 989
# Attention: FlashAttention-2, forward and backward. Shah et al. 2024 (FlashAttention-3, arXiv 2407.08608,
# abstract): FlashAttention-2 reaches "only 35 % utilization" of the H100; Dao 2023 (FlashAttention-2,
# arXiv 2307.08691): 50-73 % of the A100's peak, so 0.5 at the model sizes trained here.
FA2_H100 = 0.35
FA2_A100 = 0.50
# Memory: batch-1 decode reads the weights at 1,397 GB/s of the A100 80GB's 2,039 GB/s (pytorch-labs/
# gpt-fast README, Llama-2-7B bf16, 104.9 tokens/s, compiled with CUDA graphs): 68.5 % of the datasheet,
# what streaming GEMV kernels and their small neighbours sustain. The same share for every GPU.
HBM_ACHIEVED_SHARE = 1397.31 / 2039


# H100 SXM5 80GB, all figures from the NVIDIA H100 Tensor Core GPU datasheet (dense = half the
# "with sparsity" headline); bandwidth also in the jax-ml scaling-book GPU chapter; TDP 700 W also
# in the Llama 3.1 model card ("H100-80GB, TDP of 700W").
H100_SXM = GPU(
    id="h100",
    name="NVIDIA H100 SXM5 80GB",
    memory_bytes=H100_PLANNING_BUDGET,
    physical_memory_bytes=80 * GiB,  # 80 GiB HBM3 = 85.9 GB
    cuda_memory_bytes=81_559 * MiB,  # nvidia-smi "81559MiB" = 85.52 GB = 79.65 GiB
    bandwidth=3.35 * TB,
    peak_flops={
        "fp64": 34 * TFLOPS,
        "fp32": 67 * TFLOPS,
        "tf32": 495 * TFLOPS,
        "bf16": 989 * TFLOPS,
        "fp16": 989 * TFLOPS,
        "fp8": 1979 * TFLOPS,
        "int8": 1979 * TFLOPS,
    },
    tdp_watts=700,
    nvlink_bandwidth=450 * GB,  # NVLink 4: 18 links, 900 GB/s both ways (HGX H100 announcement)
    pcie_bandwidth=PCIE_GEN5_X16,
    sms=132,
    source="NVIDIA H100 Tensor Core GPU datasheet (dense = half the 'with sparsity' figures); bandwidth also "
    "in the jax-ml scaling-book GPU chapter; TDP also in the Llama 3.1 model card; NVLink: HGX H100 "
    "announcement; PCIe: PCI-SIG PCIe 5.0 signalling",
    l2_bytes=50 * 10**6,
    matmul_efficiency=MAMF_H100,
    attention_efficiency=FA2_H100,
)

# A100 SXM4 80GB, NVIDIA A100 Tensor Core GPU datasheet: 2,039 GB/s HBM2e; dense tensor peaks
# 156 TF32, 312 BF16/FP16, 624 INT8; 19.5 FP32; no FP8 tensor cores (so no "fp8" entry);
# NVLink 3 600 GB/s both ways; PCIe Gen4; 108 SMs; 40 MB L2; 400 W.
A100_80GB = GPU(
    id="a100",
    name="NVIDIA A100 SXM4 80GB",
    memory_bytes=80 * GB,  # planning budget, as for the H100
    physical_memory_bytes=80 * GiB,  # 80 GiB HBM2e = 85.9 GB
    cuda_memory_bytes=81_920 * MiB,  # nvidia-smi "81920MiB" (modal-labs/modal-client PR #2797)
    bandwidth=2.039 * TB,
    peak_flops={
        "fp64": 9.7 * TFLOPS,
        "fp32": 19.5 * TFLOPS,
        "tf32": 156 * TFLOPS,
        "bf16": 312 * TFLOPS,
        "fp16": 312 * TFLOPS,
        "int8": 624 * TFLOPS,
    },
    tdp_watts=400,
    nvlink_bandwidth=300 * GB,
    pcie_bandwidth=PCIE_GEN4_X16,
    sms=108,
    source="NVIDIA A100 Tensor Core GPU datasheet (dense figures); PCIe: PCI-SIG PCIe 4.0 signalling",
    l2_bytes=40 * 10**6,
    matmul_efficiency=MAMF_A100,
    attention_efficiency=FA2_A100,
)

# H200 SXM 141GB, NVIDIA H200 Tensor Core GPU datasheet: 141 GB HBM3e at 4.8 TB/s; the same Hopper
# compute as the H100 SXM (dense = half the sparse headline); NVLink 900 GB/s both ways; up to 700 W.
H200 = GPU(
    id="h200",
    name="NVIDIA H200 SXM 141GB",
    memory_bytes=141 * GB,  # planning budget: the box's 141 read as decimal GB
    # "141GB" reads as binary like the H100's "80GB"; nvidia-smi reports 143,771 MiB (150.8 GB, 140.4 GiB)
    # on H200 SXM nodes (published nvidia-smi listings).
    physical_memory_bytes=141 * GiB,
    cuda_memory_bytes=143_771 * MiB,
    bandwidth=4.8 * TB,
    peak_flops=dict(H100_SXM.peak_flops),
    tdp_watts=700,
    nvlink_bandwidth=450 * GB,
    pcie_bandwidth=PCIE_GEN5_X16,
    sms=132,
    source="NVIDIA H200 Tensor Core GPU datasheet; compute, SMs and L2 as the H100 SXM (same Hopper die)",
    l2_bytes=50 * 10**6,
    matmul_efficiency=MAMF_H100,  # stas00/ml-engineering lists H100 and H200 SXM together
    attention_efficiency=FA2_H100,
)

GPUS: dict[str, GPU] = {g.id: g for g in (H100_SXM, A100_80GB, H200)}

NVLINK_4 = Link(
    id="nvlink", name="NVLink 4 through NVSwitch", bandwidth=H100_SXM.nvlink_bandwidth,
    source="HGX H100 announcement: 18 links, 900 GB/s both ways",
)
# About 370 GB/s of the 450 is reached in practice (jax-ml scaling-book, GPU chapter).
NVLINK_4_ACHIEVED = 370 * GB
PCIE_GEN5 = Link(
    id="pcie", name="PCIe Gen5 x16", bandwidth=PCIE_GEN5_X16,
    source="PCI-SIG PCIe 5.0: 32 GT/s x 16 lanes, 128b/130b encoding, one way",
)
# ConnectX-7 InfiniBand NDR / Ethernet at 400 Gb/s = 50 GB/s each way (NVIDIA DGX BasePOD reference
# architecture: one 400 Gb/s port per GPU for compute traffic).
NETWORK_400G = Link(
    id="network", name="400 Gb/s ConnectX-7 network", bandwidth=400e9 / 8,
    source="NVIDIA DGX BasePOD reference architecture: one 400 Gb/s ConnectX-7 port a GPU",
)
LINKS: dict[str, Link] = {lk.id: lk for lk in (NVLINK_4, PCIE_GEN5, NETWORK_400G)}


class CPU(BaseModel):
    """The server's CPUs as a whole; the FLOP and bandwidth figures are arithmetic peaks, not measurements."""

    model_config = ConfigDict(frozen=True)

    name: str = Field(description="Processor model")
    sockets: int = Field(description="Processors in the server")
    cores: int = Field(description="Cores in the server, all sockets")
    base_ghz: float = Field(description="Base clock in GHz")
    boost_ghz: float = Field(description="Maximum turbo clock in GHz")
    source: str = Field(default="", description="Where these figures come from")
    peak_flops_fp32_avx512: float = Field(description="Arithmetic FP32 peak with AVX-512 FMA, all sockets")
    peak_flops_bf16_amx: float = Field(description="Arithmetic BF16 peak with AMX tiles, all sockets")
    memory_bandwidth: float = Field(description="Arithmetic DRAM bandwidth in bytes per second, all sockets")


# Two Intel Xeon Platinum 8480C (DGX BasePOD reference architecture): 56 cores each, 2.0 GHz base,
# 3.8 GHz boost. Peaks are arithmetic at the base clock, per Intel's per-core rates:
# AVX-512 FP32: 2 FMA units x 16 lanes x 2 FLOPs = 64 FLOPs/cycle/core -> 7.2 TFLOPS a socket;
# AMX BF16: 1,024 FLOPs/cycle/core -> 56 x 1,024 x 2.0 GHz = 115 TFLOPS a socket;
# DRAM: 8 channels a socket, 8 B a transfer. DDR5-4800 DIMMs run at 4,400 MT/s with two DIMMs a
# channel on Sapphire Rapids (Intel's memory population rules), as the DGX H100's 32 DIMMs are:
# 8 x 4,400 MT/s x 8 B = 282 GB/s a socket, 563 GB/s for two (one DIMM a channel would give 614).
_SOCKETS, _CORES_PER_SOCKET, _BASE_GHZ = 2, 56, 2.0
DDR5_TWO_DIMMS_PER_CHANNEL_MT_S = 4400e6
XEON_8480C_X2 = CPU(
    name="2 x Intel Xeon Platinum 8480C",
    sockets=_SOCKETS,
    cores=_SOCKETS * _CORES_PER_SOCKET,
    base_ghz=_BASE_GHZ,
    boost_ghz=3.8,
    source="DGX BasePOD reference architecture (2 x Xeon Platinum 8480C); peaks are arithmetic at the base "
    "clock from Intel's per-core rates (AVX-512: 64 FP32 FLOPs a cycle, AMX: 1,024 BF16), DRAM from "
    "channels x transfer rate x 8 B",
    peak_flops_fp32_avx512=_SOCKETS * _CORES_PER_SOCKET * 64 * _BASE_GHZ * 1e9,
    peak_flops_bf16_amx=_SOCKETS * _CORES_PER_SOCKET * 1024 * _BASE_GHZ * 1e9,
    memory_bandwidth=_SOCKETS * 8 * DDR5_TWO_DIMMS_PER_CHANNEL_MT_S * 8,
)


class Network(BaseModel):
    """The node's network ports for GPU-to-GPU traffic between nodes."""

    model_config = ConfigDict(frozen=True)

    links: int = Field(description="Ports for compute traffic, one per GPU")
    link: Link = Field(description="One port")
    storage_ports: int = Field(description="Extra ports (two dual-port cards) for storage traffic")


class Storage(BaseModel):
    """The node's NVMe drives."""

    model_config = ConfigDict(frozen=True)

    os_drives: int = Field(description="Drives for the operating system")
    os_drive_bytes: int = Field(description="Capacity of one OS drive in bytes")
    data_drives: int = Field(description="Drives for data and checkpoints")
    data_drive_bytes: int = Field(description="Capacity of one data drive in bytes")


class Node(BaseModel):
    """A server of several GPUs joined by NVSwitch: the DGX H100 that the lessons call dgx-1."""

    model_config = ConfigDict(frozen=True)

    id: str = Field(description="Node id")
    name: str = Field(description="Product name")
    gpus: int = Field(description="GPUs in the node")
    gpu: GPU = Field(description="The GPU model")
    nvswitch_chips: int = Field(description="NVSwitch chips joining the GPUs any-to-any")
    cpu: CPU = Field(description="The CPUs, all sockets")
    system_memory_bytes: int = Field(description="CPU memory (DDR5) in bytes: 2 TiB on a DGX H100")
    network: Network = Field(description="Ports to other nodes")
    nvme: Storage = Field(description="Local NVMe storage")
    source: str = Field(default="", description="Where these figures come from")
    max_power_watts: float = Field(description="Maximum power draw of the whole node in watts")


# DGX H100: NVIDIA DGX BasePOD reference architecture (8 GPUs, 4 NVSwitch chips, 2 TB DDR5 -- binary:
# 32 x 64 GiB DIMMs = 2 TiB, 2.2 x 10^12 bytes --,
# 8 x ConnectX-7 400 Gb/s + 2 dual-port ConnectX-7 for storage, 2 x 1.92 TB + 8 x 3.84 TB NVMe);
# 10.2 kW maximum from the DGX H100 user guide.
DGX_H100 = Node(
    id="dgx-1",
    name="NVIDIA DGX H100",
    gpus=8,
    gpu=H100_SXM,
    nvswitch_chips=4,
    cpu=XEON_8480C_X2,
    system_memory_bytes=2 * TiB,
    network=Network(links=8, link=NETWORK_400G, storage_ports=4),
    nvme=Storage(os_drives=2, os_drive_bytes=1_920 * GB, data_drives=8, data_drive_bytes=3_840 * GB),
    source="NVIDIA DGX BasePOD reference architecture; maximum power from the DGX H100 user guide",
    max_power_watts=10_200,
)


def achieved_bandwidth(gpu: GPU) -> float:
    """Bytes a second real decode kernels read from HBM: the datasheet bandwidth × HBM_ACHIEVED_SHARE."""
    return gpu.bandwidth * HBM_ACHIEVED_SHARE


def get_gpu(gpu_id: str) -> GPU:
    """The GPU with this id (h100, a100 or h200)."""
    try:
        return GPUS[gpu_id]
    except KeyError:
        raise EngineError(f"Unknown GPU '{gpu_id}'. Known GPUs: {', '.join(GPUS)}.") from None


def get_link(link_id: str) -> Link:
    """The link with this id (nvlink, pcie or network)."""
    try:
        return LINKS[link_id]
    except KeyError:
        raise EngineError(f"Unknown link '{link_id}'. Known links: {', '.join(LINKS)}.") from None


def node() -> Node:
    """dgx-1, the simulated DGX H100."""
    return DGX_H100


def compute_precision(gpu: GPU, precision: str) -> str:
    """The precision whose tensor-core rate a matrix multiply on weights of `precision` runs at.

    fp32 weights run as TF32 on tensor cores (as training scripts enable); int4 weights are
    dequantized to 16 bits before the multiply (W4A16, as GPTQ and AWQ kernels do: Hopper has no
    INT4 tensor cores); fp8 on a GPU without FP8 tensor cores (A100) runs at the 16-bit rate.
    """
    mapped = {"fp32": "tf32", "int4": "fp16"}.get(precision, precision)
    return mapped if mapped in gpu.peak_flops else "fp16"


def peak_flops(gpu: GPU, precision: str) -> float:
    """Dense FLOP/s of a matrix multiply on weights stored at `precision`."""
    return gpu.peak_flops[compute_precision(gpu, precision)]
