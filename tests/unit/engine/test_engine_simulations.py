"""Training and serving runs in simulated time: pure functions of parameters, seed and elapsed seconds."""

from __future__ import annotations

import math

import pytest

from app.engine import serving_run, training_run
from app.engine.errors import DoesNotFit
from app.engine.plan import make_plan
from app.engine.randomness import poisson, uniform
from app.engine.serving_run import ServingRun, plan_request, simulate_serving
from app.engine.training_run import TrainingRun, loss_at, simulate_training


def test_a_training_run_starts_at_the_loss_of_a_uniform_guess() -> None:
    """ln(vocab) = ln(128,256) ≈ 11.76 nats before any token."""
    state = simulate_training(TrainingRun(), seed=1, elapsed_seconds=0)
    assert state.phase == "training" and state.progress == 0
    assert state.loss == pytest.approx(math.log(128_256), rel=0.05)  # the loss starts near ln(vocabulary), with noise


def test_the_loss_falls_as_a_power_law_toward_a_floor() -> None:
    """Chinchilla (Hoffmann et al. 2022): L = 1.69 + 406.4/N^0.34 + 410.7/D^0.28."""
    n = 8.03e9
    losses = [loss_at(n, d, 128_256) for d in (1e6, 1e8, 1e10, 1e12)]
    assert losses == sorted(losses, reverse=True)
    floor = 1.69 + 406.4 / n**0.34
    assert losses[-1] > floor and losses[-1] - floor < 0.2


def test_a_run_finishes_with_every_token_and_a_final_checkpoint() -> None:
    run = TrainingRun(train_tokens=1e9)
    state = simulate_training(run, seed=3, elapsed_seconds=1e9)
    assert state.finished and state.phase == "finished" and state.progress == 1
    assert state.eta_seconds == 0 and state.tokens_per_second == 0
    assert state.checkpoints[-1].tokens == run.train_tokens
    assert state.checkpoints_written == state.checkpoints[-1].index >= 1


def test_the_eta_is_the_rest_of_the_total() -> None:
    state = simulate_training(TrainingRun(), seed=0, elapsed_seconds=1000)
    # simulated time is exact arithmetic: float rounding only
    assert state.eta_seconds == pytest.approx(state.total_seconds - 1000, rel=1e-9)


def test_checkpoints_pause_training_and_are_listed_when_written() -> None:
    run = TrainingRun(train_tokens=1e11, checkpoint_every_seconds=600)
    writing = simulate_training(run, seed=0, elapsed_seconds=601)
    assert writing.phase == "checkpointing" and writing.utilisation == 0 and writing.tokens_per_second == 0
    after = simulate_training(run, seed=0, elapsed_seconds=600 + 60)
    assert after.checkpoints_written == 1 and after.checkpoints[0].index == 1
    # 8.03 B to three digits
    assert after.checkpoints[0].bytes == pytest.approx(8.03e9 * 14, rel=0.01), (
        "bf16 weights + fp32 Adam state"
    )


def test_the_checkpoint_list_is_bounded() -> None:
    state = simulate_training(TrainingRun(train_tokens=1e13, checkpoint_every_seconds=60), 0, 1e6)
    assert state.checkpoints_written > 100 and len(state.checkpoints) == 10


def test_a_slow_data_loader_sets_the_pace_and_idles_the_gpus() -> None:
    fast = simulate_training(TrainingRun(), seed=0, elapsed_seconds=100)
    slow = simulate_training(TrainingRun(loader_samples_per_second=2), seed=0, elapsed_seconds=100)
    assert not fast.loader_bound and fast.utilisation == 1
    assert slow.loader_bound and slow.tokens_per_second == 2 * 8192
    # simulated time is exact arithmetic: float rounding only
    assert slow.utilisation == pytest.approx(slow.tokens_per_second / slow.gpu_tokens_per_second, rel=1e-9)
    assert slow.power_watts < fast.power_watts


def test_a_busy_dgx_1_draws_its_gpus_tdp() -> None:
    assert simulate_training(TrainingRun(), 0, 100).power_watts == 8 * 700


def test_a_run_that_does_not_fit_is_refused_with_the_numbers() -> None:
    with pytest.raises(DoesNotFit, match="GPU 0 needs"):
        simulate_training(TrainingRun(gpus=1, sharding="none"), 0, 0)


def test_the_loss_curve_keeps_its_past_points_as_time_goes_on() -> None:
    run = TrainingRun(train_tokens=1e9)
    early, late = simulate_training(run, 5, 5000), simulate_training(run, 5, 15000)
    assert late.loss_curve[: len(early.loss_curve)] == early.loss_curve
    assert len(late.loss_curve) > len(early.loss_curve)


