"""Power follows work: one rule from busy share to watts, and every view that shows power uses it."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from app.engine.cost import CostAssumptions, own_vs_rent
from app.engine.hardware import GPUS, H100_SXM
from app.engine.plan import PlanRequest, node_load
from app.engine.power import IDLE_WATTS, POWER_SOURCE, gpu_watts, watts
from app.engine.training_run import TrainingRun, simulate_training

SHARE = st.floats(0, 1, allow_nan=False)


def test_an_idle_gpu_draws_its_idle_floor_and_a_busy_one_its_tdp() -> None:
    """H100: 70 W idle (nvidia-smi printouts: 64-73 W), 700 W TDP (datasheet). Exact."""
    assert gpu_watts(0.0) == 70.0 and gpu_watts(1.0) == H100_SXM.tdp_watts == 700.0
    assert gpu_watts(0.5) == pytest.approx(385.0, rel=1e-12)  # halfway between, the rule is linear
    for gpu in GPUS.values():
        assert gpu_watts(0.0, gpu) == IDLE_WATTS[gpu.id] < gpu_watts(1.0, gpu) == gpu.tdp_watts
    assert "nvidia-smi" in POWER_SOURCE and "datasheet" in POWER_SOURCE


@given(low=SHARE, high=SHARE)
def test_more_busy_never_draws_less(low: float, high: float) -> None:
    low, high = min(low, high), max(low, high)
    for gpu in GPUS.values():
        assert gpu_watts(low, gpu) <= gpu_watts(high, gpu)
    assert watts(low, 2000, 10_200) <= watts(high, 2000, 10_200)


def test_one_chat_user_on_one_gpu_is_not_shown_100_percent_busy_at_700_w() -> None:
    """A serving plan loads the weights; with no traffic of its own its GPU waits at the floor of a GPU holding
    a model (140 W, gpu-burn issue #114), twice a bare GPU's; the GPUs it does not use stay at the bare floor."""
    load = node_load(PlanRequest(model="llama-3.1-8b", batch_size=1))
    first = load.gpus[0]
    assert first.used > 0 and first.utilisation == 0.0 and first.power_w == gpu_watts(0.0, loaded=True) == 140.0
    assert load.gpus[1].power_w == gpu_watts(0.0) == 70.0
    assert "idle until a request arrives" in load.activity


def test_a_fed_training_plan_runs_its_gpus_flat_out_and_leaves_the_rest_idle() -> None:
    load = node_load(PlanRequest(model="llama-3.1-8b", mode="train", gpus=4, sharding="zero3",
                                 context_tokens=2048, activation_checkpointing=True))
    assert [g.power_w for g in load.gpus] == [700.0] * 4 + [70.0] * 4
    assert load.power_w == 4 * 700 + 4 * 70


def test_a_starved_training_run_draws_less_than_a_fed_one() -> None:
    """The loader delivers 1 sequence a second against the GPUs' ~23: busy ~4 %, power near idle."""
    fed = simulate_training(TrainingRun(context_tokens=2048), seed=1, elapsed_seconds=10)
    starved = simulate_training(
        TrainingRun(context_tokens=2048, loader_samples_per_second=1), seed=1, elapsed_seconds=10
    )
    assert fed.utilisation == 1.0 and fed.power_watts == 8 * 700
    assert starved.loader_bound and starved.utilisation < 0.1
    assert starved.power_watts == pytest.approx(8 * gpu_watts(starved.utilisation), rel=1e-12)  # float rounding only
    assert starved.power_watts < fed.power_watts / 5


def test_owning_uses_the_same_rule_for_the_nodes_energy() -> None:
    """Energy a year at 0 % and 100 %: idle and busy watts × 8,766 h (the rule's two ends). Tolerance 1e-12."""
    a = CostAssumptions()
    # float rounding only
    assert own_vs_rent(0.0, a).energy_kwh_per_year == pytest.approx(a.idle_watts * 8766 / 1000, rel=1e-12)
    # float rounding only
    assert own_vs_rent(1.0, a).energy_kwh_per_year == pytest.approx(a.busy_watts * 8766 / 1000, rel=1e-12)
    half = own_vs_rent(0.5, a).energy_kwh_per_year
    assert half == pytest.approx(watts(0.5, a.idle_watts, a.busy_watts) * 8766 / 1000, rel=1e-12)  # float rounding only
