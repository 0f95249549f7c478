"""Laws the engine obeys for every model and plan, checked with hypothesis (derandomized)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from app.engine.compute import inference_flops
from app.engine.hardware import get_gpu, peak_flops
from app.engine.memory import QUANTIZED, bytes_per_parameter, kv_cache_bytes, per_gpu, weight_bytes
from app.engine.models import Architecture, get_model
from app.engine.plan import PlanRequest, make_plan
from app.engine.serving_run import ServingRun, simulate_serving
from app.engine.training_run import TrainingRun, simulate_training
from app.engine.units import BITS_PER_PRECISION, PRECISIONS
from app.engine.workload import split_counts
from tests.unit.engine.engine_strategies import LAW, architectures, models, requests

ORDERED = sorted(PRECISIONS, key=lambda p: BITS_PER_PRECISION[p])
CHECKPOINTING = ["none", "selective", "full"]


@LAW
@given(req=requests(), more=st.integers(1, 4096))
def test_more_gpus_never_need_more_memory_per_gpu(req: PlanRequest, more: int) -> None:
    """Serving compares with a larger count that still splits the heads (a request the engine accepts)."""
    if req.mode == "serve":
        larger = [n for n in split_counts(req.architecture) if n > req.gpus] or [req.gpus]
        gpus = larger[more % len(larger)]
    else:
        gpus = min(req.gpus + more, 65_536)
    bigger = PlanRequest.model_validate({**dict(req), "gpus": gpus})
    assert per_gpu(bigger).total <= per_gpu(req).total


@LAW
@given(req=requests(mode="train"), a=st.sampled_from(CHECKPOINTING), b=st.sampled_from(CHECKPOINTING))
def test_more_checkpointing_never_keeps_more_activations(req: PlanRequest, a: str, b: str) -> None:
    lighter, heavier = sorted((a, b), key=CHECKPOINTING.index)
    light = per_gpu(req.model_copy(update={"activation_checkpointing": lighter}))
    heavy = per_gpu(req.model_copy(update={"activation_checkpointing": heavier}))
    assert heavy.activations <= light.activations and heavy.total <= light.total
    assert heavy.loss_head == light.loss_head  # checkpointing wraps the blocks, not the loss head


@LAW
@given(arch=architectures(), narrow=st.sampled_from(ORDERED), wide=st.sampled_from(ORDERED))
def test_more_bits_never_need_fewer_bytes_for_any_architecture(arch: Architecture, narrow: str, wide: str) -> None:
    """Real checkpoints keep some parts 16-bit; still, a wider format never takes fewer bytes."""
    if BITS_PER_PRECISION[narrow] < BITS_PER_PRECISION[wide]:
        assert weight_bytes(arch, narrow) <= weight_bytes(arch, wide)


@LAW
@given(model=models, narrow=st.sampled_from(ORDERED), wide=st.sampled_from(ORDERED))
def test_more_bits_never_need_fewer_bytes(model: str | Architecture, narrow: str, wide: str) -> None:
    if BITS_PER_PRECISION[narrow] < BITS_PER_PRECISION[wide]:
        arch = get_model(model)
        assert weight_bytes(arch, narrow) <= weight_bytes(arch, wide)
        assert kv_cache_bytes(arch, narrow, 4096) <= kv_cache_bytes(arch, wide, 4096)
        narrow_plan = PlanRequest(model=model, precision=narrow, kv_precision=narrow)
        wide_plan = PlanRequest(model=model, precision=wide, kv_precision=wide)
        assert per_gpu(narrow_plan).total <= per_gpu(wide_plan).total


@LAW
@given(req=requests(mode="serve"), longer=st.integers(1, 1_000_000))
def test_a_longer_context_never_needs_a_smaller_kv_cache(req: PlanRequest, longer: int) -> None:
    more = req.model_copy(update={"context_tokens": req.context_tokens + longer})
    assert per_gpu(more).kv_cache >= per_gpu(req).kv_cache


@LAW
@given(req=requests(), smaller=st.integers(1, 255))
def test_a_plan_that_fits_still_fits_with_a_smaller_batch(req: PlanRequest, smaller: int) -> None:
    if make_plan(req).fits:
        less = req.model_copy(update={"batch_size": max(1, req.batch_size - smaller)})
        assert make_plan(less).fits


@LAW
@given(req=requests(mode="serve"))
def test_decode_never_beats_reading_the_weights_it_needs(req: PlanRequest) -> None:
    """Dense: every weight byte each step but the embedding rows no token looks up (stored in 16 bits when
    quantized); a mixture of experts: at least the routed experts' share of the expert bytes."""
    plan = make_plan(req)
    arch, gpu = req.architecture, get_gpu(req.gpu)
    row_bytes = 2 if req.precision in QUANTIZED else bytes_per_parameter(req.precision)
    unused_rows = 0 if arch.tied_embeddings else max(0, arch.vocab - req.batch_size) * arch.hidden
    experts = arch.layers * arch.experts * arch.expert_parameters if arch.experts > 1 else 0
    idle_experts = experts * bytes_per_parameter(req.precision) * (1 - arch.experts_per_token / arch.experts)
    needed = (weight_bytes(arch, req.precision) - unused_rows * row_bytes - idle_experts) / req.gpus
    assert plan.serve is not None
    assert plan.serve.decode_seconds_per_token >= needed / gpu.bandwidth * (1 - 1e-6)


