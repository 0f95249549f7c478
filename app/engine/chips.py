"""A CPU and a GPU side by side: cores against lanes, peaks, bandwidth, and the same prompt timed on each.

Every peak here is arithmetic (units × operations per cycle × clock, or the datasheet's dense figure):
a ceiling that real programs do not reach on either chip. A comparison names which CPU peak it uses.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from app.engine import compute, memory
from app.engine.errors import EngineError
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


Workload = Literal["prefill", "train-step", "decode"]


class WorkloadTiming(BaseModel):
    """The same work on dgx-1's CPUs, one H100 and all eight: FLOPs ÷ peak, floored by the weight reads.

    Each side takes the longer of its compute time (FLOPs ÷ its peak) and its memory time (the bf16
    weights it must read ÷ its memory bandwidth), as the roofline says. The memory time counts the
    weights only, so it is a floor; the eight GPUs split the work evenly and their traffic is ignored.
    """

    model_config = ConfigDict(frozen=True)

    model: str = Field(description="Model name")
    workload: Workload = Field(description="prefill, train-step or decode")
    tokens: int = Field(description="Tokens a sequence: the prompt, the training sequence or the tokens generated")
    batch: int = Field(description="Sequences processed together")
    parameters: int = Field(description="Active parameters N: the ones each token uses")
    total_tokens: int = Field(description="batch × tokens: every token the work processes or generates")
    flops_per_parameter: int = Field(description="FLOPs a parameter a token: 2 to infer, 6 to train")
    weight_flops: float = Field(description="flops_per_parameter × active parameters × batch × tokens")
    attention_flops: float = Field(
        description="A prefill's causal QK^T and AV matmuls over its prompt (0 for the other workloads)"
    )
    flops: float = Field(description="weight_flops + attention_flops: all the work")
    weight_bytes: int = Field(description="The model's bf16 weights, bytes")
    read_bytes: float = Field(
        description="Bytes one pass reads: the weights less the embedding rows of tokens it does not see"
    )
    weight_reads: int = Field(description="Weight reads: 1 a prefill, 3 a training step, 1 each decode step")
    cpu_peak: CpuPeak = Field(description="Which CPU peak is compared")
    cpu_peak_name: str = Field(description="That peak in words")
    cpu_peak_flops: float = Field(description="That peak, FLOP/s, both sockets")
    gpu_peak_flops: float = Field(description="One H100's dense bf16 peak, FLOP/s")
    node_gpus: int = Field(description="GPUs in dgx-1")
    cpu: compute.Bound = Field(description="The CPUs: compute and memory time, the larger binds")
    gpu: compute.Bound = Field(description="One H100")
    node: compute.Bound = Field(description="dgx-1's GPUs, the work split evenly")
    ratio: float = Field(description="How many times sooner one H100 finishes than the CPUs")
    cpu_read_seconds: float = Field(description="One pass's read of the weights (read_bytes) from the CPUs' memory")
    gpu_read_seconds: float = Field(description="The same read from one H100's memory, at its datasheet bandwidth")
    bandwidth_ratio: float = Field(description="One H100's memory bandwidth ÷ the CPUs'")


def workload_timing(
    model: str, workload: Workload = "prefill", tokens: int = 2048, batch: int = 1, which: CpuPeak = "avx512-fp32"
) -> WorkloadTiming:
    """A prompt's prefill, one training step or `tokens` decode steps of `batch` sequences, timed on each side."""
    if tokens < 1 or batch < 1:
        raise EngineError("A workload needs at least one token and one sequence.")
    arch = get_model(model)
    n, seen = arch.active_parameters, batch * tokens
    train = workload == "train-step"
    weight_flops = compute.training_flops(n, seen) if train else compute.inference_flops(n, seen)
    attention = compute.attention_flops(arch, tokens, batch) if workload == "prefill" else 0.0
    flops = weight_flops + attention
    reads = tokens if workload == "decode" else compute.TRAIN_STEP_WEIGHT_READS if train else 1
    weights = memory.weight_bytes(arch, "bf16")
    per_read = compute.weight_share_read(arch, batch if workload == "decode" else seen)
    nbytes = reads * weights * per_read
    cpu, gpu, gpus = DGX_H100.cpu, DGX_H100.gpu, DGX_H100.gpus
    cpu_flops, gpu_flops = cpu_peak(which), peak_flops(gpu, "bf16")
    on_cpu = compute.bound(flops / cpu_flops, nbytes / cpu.memory_bandwidth)
    on_gpu = compute.bound(flops / gpu_flops, nbytes / gpu.bandwidth)
    return WorkloadTiming(
        model=arch.name, workload=workload, tokens=tokens, batch=batch, parameters=n, total_tokens=seen,
        flops_per_parameter=round(weight_flops / (n * seen)),
        weight_flops=weight_flops, attention_flops=attention, flops=flops,
        weight_bytes=weights, read_bytes=weights * per_read, weight_reads=reads, cpu_peak=which,
        cpu_peak_name=CPU_PEAK_NAMES[which], cpu_peak_flops=cpu_flops,
        gpu_peak_flops=gpu_flops, node_gpus=gpus, cpu=on_cpu, gpu=on_gpu,
        node=compute.bound(on_gpu.compute_seconds / gpus, on_gpu.memory_seconds / gpus),
        ratio=on_cpu.seconds / on_gpu.seconds, cpu_read_seconds=weights * per_read / cpu.memory_bandwidth,
        gpu_read_seconds=weights * per_read / gpu.bandwidth, bandwidth_ratio=gpu.bandwidth / cpu.memory_bandwidth,
    )
