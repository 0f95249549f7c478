"""A CPU and a GPU side by side: cores against lanes, peaks, bandwidth, and the same prompt timed on each.

Every peak here is arithmetic (units × operations per cycle × clock, or the datasheet's dense figure):
a ceiling that real programs do not reach on either chip. A comparison names which CPU peak it uses.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from app.engine import compute, memory
from app.engine.hardware import DGX_H100, peak_flops
from app.engine.models import get_model

CpuPeak = Literal["avx512-fp32", "amx-bf16"]

# Hopper streaming multiprocessor: 128 FP32 CUDA cores and 4 fourth-generation tensor cores
# (NVIDIA H100 Tensor Core GPU Architecture whitepaper, 2022, "H100 SM architecture").
H100_FP32_LANES_PER_SM = 128
H100_TENSOR_CORES_PER_SM = 4
# Golden Cove core of the Xeon 8480C: two AVX-512 FMA ports, 16 FP32 lanes each (Intel 64 and IA-32
# Architectures Optimization Reference Manual, Golden Cove microarchitecture); one AMX tile unit.
XEON_FP32_LANES_PER_CORE = 32

CPU_PEAK_NAMES: dict[str, str] = {
    "avx512-fp32": "AVX-512 vector units in fp32",
    "amx-bf16": "AMX matrix units in bf16",
}


class ChipSpecs(BaseModel):
    """dgx-1's two CPUs against one of its GPUs, figure by figure."""

    model_config = ConfigDict(frozen=True)

    cpu_name: str = Field(description="Processor model, both sockets")
    cpu_cores: int = Field(description="Cores, both sockets")
    cpu_fp32_lanes: int = Field(description="FP32 lanes of the AVX-512 units, both sockets")
    cpu_clock_ghz: float = Field(description="Base clock the peaks use, GHz")
    cpu_peak_fp32_avx512: float = Field(description="Arithmetic FP32 peak with AVX-512 FMA, FLOP/s")
    cpu_peak_bf16_amx: float = Field(description="Arithmetic BF16 peak with AMX, FLOP/s")
    cpu_bandwidth: float = Field(description="Arithmetic DDR5 bandwidth, bytes/s")
    cpu_memory_bytes: int = Field(description="System memory, bytes")
    gpu_name: str = Field(description="GPU model")
    gpu_sms: int = Field(description="Streaming multiprocessors")
    gpu_fp32_lanes: int = Field(description="FP32 CUDA cores (lanes)")
    gpu_tensor_cores: int = Field(description="Tensor cores")
    gpu_peak_fp32: float = Field(description="FP32 peak without tensor cores, FLOP/s")
    gpu_peak_bf16: float = Field(description="Dense BF16 tensor-core peak, FLOP/s")
    gpu_bandwidth: float = Field(description="HBM bandwidth, bytes/s")
    gpu_memory_bytes: int = Field(description="HBM capacity, bytes")
    gpus_in_node: int = Field(description="GPUs in dgx-1")


def chip_specs() -> ChipSpecs:
    """The figures of dgx-1's CPUs and of one H100."""
    cpu, gpu = DGX_H100.cpu, DGX_H100.gpu
    return ChipSpecs(
        cpu_name=cpu.name,
        cpu_cores=cpu.cores,
        cpu_fp32_lanes=cpu.cores * XEON_FP32_LANES_PER_CORE,
        cpu_clock_ghz=cpu.base_ghz,
        cpu_peak_fp32_avx512=cpu.peak_flops_fp32_avx512,
        cpu_peak_bf16_amx=cpu.peak_flops_bf16_amx,
        cpu_bandwidth=cpu.memory_bandwidth,
        cpu_memory_bytes=DGX_H100.system_memory_bytes,
        gpu_name=gpu.name,
        gpu_sms=gpu.sms,
        gpu_fp32_lanes=gpu.sms * H100_FP32_LANES_PER_SM,
        gpu_tensor_cores=gpu.sms * H100_TENSOR_CORES_PER_SM,
        gpu_peak_fp32=gpu.peak_flops["fp32"],
        gpu_peak_bf16=gpu.peak_flops["bf16"],
        gpu_bandwidth=gpu.bandwidth,
        gpu_memory_bytes=gpu.memory_bytes,
        gpus_in_node=DGX_H100.gpus,
    )


def cpu_peak(which: CpuPeak) -> float:
    """The CPUs' arithmetic peak of the named kind, both sockets."""
    cpu = DGX_H100.cpu
    return cpu.peak_flops_fp32_avx512 if which == "avx512-fp32" else cpu.peak_flops_bf16_amx


class PromptTiming(BaseModel):
    """One prompt's prefill timed at each chip's peak, and one decode step at each chip's bandwidth."""

    model_config = ConfigDict(frozen=True)

    model: str = Field(description="Model name")
    tokens: int = Field(description="Prompt tokens")
    flops: float = Field(description="Prefill FLOPs: 2 × active parameters × tokens")
    cpu_peak: CpuPeak = Field(description="Which CPU peak is compared")
    cpu_peak_name: str = Field(description="That peak in words")
    cpu_peak_flops: float = Field(description="That peak, FLOP/s, both sockets")
    cpu_seconds: float = Field(description="FLOPs ÷ CPU peak")
    gpu_peak_flops: float = Field(description="One H100's dense bf16 peak, FLOP/s")
    gpu_seconds: float = Field(description="FLOPs ÷ one GPU's peak")
    node_seconds: float = Field(description="FLOPs ÷ eight GPUs' peak")
    ratio: float = Field(description="How many times sooner one GPU finishes than the CPUs")
    weight_bytes: int = Field(description="Bytes of bf16 weights one decode step reads")
    cpu_decode_seconds: float = Field(description="Weights ÷ CPU memory bandwidth")
    gpu_decode_seconds: float = Field(description="Weights ÷ one GPU's memory bandwidth")
    decode_ratio: float = Field(description="GPU bandwidth ÷ CPU bandwidth")


def prompt_timing(model: str, tokens: int, which: CpuPeak) -> PromptTiming:
    """The same prompt on dgx-1's CPUs (at the named peak) and on its GPUs (bf16 tensor peak)."""
    arch = get_model(model)
    flops = compute.inference_flops(arch.active_parameters, tokens)
    cpu_flops = cpu_peak(which)
    gpu = DGX_H100.gpu
    gpu_flops = peak_flops(gpu, "bf16")
    weights = memory.weight_bytes(arch, "bf16")
    return PromptTiming(
        model=arch.name,
        tokens=tokens,
        flops=flops,
        cpu_peak=which,
        cpu_peak_name=CPU_PEAK_NAMES[which],
        cpu_peak_flops=cpu_flops,
        cpu_seconds=flops / cpu_flops,
        gpu_peak_flops=gpu_flops,
        gpu_seconds=flops / gpu_flops,
        node_seconds=flops / (DGX_H100.gpus * gpu_flops),
        ratio=gpu_flops / cpu_flops,
        weight_bytes=weights,
        cpu_decode_seconds=weights / DGX_H100.cpu.memory_bandwidth,
        gpu_decode_seconds=weights / gpu.bandwidth,
        decode_ratio=gpu.bandwidth / DGX_H100.cpu.memory_bandwidth,
    )
