"""A matrix multiply: 2·m·k·n FLOPs, the bytes of its three matrices, its intensity and time bound."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from app.engine.matmul import matmul, matmul_flops

dims = st.integers(min_value=1, max_value=100_000)


def test_one_token_through_llamas_up_projection_costs_two_flops_per_weight() -> None:
    mm = matmul(1, 4096, 14_336)
    assert mm.flops == 2 * 4096 * 14_336 == 117_440_512
    weights = next(x for x in mm.matrices if x.name == "weights")
    assert weights.bytes == 4096 * 14_336 * 2


@settings(deadline=None, derandomize=True)  # seeded: the same examples on every run
@given(m=dims, k=dims, n=dims)
def test_flops_are_two_m_k_n(m: int, k: int, n: int) -> None:
    assert matmul_flops(m, k, n) == 2 * m * k * n


@settings(deadline=None, derandomize=True)  # seeded: the same examples on every run
@given(m=st.integers(min_value=1, max_value=4096), factor=st.integers(min_value=2, max_value=64))
def test_more_rows_multiply_the_flops_while_the_weight_matrix_stays_the_same(m: int, factor: int) -> None:
    small, big = matmul(m, 4096, 4096), matmul(m * factor, 4096, 4096)
    assert big.flops == pytest.approx(small.flops * factor, rel=1e-12)  # float rounding only
    assert big.matrices[1].bytes == small.matrices[1].bytes
    assert big.intensity > small.intensity


def test_one_row_is_memory_bound_and_a_big_square_is_compute_bound_on_an_h100() -> None:
    assert matmul(1, 4096, 4096).time.binds == "memory-bandwidth"
    assert matmul(8192, 8192, 8192).time.binds == "compute"
    assert matmul(1, 4096, 4096).intensity == pytest.approx(1.0, rel=1e-3)  # 2 FLOPs per 2-byte weight


def test_fewer_bytes_per_number_raise_the_intensity() -> None:
    assert matmul(16, 4096, 4096, "fp8").intensity == pytest.approx(
        2 * matmul(16, 4096, 4096, "bf16").intensity, rel=1e-9  # half the bytes, same FLOPs: float rounding only
    )
