"""The live serving run over HTTP: arrivals, batching, saturation in words, 286 at the end and while paused."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from app.engine.serving_run import ServingRun, simulate_serving
from app.engine.text import num, seconds
from app.main import create_app
from app.widgets.serving_run import SIMULATED_SECONDS
from tests.conftest import make_settings
from tests.web.live_clock import Clock, clock_fixture

__all__ = ["clock_fixture"]

HX = {"HX-Request": "true"}
URL = "/widgets/serving-run?play_seconds=60&w=1&lesson=what-ai-workloads-need&step=8"




def value(html: str, key: str) -> str:
    found = re.search(rf'data-value="{key}"[^>]*>([^<]*)<', html)
    assert found, f"no {key} in the result"
    return found.group(1)


def hidden(html: str) -> str:
    pairs = re.findall(r'<input type="hidden" name="(started_at|elapsed|run_of)" value="([^"]*)">', html)
    return "&".join(f"{k}={v}" for k, v in pairs)


def continued(html: str) -> str:
    """The run's state fields, its stretches included: a change of setting continues from them."""
    pairs = re.findall(r'<input type="hidden" name="(started_at|elapsed|run_of|segments)" value="([^"]*)">', html)
    return "&".join(f"{k}={v}" for k, v in pairs)


def run(client: TestClient, clock: Clock, extra: str, seconds: float) -> tuple[int, str]:
    """Start the service with these settings and poll after `seconds` of wall time (5 simulated each)."""
    started = client.get(f"{URL}{extra}&action=start", headers=HX)
    assert started.status_code == 200
    clock.now += seconds
    r = client.get(f"{URL}{extra}&{hidden(started.text)}", headers=HX)
    return r.status_code, r.text


def duration(text: str) -> float:
    """'41.2 s' or '2.01 minutes' in seconds."""
    number, unit = text.split()
    return float(number) * {"µs": 1e-6, "ms": 1e-3, "s": 1, "minutes": 60, "hours": 3600}[unit]


def queue(html: str) -> float:
    return float(value(html, "queue").replace(",", ""))


def test_step_8_shows_the_service_ready_with_its_weights_resident(lessons_client: TestClient, clock: Clock) -> None:
    page = lessons_client.get("/lessons/what-ai-workloads-need/8").text
    assert "Start the service" in page and 'data-status="ready"' in page
    capacity = simulate_serving(ServingRun(arrival_rate=1, max_batch=32), 0, 0).capacity_requests_per_second
    assert "were loaded once onto 1 GPU" in page and value(page, "capacity") == f"{num(capacity, 1)} requests/s"
    assert "serving Llama 3.1 8B on 1 GPU: weights loaded, waiting for requests" in page


def test_below_capacity_the_service_keeps_up(client: TestClient, clock: Clock) -> None:
    status, html = run(client, clock, "&arrival_rate=2", 20)
    assert status == 200 and 'hx-trigger="every 500ms"' in html
    assert 'data-saturated="false"' in html and "Keeping up." in html
    snap = simulate_serving(ServingRun(arrival_rate=2, max_batch=32), 0, 100)
    assert queue(html) == 0 and value(html, "ttft") == seconds(snap.prefill_seconds)  # only its own prefill
    assert 'data-state="keeping up"' in html


def test_past_saturation_queue_and_first_token_time_keep_growing_and_it_says_so(client: TestClient,
                                                                                clock: Clock) -> None:
    _, early = run(client, clock, "&arrival_rate=12", 12)
    clock.now += 24
    later = client.get(f"{URL}&arrival_rate=12&{hidden(early)}", headers=HX).text
    assert 'data-saturated="true"' in later and "without bound" in later
    assert queue(later) > queue(early) > 0
    assert value(later, "batch") == "32.0 of 32"  # every batch slot busy
    ttft = [duration(value(h, "ttft")) for h in (early, later)]
    assert ttft[1] > ttft[0] > 1


