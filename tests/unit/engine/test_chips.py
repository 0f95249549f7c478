"""chips: dgx-1's CPUs against its GPUs, and the same prompt on each (engine-cases.md, hardware and case 10, 12)."""

from __future__ import annotations

import pytest

from app.engine.chips import chip_specs, workload_timing
from app.engine.errors import EngineError

PARAMS_8B = 8_030_261_248  # Llama 3.1 8B, config.json


def test_a_gpu_has_thousands_of_lanes_where_the_cpus_have_a_hundred_cores() -> None:
    s = chip_specs()
    assert s.cpu_cores == 112 and s.gpu_sms == 132  # 2 × 56-core Xeon 8480C; H100 SXM5
    assert s.gpu_fp32_lanes == 132 * 128 == 16_896  # Hopper whitepaper: 128 FP32 cores an SM
    assert s.cpu_fp32_lanes == 112 * 32


def test_cpu_peaks_are_the_arithmetic_of_the_reference() -> None:
    s = chip_specs()
    assert s.cpu_peak_fp32_avx512 == pytest.approx(2 * 7.2e12, rel=0.01)  # ≈ 7.2 TFLOPS a socket
    assert s.cpu_peak_bf16_amx == pytest.approx(2 * 115e12, rel=0.01)  # ≈ 115 TFLOPS a socket
    # 2 sockets × 8 channels × 4,400 MT/s (two DIMMs a channel) × 8 B = 563 GB/s, not DDR5-4800's 614.
    assert s.cpu_bandwidth == pytest.approx(563.2e9, rel=0.01)


def test_the_prefill_of_2048_tokens_takes_34_ms_on_one_h100_at_peak() -> None:
    t = workload_timing("llama-3.1-8b", "prefill", 2048, 1, "avx512-fp32")
    # the same formula two ways: float rounding only
    assert t.weight_flops == pytest.approx(2 * PARAMS_8B * 2048, rel=1e-9) and t.weight_reads == 1
    # Causal attention: 2 · 32 layers · 4,096 query width · 2,048² = 1.10 × 10¹² FLOPs, 3.3 % more than
    # 2·N·T; case 12's 33.3 ms counts 2·N·T alone, so the prefill lands at 34.4 ms (tolerance 0.5 %).
    assert t.attention_flops == pytest.approx(2 * 32 * 4096 * 2048**2, rel=1e-9)
    assert t.flops == pytest.approx(t.weight_flops + t.attention_flops, rel=1e-12)
    assert t.gpu.seconds == pytest.approx(33.3e-3 * 1.0334, rel=0.005)
    # the same formula two ways: float rounding only
    assert t.node.seconds == pytest.approx(t.gpu.seconds / 8, rel=1e-9)
    assert t.cpu.binds == t.gpu.binds == t.node.binds == "compute"  # a prefill is maths-bound on every side


def test_against_avx512_the_gpu_is_tens_of_times_faster_against_amx_a_few() -> None:
    avx = workload_timing("llama-3.1-8b", "prefill", 2048, 1, "avx512-fp32")
    amx = workload_timing("llama-3.1-8b", "prefill", 2048, 1, "amx-bf16")
    assert avx.ratio == pytest.approx(989 / 14.336, rel=0.01) and avx.ratio > 10  # the datasheet peaks are rounded
    assert amx.ratio == pytest.approx(989 / 229.4, rel=0.01) and 1 < amx.ratio < 10  # the datasheet peaks are rounded
    assert avx.cpu_peak_name.startswith("AVX-512") and amx.cpu_peak_name.startswith("AMX")


def test_one_read_of_the_weights_takes_each_chips_bandwidth_time() -> None:
    """A decode pass reads the 16.06 GB less the other tokens' embedding rows: 15.01 GB, so 4.48 ms at 3.35 TB/s
    (case 10's 4.79 ms reads the whole table). One figure per read, the same the work's memory time uses."""
    t = workload_timing("llama-3.1-8b", "decode", 1, 1, "amx-bf16")
    assert t.read_bytes == pytest.approx(15.01e9, rel=0.001)
    assert t.gpu_read_seconds == pytest.approx(15.01e9 / 3.35e12, rel=0.01) == t.gpu.memory_seconds
    assert t.cpu_read_seconds == pytest.approx(15.01e9 / 563.2e9, rel=0.01) == t.cpu.memory_seconds


def test_a_mixture_of_experts_prompt_costs_the_active_parameters_only() -> None:
    t = workload_timing("mixtral-8x7b", "prefill", 100, 1, "amx-bf16")
    assert t.flops < 2 * 20e9 * 100  # 12.9 B active, not 46.7 B


def test_a_training_step_costs_three_times_the_prefill_of_the_same_tokens() -> None:
    step = workload_timing("llama-3.1-8b", "train-step", 2048, 8, "amx-bf16")
    prefill = workload_timing("llama-3.1-8b", "prefill", 2048, 8, "amx-bf16")
    # the same formula two ways: float rounding only
    assert step.flops == pytest.approx(6 * PARAMS_8B * 8 * 2048, rel=1e-9) == 3 * prefill.weight_flops
    assert prefill.attention_flops > 0 and step.attention_flops == 0  # the 6·N·D figure, attention aside
    assert step.weight_reads == 3 and step.flops_per_parameter == 6
    # maths-bound at the bf16 peak; the same formula two ways: float rounding only
    assert step.gpu.seconds == pytest.approx(step.flops / 989e12, rel=1e-9)


def test_single_sequence_decode_is_paced_by_memory_so_the_gpu_leads_by_the_bandwidth_ratio() -> None:
    t = workload_timing("llama-3.1-8b", "decode", 256, 1, "avx512-fp32")
    # the same formula two ways: float rounding only
    assert t.flops == pytest.approx(2 * PARAMS_8B * 256, rel=1e-9) and t.weight_reads == 256
    assert t.gpu.binds == t.cpu.binds == "memory-bandwidth"
    # 256 reads of 15.01 GB at 3.35 TB/s: the weights less the embedding rows a token does not look up.
    assert t.gpu.seconds == pytest.approx(256 * 15.01e9 / 3.35e12, rel=0.01)
    assert t.ratio == pytest.approx(3.35e12 / 563.2e9, rel=0.01)  # the bandwidth gap, not the FLOPS gap


def test_batching_decode_lets_the_gpu_pull_ahead_of_the_cpus_again() -> None:
    one = workload_timing("llama-3.1-8b", "decode", 256, 1, "avx512-fp32")
    many = workload_timing("llama-3.1-8b", "decode", 256, 256, "avx512-fp32")
    assert many.cpu.binds == "compute" and one.ratio < 6 < 50 < many.ratio
    assert many.gpu.seconds < 2 * one.gpu.seconds  # 256 sequences for about the price of one


def test_a_workload_with_no_tokens_is_refused() -> None:
    with pytest.raises(EngineError):
        workload_timing("llama-3.1-8b", "prefill", 0, 1, "amx-bf16")
