"""The live training run over HTTP: start, poll, pause, finish (HTTP 286 stops polling), reload, starve."""

from __future__ import annotations

import html as markup
import math
import re
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest
from fastapi.testclient import TestClient

from app.engine.compute import training_model_flops
from app.engine.hardware import get_gpu, peak_flops
from app.engine.models import get_model
from app.engine.plan import Plan, make_plan
from app.engine.text import gb, num, pct, plural
from app.engine.training_run import RUN_CHECKPOINTING, RUN_SEQUENCE_TOKENS, TrainingRun, loss_at
from app.main import create_app
from app.widgets._fields import MODEL_OPTIONS
from app.widgets.training_run import GPU_CHOICES
from tests.conftest import make_settings
from tests.web.live_clock import Clock, clock_fixture

__all__ = ["clock_fixture"]

HX = {"HX-Request": "true"}
URL = "/widgets/training-run?play_seconds=20&w=1&lesson=what-ai-workloads-need&step=5"




def value(html: str, key: str) -> str:
    found = re.search(rf'data-value="{key}">([^<]*)<', html)
    assert found, f"no {key} in the result"
    return found.group(1)


def state(response_html: str) -> dict[str, str]:
    return dict(re.findall(r'<input type="hidden" name="(started_at|elapsed|run_of|segments)" value="([^"]*)">',
                           response_html))


def start(client: TestClient, clock: Clock, extra: str = "") -> dict[str, str]:
    r = client.get(URL + extra + "&action=start", headers=HX)
    assert r.status_code == 200
    return state(r.text)


def poll(client: TestClient, s: dict[str, str], extra: str = "") -> tuple[int, str]:
    q = "&".join(f"{k}={v}" for k, v in s.items())
    r = client.get(f"{URL}{extra}&{q}", headers=HX)
    return r.status_code, r.text


# 8 H100s at 40 % MFU ÷ the model FLOPs of a token (6·N plus causal attention at 8,192 tokens)
GPU_RATE = 8 * 989e12 * 0.4 / training_model_flops(get_model("llama-3.1-8b"), 1, 8192)


def test_step_5_shows_a_run_ready_to_start_with_its_maths(lessons_client: TestClient, clock: Clock) -> None:
    page = lessons_client.get("/lessons/what-ai-workloads-need/5").text
    assert "Start the run" in page and 'data-status="ready"' in page
    # model FLOPs (6·N·D plus attention at 8,192 tokens) and the GPUs' pace at 40 % MFU
    assert "5.5 × 10¹⁹ FLOPs" in page and num(GPU_RATE) in page
    assert 'hx-trigger="every 500ms"' not in page  # nothing polls before the start


def test_start_records_the_start_time_and_polls_every_half_second(client: TestClient, clock: Clock) -> None:
    r = client.get(URL + "&action=start", headers=HX)
    assert r.status_code == 200
    assert 'hx-trigger="every 500ms"' in r.text and ">Pause</button>" in r.text
    assert state(r.text)["started_at"] == "1000000.000"
    url = parse_qs(urlsplit(r.headers["X-Share-Url"]).query)
    assert url["w1.started_at"] == ["1000000.000"] and "w1.action" not in url  # a reload does not press Start again


def test_progress_and_simulated_time_move_with_the_clock(client: TestClient, clock: Clock) -> None:
    s = start(client, clock)
    clock.now += 4
    _, early = poll(client, s)
    clock.now += 6
    _, later = poll(client, s)
    assert value(early, "progress") == "20 %" and value(later, "progress") == "50 %"
    assert value(early, "tokens-per-second") == num(GPU_RATE)


def test_the_run_stops_at_its_end_with_http_286(client: TestClient, clock: Clock) -> None:
    s = start(client, clock)
    clock.now += 25
    status, html = poll(client, s)
    assert status == 286  # htmx stops polling
    assert 'data-status="finished"' in html and "hx-trigger" not in html and ">Run again</button>" in html
    assert value(html, "progress") == "100 %" and value(html, "checkpoints").startswith("5 × 112 GB")