def test_a_larger_batch_limit_raises_capacity(client: TestClient, clock: Clock) -> None:
    small = client.get(URL + "&max_batch=8", headers=HX).text
    large = client.get(URL + "&max_batch=128", headers=HX).text
    assert float(value(small, "capacity").split()[0]) < float(value(large, "capacity").split()[0])


def test_the_panel_holds_weights_and_the_reserved_kv_cache_and_shows_load(client: TestClient,
                                                                          clock: Clock) -> None:
    _, html = run(client, clock, "&arrival_rate=12", 12)
    assert 'id="dgx-panel"' in html and "serving Llama 3.1 8B on 1 GPU: saturated, the queue grows" in html
    assert '<span class="gpu-util">100 % busy' in html
    assert "kv cache" in html.lower()


def test_the_run_ends_after_five_simulated_minutes_with_286(client: TestClient, clock: Clock) -> None:
    status, html = run(client, clock, "&arrival_rate=2", 61)
    assert status == 286 and 'data-status="finished"' in html and "hx-trigger" not in html


def test_pause_answers_286(client: TestClient, clock: Clock) -> None:
    started = client.get(URL + "&action=start", headers=HX).text
    clock.now += 3
    r = client.get(f"{URL}&{hidden(started)}&action=pause", headers=HX)
    assert r.status_code == 286 and 'data-status="paused"' in r.text
    assert "paused, no new requests admitted" in r.text


def test_a_model_too_big_for_one_gpu_is_served_tensor_parallel(client: TestClient, clock: Clock) -> None:
    html = client.get(URL + "&model=llama-3.1-70b", headers=HX).text
    assert "were loaded once onto 2 GPUs" in html


def test_a_model_too_big_for_dgx1_cannot_start(client: TestClient, clock: Clock) -> None:
    html = client.get(URL + "&model=llama-3.1-405b", headers=HX).text
    assert "does not fit" in html and re.search(r'value="start" disabled', html)


@pytest.mark.parametrize(("query", "field", "message"), [
    ("arrival_rate=0", "arrival_rate", "Must be at least 0.1"),
    ("arrival_rate=many", "arrival_rate", "Enter a number"),
    ("max_batch=3", "max_batch", "Choose one of: 1, 4, 8, 16, 32, 64, 128, 256"),
    ("model=gpt-5", "model", "Unknown model"),
    ("seed=-1", "seed", "Must be at least 0"),
])
def test_bad_input_is_refused_beside_its_field(client: TestClient, clock: Clock, query: str, field: str,
                                               message: str) -> None:
    r = client.get(f"{URL}&{query}", headers=HX)
    assert r.status_code == 422
    assert re.search(rf'id="w1-{field}-error" hx-swap-oob="true">{message}', r.text)


def test_the_same_settings_and_start_time_give_the_same_page_in_a_fresh_app(tmp_path: Path, clock: Clock) -> None:
    query = URL + f"&arrival_rate=9&seed=3&started_at={clock.now - 30:.0f}&run_of="
    pages = []
    for name in ("a", "b"):
        with TestClient(create_app(make_settings(tmp_path / name))) as fresh:
            pages.append(fresh.get(query, headers=HX).text)
    assert pages[0] == pages[1] and 'data-status="running"' in pages[0]


def test_another_seed_brings_other_arrivals(client: TestClient, clock: Clock) -> None:
    started = f"&started_at={clock.now - 30:.0f}&run_of="  # half a minute into the run
    a = client.get(URL + "&arrival_rate=5&seed=1" + started, headers=HX).text
    b = client.get(URL + "&arrival_rate=5&seed=2" + started, headers=HX).text
    bars = [re.findall(r'class="bar-arrivals" d="([^"]+)"', h) for h in (a, b)]
    assert bars[0] and bars[0] != bars[1]


@pytest.mark.parametrize(("rate", "wall_seconds"), [(2.0, 20), (12.0, 12)])
def test_the_throughput_shown_is_the_engines_for_the_same_service(client: TestClient, clock: Clock, rate: float,
                                                                  wall_seconds: float) -> None:
    _, html = run(client, clock, f"&arrival_rate={rate:g}", wall_seconds)
    simulated = wall_seconds * SIMULATED_SECONDS / 60  # URL plays the run's five minutes in 60 s
    snap = simulate_serving(ServingRun(model="llama-3.1-8b", gpus=1, arrival_rate=rate, max_batch=32), 1, simulated)
    assert value(html, "throughput") == f"{num(snap.throughput_tokens_per_second)} tokens/s"
    assert snap.throughput_tokens_per_second > 0


