"""run_load: what a training or serving run puts on dgx-1 while it runs (the panel's data)."""

from __future__ import annotations

import math

import pytest

from app.engine import memory
from app.engine.run_load import serving_load, serving_request, serving_utilisation, training_load
from app.engine.serving_run import ServingRun, simulate_serving
from app.engine.training_run import TrainingRun, simulate_training

RUN = TrainingRun(model="llama-3.1-8b", gpus=8, sharding="zero3", context_tokens=2048,
                  activation_checkpointing=False)


def test_a_training_run_holds_its_plan_memory_on_each_of_its_gpus() -> None:
    node = training_load(RUN, simulate_training(RUN, 1, 600))
    expected = memory.per_gpu(RUN.plan_request()).total
    assert [g.used for g in node.gpus] == [expected] * 8
    assert node.fits


def test_a_training_run_that_keeps_up_runs_all_gpus_at_full_power() -> None:
    node = training_load(RUN, simulate_training(RUN, 1, 600))
    assert all(g.utilisation == 1.0 for g in node.gpus)
    assert node.power_w == pytest.approx(8 * 700, rel=1e-9)  # H100 TDP, datasheet; float rounding only
    assert node.activity.endswith("computing")


def test_a_starved_run_is_as_busy_as_the_loader_allows() -> None:
    starved = RUN.model_copy(update={"loader_samples_per_second": 16})
    snap = simulate_training(starved, 1, 600)
    node = training_load(starved, snap)
    # float rounding only
    assert node.gpus[0].utilisation == pytest.approx(16 * 2048 / snap.gpu_tokens_per_second, rel=1e-9)
    assert node.activity.endswith("waiting on the data loader")


def test_a_paused_or_finished_run_keeps_its_memory_but_idles() -> None:
    snap = simulate_training(RUN, 1, 600)
    paused = training_load(RUN, snap, running=False)
    assert paused.gpus[0].utilisation == 0 and paused.gpus[0].used > 0 and paused.activity.endswith("paused")
    done = training_load(RUN, simulate_training(RUN, 1, 1e9))
    assert done.gpus[0].utilisation == 0 and done.activity.endswith("finished")


def test_the_activity_sentence_changes_only_with_the_phase() -> None:
    sentences = {training_load(RUN, simulate_training(RUN, 1, t)).activity for t in (60, 600, 1200, 1800)}
    assert len(sentences) == 1  # polls inside one phase do not re-announce


def test_a_server_reserves_the_kv_cache_of_a_full_batch_up_front() -> None:
    run = ServingRun(model="llama-3.1-8b", arrival_rate=1, max_batch=32)
    node = serving_load(run, simulate_serving(run, 1, 120))
    full = memory.per_gpu(serving_request(run, 32))
    assert node.gpus[0].parts["kv_cache"] == full.kv_cache
    assert node.gpus[0].used == full.total and node.gpus[1].used == 0


def test_a_busy_server_is_always_busy_and_an_idle_one_rarely() -> None:
    run = ServingRun(model="llama-3.1-8b", arrival_rate=16, max_batch=32)
    saturated = simulate_serving(run, 1, 120)
    assert saturated.queue > 0 and serving_utilisation(saturated) == 1.0
    quiet = simulate_serving(run.model_copy(update={"arrival_rate": 0.1}), 1, 120)
    assert serving_utilisation(quiet) == pytest.approx(1 - math.exp(-quiet.batch), rel=1e-9)  # float rounding only
    assert serving_utilisation(quiet) < 0.5


def test_a_model_too_big_for_one_gpu_is_split_over_the_gpus_it_runs_on() -> None:
    run = ServingRun(model="llama-3.1-70b", gpus=2, arrival_rate=1, max_batch=8)
    node = serving_load(run, simulate_serving(run, 1, 30))
    assert node.gpus[0].used == node.gpus[1].used > 0 and node.gpus[2].used == 0