def test_pause_answers_286_and_freezes_the_run(client: TestClient, clock: Clock) -> None:
    s = start(client, clock)
    clock.now += 5
    status, paused = poll(client, s, "&action=pause")
    assert status == 286 and 'data-status="paused"' in paused and "hx-trigger" not in paused
    frozen = state(paused)
    clock.now += 1000
    status, still = poll(client, frozen)
    assert status == 286 and value(still, "progress") == value(paused, "progress") == "25 %"


def test_resume_continues_where_the_run_paused(client: TestClient, clock: Clock) -> None:
    s = start(client, clock)
    clock.now += 5
    _, paused = poll(client, s, "&action=pause")
    clock.now += 500
    status, resumed = poll(client, state(paused), "&action=start")
    assert status == 200 and ">Pause</button>" in resumed
    clock.now += 5
    _, later = poll(client, state(resumed))
    assert value(later, "progress") == "50 %"


def test_a_slow_loader_starves_the_gpus_and_the_panel_shows_it(client: TestClient, clock: Clock) -> None:
    s = start(client, clock, "&loader_samples_per_second=4")
    clock.now += 2
    _, html = poll(client, s, "&loader_samples_per_second=4")
    assert value(html, "tokens-per-second") == "32,768"  # 4 sequences × 8,192 tokens
    busy = f"{32_768 / GPU_RATE:.0%}".replace("%", " %")  # the loader's share of what the GPUs take
    assert value(html, "utilisation") == busy and 'data-starved="true"' in html
    assert "waiting on the data loader" in html and f'<span class="gpu-util">{busy} busy' in html


def test_changing_a_setting_while_running_continues_the_run(client: TestClient, clock: Clock) -> None:
    s = start(client, clock)
    clock.now += 10
    _, html = poll(client, s, "&mfu=0.3")  # issue 13, item 3: only Reset starts again
    assert value(html, "progress") != "0 %" and state(html)["started_at"] == "1000000.000"


def test_a_new_gpu_count_starts_a_new_run_and_says_so(client: TestClient, clock: Clock) -> None:
    s = start(client, clock)
    clock.now += 10
    _, html = poll(client, s, "&gpus=4")  # another checkpoint layout and write time: a real job restarts too
    assert 'data-status="ready"' in html and value(html, "progress") == "0 %"
    assert "A new model, GPU count or seed starts a new run." in html


def test_a_run_that_does_not_fit_cannot_start(client: TestClient, clock: Clock) -> None:
    r = client.get(URL + "&gpus=1", headers=HX)
    assert "This run cannot start" in r.text and "GPU 0 needs" in r.text
    assert re.search(r'id="w1-run-main" name="action" value="start" disabled', r.text)
    assert 'data-fits="false"' in r.text  # the panel shows the overflow


@pytest.mark.parametrize(("query", "field", "message"), [
    ("tokens=lots", "tokens", "Enter a number"),
    ("mfu=2", "mfu", "Must be at most 1"),
    ("gpus=3", "gpus", "Choose one of: 1, 2, 4, 8, 16, 32, 64"),
    ("loader_samples_per_second=0", "loader_samples_per_second", "Must be at least 0.1"),
    ("started_at=-5", "started_at", "Must be at least 0"),
])
def test_bad_input_is_refused_beside_its_field(client: TestClient, clock: Clock, query: str, field: str,
                                               message: str) -> None:
    r = client.get(f"{URL}&{query}", headers=HX)
    assert r.status_code == 422 and "Not updated: fix the field above" in r.text
    assert re.search(rf'id="w1-{field}-error" hx-swap-oob="true">{message}', r.text)


def test_every_error_slot_the_response_fills_exists_on_the_page(lessons_client: TestClient, clock: Clock) -> None:
    page = lessons_client.get("/lessons/what-ai-workloads-need/5").text
    fragment = lessons_client.get(URL + "&tokens=lots", headers=HX).text
    for slot in re.findall(r'id="(w1-[a-z_]+-error)" hx-swap-oob', fragment):
        assert f'id="{slot}"' in page, slot


