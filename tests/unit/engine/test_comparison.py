"""Training and serving one model side by side."""

from __future__ import annotations

import pytest

from app.engine.comparison import train_vs_serve


def test_llama_8b_serves_on_one_gpu_and_trains_on_a_dgx1() -> None:
    c = train_vs_serve("llama-3.1-8b")
    assert c.serve_gpus == 1 and c.serve.fits
    assert c.train_gpus == 8 and c.train.fits
    assert c.state_bytes / 1e9 == pytest.approx(128.5, rel=0.005)  # the published figure is rounded to this
    assert c.flops_ratio == 3


def test_serving_is_memory_bound_and_training_compute_bound() -> None:
    c = train_vs_serve("llama-3.1-8b")
    assert c.serve.bottleneck == "memory-bandwidth" and c.train.bottleneck == "compute"


def test_a_bigger_model_needs_more_gpus_for_both_jobs() -> None:
    small, big = train_vs_serve("llama-3.1-8b"), train_vs_serve("llama-3.1-70b")
    assert big.serve_gpus == 2 and big.train_gpus > small.train_gpus
    assert big.train.fits and big.serve.fits
