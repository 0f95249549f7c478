"""Live runs continue across a change of settings (issue 13, item 3): the engine resumes a run from where it stood.

Training: tokens done, training seconds, checkpoints written and the simulated clock are continuous at a change and
only move forward after it; the loss curve and the checkpoints taken before it stay. Serving: the queue carries over
and the seconds before the change keep their arrivals and queue."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from app.engine.serving_run import ServingRun, ServingSnapshot, ServingStretch, simulate_serving
from app.engine.training_run import TrainingResume, TrainingRun, TrainingSnapshot, simulate_training
from tests.unit.engine.engine_strategies import LAW

# Fast checkpoints, so a change often lands between, during and after writes.
BASE = TrainingRun(train_tokens=2e8, checkpoint_every_seconds=60)
SETTINGS = st.fixed_dictionaries(
    {
        "mfu": st.floats(0.05, 1.0),
        "loader_samples_per_second": st.one_of(st.none(), st.floats(0.1, 200)),
        "train_tokens": st.sampled_from([2e8, 2e8, 5e7, 4e8]),
    }
)


def close(a: float, b: float) -> bool:
    return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-6)


def resumed(snap: TrainingSnapshot) -> TrainingResume:
    return TrainingResume(
        elapsed_seconds=snap.elapsed_seconds, training_seconds=snap.training_seconds, tokens_done=snap.tokens_done
    )


def assert_continuous(before: TrainingSnapshot, after: TrainingSnapshot) -> None:
    assert close(after.elapsed_seconds, before.elapsed_seconds)
    assert close(after.tokens_done, before.tokens_done)
    assert close(after.training_seconds, before.training_seconds)
    assert after.checkpoints_written == before.checkpoints_written


def assert_forward(a: TrainingSnapshot, b: TrainingSnapshot) -> None:
    assert a.tokens_done <= b.tokens_done * (1 + 1e-12) and a.training_seconds <= b.training_seconds + 1e-9
    assert a.checkpoints_written <= b.checkpoints_written and a.eta_seconds >= b.eta_seconds - 1e-6
    assert a.elapsed_seconds <= b.elapsed_seconds


@LAW
@given(
    seed=st.integers(0, 1000),
    changes=st.lists(st.tuples(st.floats(0, 1.2), SETTINGS), min_size=1, max_size=3),
    first=SETTINGS,
    later=st.lists(st.floats(0, 5000), min_size=2, max_size=2),
)
def test_a_training_run_is_continuous_at_each_change_and_moves_forward_after(
    seed: int,
    changes: list[tuple[float, dict[str, float | None]]],
    first: dict[str, float | None],
    later: list[float],
) -> None:
    run, resume, at = BASE.model_copy(update=first), [], 0.0
    for share, settings in changes:
        start = simulate_training(run, seed, at, resume)
        at = min(at + share * (start.total_seconds - at), start.total_seconds)  # a change never jumps past the end
        before = simulate_training(run, seed, at, resume)
        same_axis = settings["train_tokens"] == run.train_tokens  # the curve is sampled at shares of the target
        run, resume = run.model_copy(update=settings), [*resume, resumed(before)]
        after = simulate_training(run, seed, at, resume)
        assert_continuous(before, after)
        early, late = (simulate_training(run, seed, at + d, resume) for d in sorted(later))
        assert_forward(after, early)
        assert_forward(early, late)
        assert not same_axis or late.loss_curve[: len(before.loss_curve)] == before.loss_curve  # the curve stays
        for old in before.checkpoints:
            kept = next((c for c in late.checkpoints if c.index == old.index), None)
            assert kept is None or (close(kept.tokens, old.tokens) and close(kept.written_at_seconds,
                                                                             old.written_at_seconds))


def test_the_rate_after_a_change_is_the_new_one_and_the_eta_follows_the_tokens_left() -> None:
    run = TrainingRun(train_tokens=1e9)
    before = simulate_training(run, 1, 1000)
    slow = run.model_copy(update={"loader_samples_per_second": 4.0})
    after = simulate_training(slow, 1, 1500, [resumed(before)])
    fresh = simulate_training(slow, 1, 0)
    assert after.tokens_per_second == fresh.tokens_per_second < before.tokens_per_second
    assert after.tokens_done == pytest.approx(before.tokens_done + 500 * fresh.tokens_per_second)
    left = (run.train_tokens - after.tokens_done) / fresh.tokens_per_second  # training seconds to go, new rate
    assert after.eta_seconds == pytest.approx(after.total_seconds - after.elapsed_seconds)
    assert left <= after.eta_seconds < left * 1.01  # plus the checkpoints still to write


def test_a_target_below_the_tokens_done_finishes_the_run_where_it_stands() -> None:
    run = TrainingRun(train_tokens=1e9)
    before = simulate_training(run, 1, 1000)
    shorter = run.model_copy(update={"train_tokens": before.tokens_done / 2})
    after = simulate_training(shorter, 1, 1000, [resumed(before)])
    assert after.tokens_done == before.tokens_done and after.phase == "checkpointing"
    done = simulate_training(shorter, 1, after.total_seconds, [resumed(before)])
    assert done.finished and done.tokens_done == before.tokens_done and done.eta_seconds == 0


SERVING = st.fixed_dictionaries({"arrival_rate": st.floats(0.1, 60), "max_batch": st.sampled_from([1, 8, 32, 256])})


def stretch(run: ServingRun, snap: ServingSnapshot) -> ServingStretch:
    return ServingStretch(
        until_seconds=snap.elapsed_seconds, queue=snap.queue, arrival_rate=run.arrival_rate, max_batch=run.max_batch
    )


@LAW
@given(
    seed=st.integers(0, 1000),
    first=SERVING,
    changes=st.lists(st.tuples(st.floats(0, 200), SERVING), min_size=1, max_size=3),
    later=st.floats(0, 120),
)
def test_a_serving_run_keeps_its_past_seconds_and_its_queue_at_each_change(
    seed: int, first: dict[str, float], changes: list[tuple[float, dict[str, float]]], later: float
) -> None:
    run, resume, at = ServingRun(**first), [], 0.0
    for step, settings in changes:
        at += step
        before = simulate_serving(run, seed, at, resume)
        resume = [*resume, stretch(run, before)]
        run = run.model_copy(update=settings)
        now = simulate_serving(run, seed, at, resume)
        assert now.queue == before.queue and now.history == before.history
        after = simulate_serving(run, seed, at + later, resume)
        shown = {s.at_seconds: s for s in before.history}
        kept = [s for s in after.history if s.at_seconds <= int(at)]
        assert kept == [shown[s.at_seconds] for s in kept]  # the same arrivals and queue, second by second
        assert len(after.history) == min(60, int(at + later))


def test_arrivals_after_a_change_follow_the_new_rate() -> None:
    quiet = ServingRun(arrival_rate=1.0, max_batch=32)
    before = simulate_serving(quiet, 3, 100)
    busy = quiet.model_copy(update={"arrival_rate": 50.0})
    after = simulate_serving(busy, 3, 160, [stretch(quiet, before)])
    assert sum(s.arrivals for s in after.history) > 40 * 60 and after.queue > before.queue
    assert simulate_serving(busy, 3, 100).history != before.history  # as if it had always been busy: not shown
