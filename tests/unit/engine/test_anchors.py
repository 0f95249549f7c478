"""Measured anchors: every row names its source and hardware, asks the engine, and gives a ratio."""

from __future__ import annotations

import math

import pytest

from app.engine.anchors import ANCHORS, anchor_rows
from app.engine.constants import constants
from app.engine.hardware import GPUS
from app.engine.models import CATALOG


def test_every_anchor_names_its_source_hardware_and_engine_parameters_and_has_a_ratio() -> None:
    rows = anchor_rows()
    assert [r.id for r in rows] == [a.id for a in ANCHORS] and len({r.id for r in rows}) == len(rows)
    for r in rows:
        assert r.source and r.hardware and r.parameters, r.id
        assert r.measured > 0 and r.engine > 0 and math.isfinite(r.ratio), r.id
        assert r.ratio == pytest.approx(r.engine / r.measured, rel=1e-12), r.id  # the ratio is engine ÷ measured


def test_the_required_anchors_are_all_there() -> None:
    """torchtitan's 8B runs (memory and tokens/s; selective and full; bf16 and fp8), Meta's MFU at 16k GPUs,
    an MLPerf Llama 2 70B result on 8 H100s and vLLM's KV budget."""
    rows = {r.id: r for r in anchor_rows()}
    tt = [r for r in rows.values() if "torchtitan" in r.source]
    assert {r.unit for r in tt} == {"GiB", "tokens/s a GPU"}
    assert any("selective" in r.parameters for r in tt) and any("full" in r.parameters for r in tt)
    assert any("bf16" in r.parameters for r in tt) and any("fp8" in r.parameters for r in tt)
    assert all("96 GB HBM2e" in r.hardware and "500 W" in r.hardware for r in tt)  # where the hardware differs
    assert "16,384" in rows["llama3-mfu-16k"].job and "2407.21783" in rows["llama3-mfu-16k"].source
    assert "v4.0" in rows["mlperf-llama2-70b"].source and "NVIDIA" in rows["mlperf-llama2-70b"].source
    assert "gpu_memory_utilization" in rows["vllm-kv-budget"].source


def test_the_measured_figures_are_the_published_ones() -> None:
    """The published values, typed once in the anchors (torchtitan table, MLPerf log, Llama 3 table 4)."""
    measured = {a.id: a.measured for a in ANCHORS}
    assert measured["tt-8b-selective-memory"] == 82.4 and measured["tt-8b-fp8-tps"] == 8532
    assert measured["tt-8b-full-32k-memory"] == 83.9 and measured["tt-8b-full-32k-tps"] == 3890
    assert measured["mlperf-llama2-70b"] == 21_805.8 and measured["llama3-mfu-16k"] == 41.0
    # 0.9 × 81,559 MiB − 16.06 GB = 60.9 GB (exact arithmetic, 0.1 % for the weights' rounding)
    assert measured["vllm-kv-budget"] == pytest.approx(0.9 * 81_559 * 2**20 / 1e9 - 16.06, rel=0.001)


def test_the_engine_side_of_the_kv_budget_and_the_mfu_rows_is_close() -> None:
    """The two rows the engine can match already: within 5 % (the engine's 80 GB budget against vLLM's 0.9 ×
    85.5 GB; its default MFU against Meta's 41 %)."""
    rows = {r.id: r for r in anchor_rows()}
    # the docstring's 5 %: the engine's budget against vLLM's
    assert rows["vllm-kv-budget"].ratio == pytest.approx(1.0, abs=0.05)
    # the docstring's 5 %: the default MFU against Meta's 41 %
    assert rows["llama3-mfu-16k"].ratio == pytest.approx(1.0, abs=0.05)


def test_every_constant_has_a_source_and_every_gpu_and_model_is_listed() -> None:
    found = constants()
    assert all(c.source.strip() for c in found)
    groups = {c.group for c in found}
    assert {g.name for g in GPUS.values()} <= groups and {m.name for m in CATALOG.values()} <= groups
    mistral = {c.name: c.value for c in found if c.group == "Mistral 7B"}
    assert mistral["sliding window"] == 4096