def test_the_same_settings_and_start_time_give_the_same_page_in_a_fresh_app(tmp_path: Path, clock: Clock) -> None:
    query = URL + "&loader_samples_per_second=20&seed=7&started_at=999990&run_of="
    pages = []
    for name in ("a", "b"):
        with TestClient(create_app(make_settings(tmp_path / name))) as fresh:
            pages.append(fresh.get(query, headers=HX).text)
    assert pages[0] == pages[1]
    assert 'data-status="running"' in pages[0]


def test_a_reload_of_the_shared_url_resumes_the_run(lessons_client: TestClient, clock: Clock) -> None:
    r = lessons_client.get(URL + "&action=start", headers=HX)
    clock.now += 8
    page = lessons_client.get(r.headers["X-Share-Url"])
    assert page.status_code == 200
    assert 'data-status="running"' in page.text and 'hx-trigger="every 500ms"' in page.text
    assert value(page.text, "progress") == "40 %"


def test_without_javascript_start_submits_the_form_and_the_page_shows_the_run(lessons_client: TestClient,
                                                                              clock: Clock) -> None:
    page = lessons_client.get("/lessons/what-ai-workloads-need/5").text
    assert re.search(r'action="/lessons/what-ai-workloads-need/5" method="get"', page)
    running = lessons_client.get("/lessons/what-ai-workloads-need/5?w=1&action=start").text
    assert 'data-status="running"' in running and ">Pause</button>" in running


# Learner walk 2026-12-04, W13-W15 (fixed in 21e3878): what the learner reads of the loss, a barely starved loader
# and a refused run's advice, each figure from the engine.

def _text(html: str) -> str:
    return re.sub(r"\s+", " ", markup.unescape(re.sub(r"<[^>]+>", " ", html))).strip()


def _caption(html: str) -> str:
    found = re.search(r"<figcaption[^>]*>([^<]*)<", html)
    assert found, "no loss chart caption"
    return found.group(1)


def test_w13_the_loss_tile_and_the_curve_start_from_the_same_ln_vocab(client: TestClient, clock: Clock) -> None:
    vocab = get_model("llama-3.1-8b").vocab
    start_loss = f"{math.log(vocab):.2f}"  # an untrained model's even guess among its tokens: 11.76
    assert start_loss == f"{loss_at(get_model('llama-3.1-8b').parameters, 0, vocab):.2f}" == "11.76"
    before = client.get(URL, headers=HX).text
    assert 'data-status="ready"' in before and value(before, "loss") == start_loss
    assert "No loss yet" in _caption(before)
    s = start(client, clock)
    _, at_start = poll(client, s)
    assert value(at_start, "loss") == start_loss
    clock.now += 4
    _, running = poll(client, s)
    caption = _caption(running)
    assert caption.startswith(f"Loss fell from {start_loss} at the start"), caption
    assert f"guessing evenly among its {vocab:,} tokens" in caption
    assert float(value(running, "loss")) < float(start_loss)  # and the tile has moved down the same curve


def _gpus_share(mfu: float) -> float:
    """Sequences a second the 8 H100s of step 5 take at this MFU (bf16 peak ÷ a sequence's model FLOPs)."""
    sequence = training_model_flops(get_model("llama-3.1-8b"), RUN_SEQUENCE_TOKENS, RUN_SEQUENCE_TOKENS)
    return 8 * peak_flops(get_gpu("h100"), "bf16") * mfu / sequence


def test_w14_a_barely_starved_run_says_it_waits_a_little_to_a_decimal(client: TestClient, clock: Clock) -> None:
    loader = 3.53  # the walk's loader, just under the 3.54 sequences a second the GPUs eat at 20 % MFU
    extra = f"&mfu=0.2&loader_samples_per_second={loader}"
    wait = 1 - loader / _gpus_share(0.2)
    assert 0 < wait < 0.005  # under half a per cent: a whole-number share would read "0 %"
    s = start(client, clock, extra)
    clock.now += 2
    _, html = poll(client, s, extra)
    callout = re.search(r'data-starved="true">(.*?)</p>', html, flags=re.S)
    assert callout, "a loader under the GPUs' pace is not called out"
    said = _text(callout.group(1))
    assert said.startswith("The GPUs wait, but only a little.") and "starved" not in said
    assert f"they wait {pct(wait, 1)} of the time" in said and pct(wait, 1) == "0.2 %"
    assert not re.search(r"wait 0 %", said)
    assert value(html, "utilisation") == pct(1 - wait, 1)  # 99.8 %, not a rounded 100 % beside "wait"
    assert f"({num(_gpus_share(0.2), 1)} sequences a second)" in said


