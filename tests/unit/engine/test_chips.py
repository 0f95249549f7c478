"""chips: dgx-1's CPUs against its GPUs, and the same prompt on each (engine-cases.md, hardware and case 10, 12)."""

from __future__ import annotations

import pytest

from app.engine.chips import chip_specs, prompt_timing

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
    assert s.cpu_bandwidth == pytest.approx(614e9, rel=0.01)  # 2 × 307 GB/s


def test_the_prefill_of_2048_tokens_takes_33_ms_on_one_h100_at_peak() -> None:
    t = prompt_timing("llama-3.1-8b", 2048, "avx512-fp32")
    assert t.flops == pytest.approx(2 * PARAMS_8B * 2048)
    assert t.gpu_seconds == pytest.approx(33.3e-3, rel=0.02)  # case 12 at 100 %
    assert t.node_seconds == pytest.approx(t.gpu_seconds / 8)


def test_against_avx512_the_gpu_is_tens_of_times_faster_against_amx_a_few() -> None:
    avx = prompt_timing("llama-3.1-8b", 2048, "avx512-fp32")
    amx = prompt_timing("llama-3.1-8b", 2048, "amx-bf16")
    assert avx.ratio == pytest.approx(989 / 14.336, rel=0.01) and avx.ratio > 10
    assert amx.ratio == pytest.approx(989 / 229.4, rel=0.01) and 1 < amx.ratio < 10
    assert avx.cpu_peak_name.startswith("AVX-512") and amx.cpu_peak_name.startswith("AMX")


def test_a_decode_step_reads_the_weights_at_each_chips_bandwidth() -> None:
    t = prompt_timing("llama-3.1-8b", 1, "amx-bf16")
    assert t.gpu_decode_seconds == pytest.approx(4.79e-3, rel=0.01)  # case 10
    assert t.cpu_decode_seconds == pytest.approx(16.06e9 / 614.4e9, rel=0.01)


def test_a_mixture_of_experts_prompt_costs_the_active_parameters_only() -> None:
    t = prompt_timing("mixtral-8x7b", 100, "amx-bf16")
    assert t.flops < 2 * 20e9 * 100  # 12.9 B active, not 46.7 B