def test_a_queue_left_from_a_burst_is_draining_not_keeping_up(client: TestClient, clock: Clock) -> None:
    """Learner walk W21: after a burst at 20 a second, lowering the rate to 2 leaves hundreds waiting; the widget
    and the panel say the queue is draining, with the wait a newcomer sees, not 'keeping up'."""
    started = client.get(f"{URL}&arrival_rate=20&action=start", headers=HX).text
    clock.now += 2  # 10 simulated seconds at 20 a second
    burst = client.get(f"{URL}&arrival_rate=20&{continued(started)}", headers=HX).text
    assert queue(burst) > 50
    lowered = client.get(f"{URL}&arrival_rate=2&{continued(burst)}", headers=HX).text
    assert 'data-state="draining"' in lowered and "Keeping up." not in lowered
    assert "Draining the queue." in lowered and "clears in about" in lowered
    assert queue(lowered) > 50 and duration(value(lowered, "ttft")) > 1
    assert "serving Llama 3.1 8B on 1 GPU: draining a queue of" in lowered


def test_a_first_token_wait_longer_than_the_run_reads_as_a_projection(client: TestClient, clock: Clock) -> None:
    """Learner walk W22: a time to first token longer than the simulated time so far is labelled a projection."""
    _, html = run(client, clock, "&arrival_rate=40", 6)
    assert duration(value(html, "ttft")) > 30
    assert "Time to first token, projected for a request arriving now" in html and 'data-projected="true"' in html
    _, calm = run(client, clock, "&arrival_rate=1", 6)
    assert "projected" not in calm.split('data-value="ttft"')[0].rsplit("<dt>", 1)[1]


def test_the_widget_and_the_panel_say_finished_together(client: TestClient, clock: Clock) -> None:
    """Learner walk W23: at the end of the replay both read 'finished', not 'finished' beside 'paused'."""
    status, html = run(client, clock, "&arrival_rate=2", 61)
    assert status == 286 and 'data-status="finished"' in html
    assert "serving Llama 3.1 8B on 1 GPU: finished" in html and "paused" not in html


@pytest.mark.parametrize("model", ["llama-3.1-8b", "llama-3.1-70b"])
def test_the_run_and_the_panel_agree_that_it_fits_at_the_batch_it_runs(
    client: TestClient, clock: Clock, model: str
) -> None:
    """Learner walk W19, W20: the 70B on 2 GPUs and the 8B at a batch limit of 256 ran while the panel said
    'does not fit'. The run now takes the batch its memory holds, says so, and the panel shows that plan fitting."""
    _, html = run(client, clock, f"&model={model}&max_batch=256&arrival_rate=30", 6)
    assert "does not fit" not in html.lower() and "Does not fit" not in html
    batch, limit = value(html, "batch").split(" of ")
    if model == "llama-3.1-70b":
        assert int(limit) < 256 and 'data-batch-limit="memory"' in html
        assert f"The batch holds at most {limit} sequences here, not 256" in html


def test_the_advice_past_saturation_names_only_controls_the_widget_has(client: TestClient, clock: Clock) -> None:
    """Learner walk W24: no 'more GPUs' as a knob here. With room in memory it suggests a larger batch limit; when
    memory already caps the batch it says only fewer arrivals help here and points to step 14 for more GPUs."""
    _, room = run(client, clock, "&arrival_rate=40&max_batch=8", 6)
    assert "a larger batch limit" in room and "more GPUs are the only way" not in room
    _, capped = run(client, clock, "&model=llama-3.1-70b&arrival_rate=40&max_batch=256", 6)
    assert "Only fewer arrivals bring it back here" in capped and "memory already caps the batch" in capped
    assert "(step 14)" in capped

