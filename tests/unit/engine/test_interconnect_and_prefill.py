"""Collectives over eight rails with a latency term, causal prefill FLOPs, sliding windows, decode bytes."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from app.engine import collectives, compute
from app.engine.hardware import HBM_ACHIEVED_SHARE
from app.engine.memory import kv_cache_bytes
from app.engine.models import get_model
from app.engine.plan import PlanRequest, make_plan

LLAMA_8B = get_model("llama-3.1-8b")
LLAMA_70B = get_model("llama-3.1-70b")
MISTRAL = get_model("mistral-7b")


def test_a_collective_beyond_one_node_spreads_over_its_eight_rails() -> None:
    """8 ConnectX-7 ports × 50 GB/s = 400 GB/s a node (NCCL runs a ring a NIC), not one port's 50 GB/s; the bus
    reaches NVLink's achieved share of that line rate (370 of 450), as it does inside the node."""
    assert compute.node_network_bandwidth() == pytest.approx(400e9, rel=1e-9)
    assert compute.collective_bandwidth(16) == pytest.approx(400e9 * 370 / 450, rel=1e-9)
    assert compute.collective_bandwidth(8) == pytest.approx(370e9, rel=1e-9)  # NVLink's achieved bus bandwidth
    one_gb = 1e9
    call = collectives.collective("all-reduce", one_gb, 16)
    assert call.protocol == "Simple"  # a large message takes the protocol with the whole bus
    assert call.transfer_seconds == pytest.approx(2 * 15 / 16 * one_gb / (400e9 * 370 / 450), rel=1e-9)  # 5.7 ms
    assert call.transfer_seconds < compute.all_reduce(one_gb, 16, "network") / 6  # not one port's 37.5 ms


def test_every_all_reduce_pays_nccls_latency_about_15_us_over_dgx_1() -> None:
    """NCCL's ring/LL model: 6.6 µs + 14 steps × 0.6 µs over NVLink = 15.0 µs (exact arithmetic)."""
    assert compute.all_reduce_latency(1) == 0.0
    assert compute.all_reduce_latency(8) == pytest.approx(15.0e-6, rel=1e-9)
    assert compute.all_reduce_latency(2) == pytest.approx(7.8e-6, rel=1e-9)
    # Two nodes: 30 steps, 4 of them across the network at 2.7 µs.
    assert compute.all_reduce_latency(16) == pytest.approx(6.6e-6 + 26 * 0.6e-6 + 4 * 2.7e-6, rel=1e-9)


def test_160_tensor_parallel_all_reduces_a_token_cost_milliseconds_not_microseconds() -> None:
    """Llama 3.1 70B over 8 GPUs: 80 layers × 2 calls × (15 µs + 16 kB ÷ 450 GB/s) ≈ 2.4 ms a token.

    Without the latency term the same 160 calls cost about 10 µs. Tolerance 1 %: the bandwidth term's share.
    """
    tp = compute.tensor_parallel_seconds(LLAMA_70B, 1, 8, "bf16")
    # NCCL's latency is a measured, rounded figure; LL carries 16 kB on half the bus: 2 % for the bytes
    assert tp == pytest.approx(160 * 15.0e-6, rel=0.02)
    bandwidth_only = 160 * compute.all_reduce_seconds(8192 * 2, 8, 450e9)
    assert bandwidth_only < 11e-6 < tp / 200
    plan = make_plan(PlanRequest(model="llama-3.1-70b", gpus=8))
    assert plan.serve is not None
    assert any("160 calls" in line for line in plan.explanation)


def test_a_128k_token_prefill_of_the_8b_does_2_1_times_more_attention_work_than_2nt() -> None:
    """Causal QK^T and AV: 4 × 32 layers × 4,096 × 131,072²/2 = 4.5 × 10¹⁵ FLOPs against 2·N·T = 2.1 × 10¹⁵:
    L·T·d ÷ N = 2.14 times the 2·N·T figure (3.14 × in all). Tolerance 1 %: N rounded to 8.03 B."""
    t = 131_072
    dense = compute.inference_flops(LLAMA_8B.parameters, t)
    attention = compute.attention_flops(LLAMA_8B, t)
    assert attention == pytest.approx(2 * 32 * 4096 * t * t, rel=1e-12)  # float rounding only
    assert attention / dense == pytest.approx(2.14, rel=0.01)  # the ratio to three digits
    assert (attention + dense) / dense == pytest.approx(3.14, rel=0.01)  # the ratio to three digits