def test_w14_a_starved_run_is_still_called_starved(client: TestClient, clock: Clock) -> None:
    extra = "&loader_samples_per_second=4"
    s = start(client, clock, extra)
    clock.now += 2
    _, html = poll(client, s, extra)
    wait = 1 - 4 / _gpus_share(0.4)
    assert "<strong>The GPUs are starved.</strong>" in html and f"they wait {pct(wait)} of the time" in html


def _plan(model: str, gpus: int) -> Plan:
    """The engine's own plan of the widget's run: ZeRO-3, one 8,192-token sequence a GPU, its checkpointing."""
    run = TrainingRun(model=model, gpus=gpus, sharding="zero3", batch_size=1, context_tokens=RUN_SEQUENCE_TOKENS,
                      activation_checkpointing=RUN_CHECKPOINTING)
    return make_plan(run.plan_request())


def _holds(model: str, gpus: int) -> bool:
    return _plan(model, gpus).fits


def _refusal(client: TestClient, model: str, gpus: int) -> str:
    html = client.get(f"{URL}&model={model}&gpus={gpus}", headers=HX).text
    found = re.search(r"data-refusal>(.*?)</p>", html, flags=re.S)
    assert found, f"{model} on {gpus} GPUs is not refused"
    return _text(found.group(1))


def test_w15_70b_on_64_gpus_says_more_gpus_would_not_help_and_names_what_would(client: TestClient,
                                                                              clock: Clock) -> None:
    assert not _holds("llama-3.1-70b", GPU_CHOICES[-1]) and GPU_CHOICES[-1] == 64  # the largest count offered
    need = _plan("llama-3.1-70b", 64).per_gpu.total
    said = _refusal(client, "llama-3.1-70b", 64)
    assert said.startswith(f"This run cannot start: GPU 0 needs {gb(need, 1)}")  # 141.6 GB
    assert "More GPUs would not help: ZeRO-3 shares" in said and f"so each needs {gb(need, 1)}" in said
    assert "Pick a smaller model" in said and "Pick more GPUs" not in said
    assert any(_holds(m, 64) for m, _ in MODEL_OPTIONS)  # and a smaller model the widget offers does run


def test_w15_every_refused_run_names_the_fewest_gpus_that_hold_it_or_says_none_do(client: TestClient,
                                                                                   clock: Clock) -> None:
    named = hopeless = 0
    for model, _ in MODEL_OPTIONS:
        for gpus in (n for n in GPU_CHOICES if not _holds(model, n)):
            said = _refusal(client, model, gpus)
            holding = [n for n in GPU_CHOICES if n > gpus and _holds(model, n)]
            if holding:
                assert f"{plural(holding[0], 'GPU')} hold it; pick at least that many" in said, (model, gpus, said)
                named += 1
            else:
                assert "More GPUs would not help" in said and "Pick a smaller model" in said, (model, gpus, said)
                assert not re.search(r"\b\d+ GPUs? hold it", said)
                hopeless += 1
    assert named and hopeless  # the 8B on 1 GPU ("4 GPUs hold it") and the 70B on 64 are both met
    assert "4 GPUs hold it" in _refusal(client, "llama-3.1-8b", 1)


def test_w16_step_5_reads_as_training_from_scratch_beside_a_curve_from_an_untrained_model(
    lessons_client: TestClient, clock: Clock
) -> None:
    page = lessons_client.get("/lessons/what-ai-workloads-need/5").text
    assert "Llama 3.1 8B trained from scratch" in _text(page)
    vocab = get_model("llama-3.1-8b").vocab
    assert value(page, "loss") == f"{math.log(vocab):.2f}"  # the loss of random weights, not of Meta's model