@LAW
@given(arch=architectures(), batch=st.integers(1, 64))
def test_a_mixture_of_experts_holds_every_expert_but_decodes_with_the_active_ones(
    arch: Architecture, batch: int
) -> None:
    plan = make_plan(PlanRequest(model=arch, batch_size=batch, mfu=1.0))
    assert plan.per_gpu.weights >= arch.parameters * 2
    flops = inference_flops(arch.active_parameters, batch)
    step_compute = flops / peak_flops(get_gpu("h100"), "bf16")
    assert plan.serve is not None and plan.serve.decode_seconds_per_token >= step_compute * (1 - 1e-9)
    if arch.experts > arch.experts_per_token:
        assert arch.active_parameters < arch.parameters


@LAW
@given(req=requests())
def test_min_gpus_is_the_edge_where_the_plan_starts_to_fit(req: PlanRequest) -> None:
    """Training: the first count that fits. Serving: the first count that fits and splits the heads evenly (a
    count a learner can launch), so every count below it either does not fit or does not divide the heads."""
    fewest = make_plan(req).min_gpus
    heads = req.architecture.heads
    if fewest is not None:
        assert make_plan(req.model_copy(update={"gpus": fewest})).fits
        if req.mode == "serve":
            assert heads % fewest == 0
        for fewer in range(max(1, fewest - 64), fewest):
            if req.mode == "train" or heads % fewer == 0:
                assert not make_plan(req.model_copy(update={"gpus": fewer})).fits


@LAW
@given(req=requests())
def test_a_plan_fits_exactly_when_its_total_is_within_capacity(req: PlanRequest) -> None:
    plan = make_plan(req)
    assert plan.fits == (plan.per_gpu.total <= plan.per_gpu.capacity)
    assert (plan.bottleneck == "capacity") == (not plan.fits)
    assert plan.explanation and all(s.strip() for s in plan.explanation)


@LAW
@given(req=requests(mode="serve"))
def test_a_batch_never_serves_fewer_tokens_than_one_sequence(req: PlanRequest) -> None:
    serve = make_plan(req).serve
    assert serve is not None
    assert serve.throughput_tokens_per_second >= serve.tokens_per_second * (1 - 1e-9)
    assert serve.request_seconds >= serve.prefill_seconds


@LAW
@given(seed=st.integers(0, 2**32), elapsed=st.floats(0, 1e7), rate=st.floats(0.01, 500))
def test_simulations_give_identical_states_for_identical_inputs(
    seed: int, elapsed: float, rate: float
) -> None:
    training = TrainingRun(train_tokens=1e10)
    serving = ServingRun(arrival_rate=rate)
    assert simulate_training(training, seed, elapsed) == simulate_training(training, seed, elapsed)
    assert simulate_serving(serving, seed, elapsed) == simulate_serving(serving, seed, elapsed)


@LAW
@given(seed=st.integers(0, 1000), early=st.floats(0, 1e6), later=st.floats(0, 1e6))
def test_a_training_run_only_moves_forward(seed: int, early: float, later: float) -> None:
    run = TrainingRun(train_tokens=1e10)
    a, b = simulate_training(run, seed, early), simulate_training(run, seed, early + later)
    assert a.tokens_done <= b.tokens_done and a.eta_seconds >= b.eta_seconds
    assert a.checkpoints_written <= b.checkpoints_written


@LAW
@given(seed=st.integers(0, 1000), rate=st.floats(30, 1000), early=st.integers(120, 10_000))
def test_past_saturation_the_queue_and_ttft_grow_without_bound(seed: int, rate: float, early: int) -> None:
    run = ServingRun(arrival_rate=rate)
    a, b = simulate_serving(run, seed, early), simulate_serving(run, seed, 10 * early)
    assert a.saturated and b.queue > a.queue and b.ttft_seconds > a.ttft_seconds