def test_different_seeds_give_different_noise_but_the_same_progress() -> None:
    a, b = simulate_training(TrainingRun(), 1, 5000), simulate_training(TrainingRun(), 2, 5000)
    assert a.tokens_done == b.tokens_done and a.loss != b.loss


def test_a_light_load_is_served_with_an_empty_queue_and_a_prefill_sized_ttft() -> None:
    state = simulate_serving(ServingRun(arrival_rate=1), seed=0, elapsed_seconds=600)
    assert not state.saturated and state.queue == 0
    # simulated time is exact arithmetic: float rounding only
    assert state.ttft_seconds == pytest.approx(state.prefill_seconds, rel=1e-9)
    # near the plan's batch-1 decode step: a light load still batches now and then
    one = make_plan(plan_request(ServingRun(arrival_rate=1), 1)).serve
    assert one is not None
    assert state.tpot_seconds == pytest.approx(one.decode_seconds_per_token, rel=0.1), "near the batch-1 step"


def test_continuous_batching_fills_the_batch_as_the_load_grows() -> None:
    light = simulate_serving(ServingRun(arrival_rate=1), 0, 600)
    heavy = simulate_serving(ServingRun(arrival_rate=8), 0, 600)
    assert (
        heavy.batch > light.batch and heavy.throughput_tokens_per_second > light.throughput_tokens_per_second
    )
    assert heavy.tpot_seconds > light.tpot_seconds


def test_past_capacity_the_queue_grows_with_time() -> None:
    run = ServingRun(arrival_rate=50)
    states = [simulate_serving(run, 0, t) for t in (60, 600, 6000)]
    assert all(s.saturated for s in states)
    assert states[0].queue < states[1].queue < states[2].queue
    assert states[2].ttft_seconds > 100 * states[0].prefill_seconds
    assert states[2].batch == states[2].batch_limit


def test_the_kv_cache_can_limit_the_batch_before_max_batch_does() -> None:
    state = simulate_serving(
        ServingRun(model="llama-3.1-70b", gpus=4, prompt_tokens=32_000, max_batch=256), 0, 10
    )
    assert state.batch_limited_by == "kv-cache memory" and state.batch_limit < 256


def test_a_model_that_does_not_fit_cannot_be_served() -> None:
    with pytest.raises(DoesNotFit):
        simulate_serving(ServingRun(model="llama-3.1-405b", gpus=1), 0, 0)


def test_at_time_zero_nothing_has_arrived() -> None:
    state = simulate_serving(ServingRun(arrival_rate=100), 0, 0)
    assert state.history == [] and state.queue == 0 and state.batch == 0


def test_the_history_keeps_the_last_minute_and_its_arrivals_average_the_rate() -> None:
    state = simulate_serving(ServingRun(arrival_rate=5), 11, 3600)
    assert len(state.history) == 60 and state.history[-1].at_seconds == 3600
    assert sum(h.arrivals for h in state.history) / 60 == pytest.approx(5, rel=0.3)  # a Poisson count over 60 samples


def test_seeded_poisson_draws_have_the_right_mean_and_repeat_exactly() -> None:
    draws = [poisson(3.0, 42, "t", i) for i in range(4000)]
    assert sum(draws) / len(draws) == pytest.approx(3.0, rel=0.05)  # 4,000 draws: a few standard errors
    assert draws == [poisson(3.0, 42, "t", i) for i in range(4000)]
    assert 0 < uniform(0, "x", 0) < 1


def test_a_serving_call_draws_at_most_a_minute_of_arrivals(monkeypatch: pytest.MonkeyPatch) -> None:
    """Bounded work whatever the elapsed time: only the last WINDOW_SECONDS are simulated second by second."""
    draws: list[int] = []

    def counted(mean: float, seed: int, stream: str, index: int) -> int:
        draws.append(index)
        return poisson(mean, seed, stream, index)

    monkeypatch.setattr(serving_run, "poisson", counted)
    simulate_serving(ServingRun(arrival_rate=5000, max_batch=4096), 0, 1e9)
    assert len(draws) == serving_run.WINDOW_SECONDS


def test_a_training_call_draws_a_bounded_number_of_noisy_losses(monkeypatch: pytest.MonkeyPatch) -> None:
    """64 curve points, 10 checkpoints and the current loss, however long the run."""
    draws: list[int] = []

    def counted(seed: int, stream: str, index: int) -> float:
        draws.append(index)
        return 0.0

    monkeypatch.setattr(training_run, "normal", counted)
    simulate_training(TrainingRun(train_tokens=1e13, checkpoint_every_seconds=60), 0, 1e9)
    assert len(draws) <= training_run.LOSS_CURVE_POINTS + training_run.CHECKPOINTS_SHOWN + 1
