"""The live-run clock (app/widgets/_live.py) and the training-run widget's compute, without HTTP."""

from __future__ import annotations

import pytest

from app.engine.compute import training_model_flops
from app.engine.models import get_model
from app.widgets import _live
from app.widgets.training_run import Params, compute

DURATION = 20.0  # wall seconds a run plays for in these tests


def settings(**extra: object) -> Params:
    return Params.model_validate({"play_seconds": 20, **extra})


class Fixed:
    """A run of DURATION simulated seconds at one simulated second a wall second, whatever its settings."""

    def close(self, stretches: list[_live.Stretch], simulated: float) -> tuple[float, tuple[float, ...]]:
        return min(simulated, DURATION), (simulated, simulated)

    def end(self, stretches: list[_live.Stretch]) -> float:
        return DURATION


def resolve(p: Params, now: float) -> _live.LiveState:
    return _live.resolve(p, 1.0, now, Fixed())


def test_a_fresh_run_is_ready_and_start_begins_it_now() -> None:
    ready = resolve(settings(), now=1000.0)
    assert ready.status == "ready" and ready.played == 0
    started = resolve(settings(action="start"), now=1000.0)
    assert started.status == "running" and started.started_at == 1000.0 and started.elapsed == 0


def test_a_running_run_has_played_the_wall_time_since_its_start() -> None:
    p = settings(started_at=1000.0, run_of=settings().fingerprint())
    # sums of the given clock readings: float rounding only
    assert resolve(p, now=1007.5).played == pytest.approx(7.5, rel=1e-9)


def test_pause_keeps_what_was_played_and_stops_the_clock() -> None:
    p = settings(started_at=1000.0, action="pause", run_of=settings().fingerprint())
    paused = resolve(p, now=1005.0)
    # sums of the given clock readings: float rounding only
    assert paused.status == "paused" and paused.started_at == 0 and paused.elapsed == pytest.approx(5.0, rel=1e-9)
    later = resolve(settings(elapsed=paused.elapsed, run_of=paused.run_of), now=9999.0)
    # sums of the given clock readings: float rounding only
    assert later.status == "paused" and later.played == pytest.approx(5.0, rel=1e-9)


def test_resume_continues_from_the_pause() -> None:
    p = settings(elapsed=5.0, action="start", run_of=settings().fingerprint())
    resumed = resolve(p, now=2000.0)
    assert resumed.status == "running" and resumed.started_at == 2000.0
    again = resolve(settings(started_at=2000.0, elapsed=5.0, run_of=resumed.run_of), now=2003.0)
    assert again.played == pytest.approx(8.0, rel=1e-9)  # sums of the given clock readings: float rounding only


def test_a_run_stops_at_its_end_and_stays_finished() -> None:
    p = settings(started_at=1000.0, run_of=settings().fingerprint())
    done = resolve(p, now=1000.0 + DURATION + 1)
    assert done.status == "finished" and done.played == DURATION
    assert done.form_values()["started_at"] == "0"  # nothing left to poll for


def test_start_after_the_end_runs_again_from_the_beginning() -> None:
    p = settings(elapsed=DURATION, action="start", run_of=settings().fingerprint())
    again = resolve(p, now=5000.0)
    assert again.status == "running" and again.elapsed == 0 and again.started_at == 5000.0


def test_reset_goes_back_to_ready() -> None:
    p = settings(started_at=1000.0, elapsed=3.0, action="reset", run_of=settings().fingerprint())
    assert resolve(p, now=1004.0).status == "ready"


def test_changing_a_setting_continues_a_running_run_from_where_it_is() -> None:
    """Issue 13, item 3: step 5 asks to turn the loader down while the run plays; only Reset starts again."""
    old = settings()
    first = _live.Stretch.of(0, 0, 1.0, (0.0, 0.0), old.stretch_settings())
    p = settings(loader_samples_per_second=8, started_at=1000.0, elapsed=2.0, run_of=old.fingerprint(),
                 segments=_live.encode([first]))
    continued = resolve(p, now=1010.0)
    assert continued.status == "running" and continued.played == 12.0 and continued.started_at == 1000.0
    assert continued.run_of == old.fingerprint() and len(continued.stretches) == 2
    assert continued.stretches[1].played == 12.0 and continued.stretches[1].settings[2] == 8.0
    paused = resolve(settings(loader_samples_per_second=8, elapsed=7.0, run_of=old.fingerprint()), now=1010.0)
    assert paused.status == "paused" and paused.played == 7.0


