"""Batching: throughput climbs with the batch while memory bandwidth binds, then compute takes over."""

from __future__ import annotations

from app.engine.batching import batch_sweep
from app.engine.plan import PlanRequest, make_plan


def test_throughput_never_falls_as_the_batch_grows() -> None:
    points = batch_sweep(PlanRequest(context_tokens=2048))
    rates = [p.throughput_tokens_per_second for p in points]
    assert rates == sorted(rates)


def test_each_point_is_the_plan_at_that_batch() -> None:
    req = PlanRequest(context_tokens=2048)
    point = batch_sweep(req, [16])[0]
    plan = make_plan(req.model_copy(update={"batch_size": 16}))
    assert plan.serve is not None
    assert point.decode_seconds_per_token == plan.serve.decode_seconds_per_token
    assert point.per_gpu_total == plan.per_gpu.total and point.fits == plan.fits


def test_long_contexts_keep_decode_below_the_ridge_and_memory_caps_the_batch() -> None:
    """Each sequence's KV cache is read every step and shared with nobody (the lesson's point)."""
    points = batch_sweep(PlanRequest(context_tokens=8192), [1, 64, 512])
    assert all(p.binds == "memory-bandwidth" for p in points)
    assert points[0].fits and not points[-1].fits


def test_short_contexts_let_a_big_batch_reach_the_compute_roof() -> None:
    points = batch_sweep(PlanRequest(context_tokens=64, prompt_tokens=32, gpus=8), [1, 4096])
    assert [p.binds for p in points] == ["memory-bandwidth", "compute"]
    assert points[0].intensity < 2 < points[1].intensity
