"""The engine modules behind the companion widgets: data path, interconnect, utilisation, limits, facility."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from app.engine.facility import FacilityRequest, facility
from app.engine.interconnect import all_reduce_comparison
from app.engine.limits import compare_gpus, gpu_limits
from app.engine.pipeline import DataPath, data_path
from app.engine.power import node_watts
from app.engine.utilisation import serving_utilisation
from app.engine.workload import PlanRequest

# The lesson's image classifier (understanding-the-work, step 3): 2,000 images/s delivered, 5,000 consumed.
CLASSIFIER = DataPath(
    dataset_samples=1_281_167, sample_bytes=110e3, storage_read_bytes_per_s=2000e6, loader_workers=4,
    samples_per_s_per_worker=500, gpus=8, gpu_samples_per_s=5000, checkpoint_bytes=1e9,
    checkpoint_every_s=1800, storage_write_bytes_per_s=1000e6,
)


def test_a_loader_at_2000_images_a_second_keeps_gpus_wanting_5000_busy_40_percent() -> None:
    r = data_path(CLASSIFIER)
    assert r.limit == "loader"
    assert r.gpu_busy == pytest.approx(0.40, abs=0.001)  # checkpoints take a sliver of the rest
    assert r.pace_samples_per_s == pytest.approx(2000, rel=1e-9)  # datasheet figures multiplied: float rounding only
    assert [t.id for t in r.time] == ["computing", "waiting", "checkpointing"]
    assert sum(t.share for t in r.time) == pytest.approx(1.0, abs=1e-12)  # float rounding only


def test_a_faster_gpu_leaves_a_loader_bound_job_exactly_as_slow_and_less_busy() -> None:
    slow, fast = data_path(CLASSIFIER), data_path(CLASSIFIER.model_copy(update={"gpu_samples_per_s": 10_000}))
    assert fast.epoch_seconds == pytest.approx(slow.epoch_seconds, rel=1e-12)  # float rounding only
    assert fast.gpu_busy == pytest.approx(slow.gpu_busy / 2, rel=1e-9)  # float rounding only


def test_enough_loader_workers_make_compute_the_limit() -> None:
    r = data_path(CLASSIFIER)
    assert r.needed_workers == 10  # 5,000 / 500
    fixed = data_path(CLASSIFIER.model_copy(update={"loader_workers": r.needed_workers}))
    assert fixed.limit == "compute"
    assert fixed.gpu_busy == pytest.approx(1.0, abs=0.001)  # fed exactly: busy to a rounding
    assert fixed.epoch_seconds < r.epoch_seconds / 2


def test_slow_storage_limits_even_with_many_workers() -> None:
    r = data_path(CLASSIFIER.model_copy(update={"storage_read_bytes_per_s": 220e6, "loader_workers": 64}))
    assert r.limit == "storage"
    # 220 MB/s ÷ 110 kB; datasheet figures multiplied: float rounding only
    assert r.pace_samples_per_s == pytest.approx(2000, rel=1e-9)


def test_a_distributed_job_over_a_slow_network_waits_on_the_gradient_exchange() -> None:
    fast = CLASSIFIER.model_copy(update={"loader_workers": 16, "distributed": True})
    slow = fast.model_copy(update={"network_bytes_per_s": 0.125e9})  # 1 Gb/s Ethernet
    assert data_path(fast).limit == "compute"
    r = data_path(slow)
    assert r.limit == "network"
    # ring over 2 nodes: 0.8 s; datasheet figures multiplied: float rounding only
    assert r.exchange_seconds == pytest.approx(2 * 1 / 2 * 100e6 / 0.125e9, rel=1e-9)
    assert "exchanging" in [t.id for t in r.time]


@given(
    workers=st.integers(1, 256), per_worker=st.floats(1, 1e5), gpu=st.floats(1, 1e6),
    storage=st.floats(1e6, 1e11), every=st.floats(60, 1e5),
)
def test_busy_share_is_a_share_and_the_times_add_up(
    workers: int, per_worker: float, gpu: float, storage: float, every: float
) -> None:
    p = CLASSIFIER.model_copy(update={"loader_workers": workers, "samples_per_s_per_worker": per_worker,
                                      "gpu_samples_per_s": gpu, "storage_read_bytes_per_s": storage,
                                      "checkpoint_every_s": every})
    r = data_path(p)
    assert 0 < r.gpu_busy <= 1
    assert all(t.seconds >= -1e-9 for t in r.time)
    assert sum(t.seconds for t in r.time) == pytest.approx(r.epoch_seconds, rel=1e-9)  # float rounding only


def test_all_reduce_of_llama_8b_gradients_over_nvlink_takes_76_ms_at_the_bus_bandwidth_nccl_reaches() -> None:
    # engine-cases.md case 16 says 2 × 7/8 × 16.06 GB ÷ 450 GB/s ≈ 62.5 ms at the line rate; NCCL reaches about
    # 370 GB/s of bus bandwidth (nccl-tests issue 212), so 76 ms, the engine's collective (a /numbers departure)
    r = all_reduce_comparison("llama-3.1-8b", "bf16", 8, ["nvlink", "pcie", "network"])
    times = {lk.id: lk.seconds for lk in r.links}
    assert times["nvlink"] == pytest.approx(2 * 7 / 8 * r.bytes / 370e9, rel=0.01)
    assert times["nvlink"] == pytest.approx(0.0625 * 450 / 370, rel=0.01)
    assert times["pcie"] / times["nvlink"] == pytest.approx(450 / 63.0, rel=0.01)  # the link bandwidths, latency aside
    assert r.fastest == "nvlink" and r.slowest == "network"
    assert r.links[0].share_of_step < r.links[1].share_of_step


def test_one_gpu_exchanges_nothing() -> None:
    r = all_reduce_comparison("llama-3.1-8b", "bf16", 1, ["nvlink"])
    assert r.links[0].seconds == 0 and r.ratio == 1.0


def test_serving_one_sequence_is_busy_all_the_time_and_useful_for_very_little() -> None:
    one = serving_utilisation(PlanRequest(context_tokens=2048), 3.0)
    assert one.busy == 1.0
    assert one.useful_compute < 0.01
    assert one.binds == "memory-bandwidth"
    many = serving_utilisation(PlanRequest(context_tokens=2048, batch_size=64), 3.0)
    assert many.useful_compute > 10 * one.useful_compute
    assert many.usd_per_million_tokens < one.usd_per_million_tokens / 10


def test_a_million_tokens_cost_the_gpu_hours_they_take() -> None:
    u = serving_utilisation(PlanRequest(context_tokens=2048), 3.0)
    hours = 1e6 / u.tokens_per_second / 3600
    assert u.usd_per_million_tokens == pytest.approx(3.0 * hours, rel=1e-12)  # float rounding only


def test_decode_on_one_h100_is_bandwidth_bound_at_208_tokens_a_second() -> None:
    # engine-cases.md case 11 reads all 16.06 GB (195.5 tokens/s); a step reads one row of the 1.05 GB
    # embedding table a token, so (15.01 + 1.07) GB ÷ 3.35 TB/s = 4.80 ms → 208 tokens/s, 1 %
    h100 = gpu_limits(PlanRequest())
    assert h100.fits and h100.binds == "memory-bandwidth"
    assert h100.tokens_per_second == pytest.approx(208.3, rel=0.01)
    assert h100.ridge == pytest.approx(295, rel=0.01)  # case 9
    assert h100.intensity < h100.ridge


def test_the_h200s_bandwidth_speeds_decode_while_its_same_compute_does_not() -> None:
    by_id = {g.gpu: g for g in compare_gpus(PlanRequest())}
    h100, h200 = by_id["h100"], by_id["h200"]
    # the same peak FLOPS on both: float rounding only
    assert h200.compute_seconds == pytest.approx(h100.compute_seconds, rel=1e-9)
    assert h200.tokens_per_second / h100.tokens_per_second == pytest.approx(4.8 / 3.35, rel=1e-9)  # float rounding only


def test_llama_70b_in_bf16_does_not_fit_one_h100() -> None:
    r = gpu_limits(PlanRequest(model="llama-3.1-70b"))
    assert not r.fits and r.needed_bytes > 141e9


def test_a_dgx1_at_full_power_for_a_day_uses_244_8_kwh() -> None:
    # engine-cases.md case 18: 10.2 kW × 24 h, the rating: the upper bound the widget shows
    day = facility(FacilityRequest(nodes=1, load=1.0, days=1))
    assert day.max_energy_kwh == pytest.approx(244.8, abs=1e-9)
    # busy, it draws what an 8-GPU H100 node was measured at while training, 8.4 kW (app.engine.power)
    assert day.energy_kwh == pytest.approx(8.4 * 24, rel=1e-9)


def test_four_nodes_overflow_a_15_kw_room() -> None:
    r = facility(FacilityRequest(nodes=4, load=1.0, room_kw=15))
    assert r.fits_room is False
    assert r.watts == pytest.approx(33_600) and r.over_watts == pytest.approx(18_600)
    assert r.nodes_room_holds == 1
    # Learner walk I4: the energy is what the room lets run (one node), not four nodes it cannot feed
    assert r.running_nodes == 1 and r.energy_kwh == pytest.approx(8.4 * 720, rel=1e-9)


def test_a_month_at_70_percent_costs_and_emits_in_proportion() -> None:
    r = facility(FacilityRequest(nodes=1, load=0.7, days=30, price_per_kwh=0.15, kg_co2_per_kwh=0.4))
    assert r.max_energy_kwh == pytest.approx(7344, rel=1e-9)  # datasheet figures multiplied: float rounding only
    kwh = node_watts(0.7) * 720 / 1000  # the one power rule at 70 % busy
    assert r.energy_kwh == pytest.approx(kwh, rel=1e-9)  # float rounding only
    assert r.cost_usd == pytest.approx(kwh * 0.15, rel=1e-9)  # float rounding only
    assert r.co2_kg == pytest.approx(kwh * 0.4, rel=1e-9)  # float rounding only
    assert r.fits_room is None and r.nodes_room_holds is None