def test_a_new_gpu_count_or_model_is_a_new_run() -> None:
    old = settings().fingerprint()
    for change in ({"gpus": 4}, {"model": "llama-3.1-70b"}, {"seed": 2}):
        fresh = resolve(settings(started_at=1000.0, elapsed=2.0, run_of=old, **change), now=1010.0)
        assert fresh.status == "ready" and fresh.played == 0 and fresh.stretches == []


def test_more_changes_than_kept_merge_the_oldest_into_the_first_stretch() -> None:
    p = settings(started_at=1000.0, run_of=settings().fingerprint(), action="")
    stretches: list[_live.Stretch] = []
    for n in range(12):
        p = p.model_copy(update={"mfu": 0.05 * (n + 1), "segments": _live.encode(stretches)})
        stretches = resolve(settings(**{**p.model_dump(), "segments": p.segments}), now=1000.0 + n).stretches
    assert len(stretches) == _live.MAX_STRETCHES and stretches[0].played == 0
    assert [s.played for s in stretches[1:]] == [5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0]
    assert len(_live.encode(stretches)) <= _live.SEGMENTS_MAX_CHARS


@pytest.mark.parametrize("segments", [
    "1_2_3", "0_0_1_0_0_0.4_1000000000_64-", "0_0_1_0_0_2_1000000000_64", "5_0_1_0_0_0.4_1e9_64",
    "0_0_0_0_0_0.4_1000000000_64", "5_5_1_0_0_0.4_1000000000_64-4_6_1_0_0_0.4_1000000000_64",
    "0_0_1_0_0_0.4_1000000000_64" + "-0_0_1_0_0_0.4_1000000000_64" * 8,
])
def test_a_malformed_segments_value_is_refused(segments: str) -> None:
    with pytest.raises(ValueError, match="segments"):
        settings(segments=segments)
    assert settings(segments="0_0_1_0_0_0.4_1000000000_64").stretches()[0].settings == (0.4, 1e9, 64.0)


def test_a_start_time_in_the_future_counts_as_now() -> None:
    p = settings(started_at=5000.0, run_of=settings().fingerprint())
    assert resolve(p, now=1000.0).played == 0


def test_typed_and_default_settings_have_one_fingerprint() -> None:
    typed = Params.model_validate({"loader_samples_per_second": "64", "tokens": "1e9", "mfu": "0.4"})
    assert typed.fingerprint() == Params().fingerprint()


def test_the_whole_run_plays_in_the_replay_length_when_the_loader_keeps_up(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_live, "clock", lambda: 1000.0)
    r = compute(settings())
    assert r.snap is not None
    assert r.live.duration == pytest.approx(20.0, rel=1e-9)  # sums of the given clock readings: float rounding only
    # sums of the given clock readings: float rounding only
    assert r.speed * 20 == pytest.approx(r.snap.total_seconds, rel=1e-9)


def test_a_starved_run_plays_slower_but_at_most_four_times_slower(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_live, "clock", lambda: 1000.0)
    half = compute(settings(loader_samples_per_second=4))  # 4 sequences of 8,192 tokens: 32,768 tokens/s
    crawl = compute(settings(loader_samples_per_second=1))
    # the GPUs take 8 × 989 TFLOPS × 0.4 ÷ the model FLOPs a token (6·N plus attention at 8,192 tokens)
    gpus = 8 * 989e12 * 0.4 / training_model_flops(get_model("llama-3.1-8b"), 1, 8192)
    assert half.live.duration == pytest.approx(20 * gpus / 32_768, rel=0.01)  # the loader gives 57 % of that
    assert crawl.live.duration == pytest.approx(80.0, rel=1e-9)  # sums of the given clock readings: float rounding only


def test_the_loss_chart_spans_the_whole_run_from_the_start(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_live, "clock", lambda: 1010.0)
    p = settings(started_at=1000.0, run_of=settings().fingerprint())
    r = compute(p)
    assert r.chart is not None and r.snap is not None
    first = r.chart.points.split()[0]
    assert first.startswith(f"{r.chart.frame.left},")  # the curve starts at 0 tokens
    assert r.chart.frame.x_ticks[-1].label == "1B"
    assert 0.4 < r.snap.progress < 0.55