def test_the_plans_prefill_counts_the_attention_flops() -> None:
    """A 32,768-token prompt of the 8B at 100 % of 989 TFLOPS: (2·N·T + 2·L·d·T²) ÷ peak. Tolerance 0.5 %.
    It runs as four chunks of 8,192 tokens (the step budget), each paying a forward pass's fixed cost."""
    plan = make_plan(PlanRequest(model="llama-3.1-8b", prompt_tokens=32_768, context_tokens=33_000, mfu=1.0))
    assert plan.serve is not None
    flops = 2 * LLAMA_8B.parameters * 32_768 + 2 * 32 * 4096 * 32_768**2
    pre = plan.serve.prefill
    assert pre.compute_seconds == pytest.approx(flops / 989e12, rel=0.005)  # the docstring's 0.5 %
    assert pre.overhead_seconds == pytest.approx(4 * compute.STEP_OVERHEAD_SECONDS, rel=1e-9)
    assert plan.serve.prefill_seconds == pytest.approx(flops / 989e12 + pre.overhead_seconds, rel=0.005)


def test_mistral_7b_keeps_4096_tokens_of_kv_cache_however_long_the_context() -> None:
    """config.json sliding_window 4,096: 131,072 B a token × 4,096 = 0.54 GB at 4k, 8k and 32k. Exact."""
    at = {n: kv_cache_bytes(MISTRAL, "bf16", n) for n in (1024, 4096, 8192, 32_768)}
    assert at[1024] == 131_072 * 1024
    assert at[4096] == at[8192] == at[32_768] == 131_072 * 4096
    assert kv_cache_bytes(LLAMA_8B, "bf16", 32_768) == 131_072 * 32_768  # Llama has no window
    assert MISTRAL.sliding_window == 4096 and LLAMA_8B.sliding_window is None


def test_a_sliding_window_also_caps_the_attention_work_of_a_long_prompt() -> None:
    """Past the window each token scores 4,096 keys: pairs = 4,096²/2 + (T − 4,096) × 4,096. Exact."""
    assert compute.attended_pairs(8192, 4096) == 4096**2 / 2 + 4096 * 4096
    assert compute.attended_pairs(2048, 4096) == 2048**2 / 2
    assert compute.attention_flops(MISTRAL, 32_768) < compute.attention_flops(LLAMA_8B, 32_768) / 4


def test_decode_reads_one_embedding_row_a_token_and_the_whole_lm_head() -> None:
    """8B bf16: 16.06 GB less 128,255 unused rows × 4,096 × 2 B = 15.01 GB a step for one sequence;
    GPT-3 ties its head to the table, so it reads all of it. Tolerance 1e-9: exact counts."""
    share = compute.weight_share_read(LLAMA_8B, 1)
    unused = (128_256 - 1) * 4096
    assert share == pytest.approx(1 - unused / LLAMA_8B.parameters, rel=1e-9)  # float rounding only
    assert 16.06e9 * share == pytest.approx(15.01e9, rel=0.001)  # 15.01 GB to four digits
    assert compute.weight_share_read(get_model("gpt-3-175b"), 1) == pytest.approx(1.0, rel=1e-12)  # float rounding only
    plan = make_plan(PlanRequest(model="llama-3.1-8b", context_tokens=1))
    assert plan.serve is not None
    # 15.01 GB to four digits, read at what decode kernels reach, plus the fixed cost of a forward pass
    achieved = 3.35e12 * HBM_ACHIEVED_SHARE
    expected = (15.01e9 + 131_072) / achieved + compute.STEP_OVERHEAD_SECONDS
    assert plan.serve.decode_seconds_per_token == pytest.approx(expected, rel=0.001)


@given(n=st.integers(1, 65_536), more=st.integers(1, 1000))
def test_more_gpus_never_shorten_an_all_reduces_latency(n: int, more: int) -> None:
    assert compute.all_reduce_latency(n + more) >= compute.all_reduce_latency(n)


@given(t=st.integers(1, 1_000_000), more=st.integers(1, 100_000))
def test_a_longer_prompt_never_needs_fewer_attention_flops(t: int, more: int) -> None:
    for arch in (LLAMA_8B, MISTRAL):
        assert compute.attention_flops(arch, t + more) > compute.attention_flops(arch, t)
