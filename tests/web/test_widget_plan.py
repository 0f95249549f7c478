"""The plan widget over HTTP: verdict, per-GPU breakdown, the panel, Launch refused identically, fixes."""

from __future__ import annotations

import re
from urllib.parse import parse_qs, urlsplit

from fastapi.testclient import TestClient

HX = {"HX-Request": "true"}
FLAGSHIP = "/lessons/what-ai-workloads-need"
LLAMA_70B = "model=llama-3.1-70b&precision=bf16&gpus=1&batch_size=1&context_tokens=8192"
TRAIN_8B = "model=llama-3.1-8b&mode=train&gpus=1&sharding=none&context_tokens=8192&launch=true"


def panel_used(html: str, gpu: int) -> int:
    match = re.search(rf'data-gpu="{gpu}" data-used="(\d+)"', html)
    assert match, f"no GPU {gpu} in the panel"
    return int(match.group(1))


def test_llama_8b_served_on_one_gpu_takes_about_19_of_80_gb(client: TestClient) -> None:
    r = client.get("/widgets/plan?model=llama-3.1-8b&gpus=1&context_tokens=8192", headers=HX)
    assert r.status_code == 200
    assert "Fits:" in r.text and "19.03 GB</span> of 80 GB on GPU 0" in r.text
    assert 'data-part="weights"' in r.text and "16.06 GB" in r.text
    assert "Time to first token" in r.text and "tokens/s" in r.text


def test_the_panel_shows_the_plan_on_the_gpus_it_uses(client: TestClient) -> None:
    r = client.get("/widgets/plan?model=llama-3.1-70b&gpus=2", headers=HX)
    assert 'id="dgx-panel"' in r.text and 'hx-swap-oob="true"' in r.text
    assert panel_used(r.text, 0) == panel_used(r.text, 1) > 70e9
    assert panel_used(r.text, 2) == 0
    assert 'data-fits="true"' in r.text


def test_an_overflowing_plan_names_the_gpu_by_how_much_and_why(client: TestClient) -> None:
    r = client.get(f"/widgets/plan?{LLAMA_70B}", headers=HX)
    assert "Does not fit:" in r.text
    assert 'class="why" data-overflow="0"' in r.text
    assert "GPU 0 needs 145.8 GB but holds 80 GB: 65.8 GB too much." in r.text
    assert "Its largest part: weights" in r.text
    assert "No time estimate" in r.text and "Time to first token" not in r.text
    assert "Each decode step reads" not in r.text  # no speed for a plan that cannot run


def total(html: str) -> str:
    match = re.search(r'data-value="total">([\d.,]+ GB)', html)
    assert match, "no total in the result"
    return match.group(1)


def test_changing_an_input_changes_the_numbers(client: TestClient) -> None:
    one = client.get("/widgets/plan?model=llama-3.1-8b&batch_size=1", headers=HX).text
    many = client.get("/widgets/plan?model=llama-3.1-8b&batch_size=8", headers=HX).text
    assert total(one) == "19.03 GB" and total(many) != total(one)
    assert panel_used(many, 0) > panel_used(one, 0)


def test_launch_is_refused_before_anything_starts_and_identically_every_time(client: TestClient) -> None:
    first = client.get(f"/widgets/plan?{TRAIN_8B}&launched=true", headers=HX)
    second = client.get(f"/widgets/plan?{TRAIN_8B}&launched=true", headers=HX)
    assert first.status_code == second.status_code == 200
    assert first.text == second.text
    assert 'data-launch="refused"' in first.text
    # 185.0 GB since issue 12 (was 510.4, with the attention scores stored).
    assert "Launch refused before anything started. GPU 0 needs 185.0 GB but holds 80 GB" in first.text
    assert 'data-overflow="0"' in first.text  # the panel shows the overflow


def test_launch_of_a_plan_that_fits_is_accepted(client: TestClient) -> None:
    fits = "model=llama-3.1-8b&mode=train&gpus=8&sharding=zero3&activation_checkpointing=true&launch=true"
    r = client.get(f"/widgets/plan?{fits}&launched=true", headers=HX)
    assert 'data-launch="started"' in r.text and "Launch accepted" in r.text


def test_without_launch_pressed_there_is_no_launch_outcome(client: TestClient) -> None:
    r = client.get(f"/widgets/plan?{TRAIN_8B}", headers=HX)
    assert "launch-outcome" not in r.text


def test_the_launch_button_works_without_javascript(client: TestClient) -> None:
    page = client.get(f"/widgets/plan?{TRAIN_8B}").text
    assert re.search(r'<noscript>.*name="launched" value="true">Launch</button>.*</noscript>', page, re.S)
    refused = client.get(f"/widgets/plan?{TRAIN_8B}&launched=true")
    assert refused.status_code == 200 and "Launch refused before anything started" in refused.text


def test_fixes_are_links_that_apply_the_smallest_changes(lessons_client: TestClient) -> None:
    page = lessons_client.get(f"{FLAGSHIP}/14").text
    links = re.findall(r'<a class="button fix" href="([^"]+)"[^>]*data-fix="([^"]+)">([^<]+)</a>', page)
    by_field = {fields: (href.replace("&amp;", "&"), text) for href, fields, text in links}
    assert set(by_field) == {"precision", "gpus"}
    fewer_bits, fp8_text = by_field["precision"]
    more_gpus, gpus_text = by_field["gpus"]
    assert parse_qs(urlsplit(fewer_bits).query)["w1.precision"] == ["fp8"] and "fp8" in fp8_text
    assert parse_qs(urlsplit(more_gpus).query)["w1.gpus"] == ["2"] and "2 GPUs" in gpus_text
    assert urlsplit(more_gpus).path == f"{FLAGSHIP}/14"
    applied = lessons_client.get(more_gpus).text
    assert "Fits:" in applied and 'data-fits="true"' in applied
    assert panel_used(applied, 1) > 0


def test_knobs_choose_which_controls_show_and_the_rest_ride_along_hidden(client: TestClient) -> None:
    few = client.get("/widgets/plan?knobs=model,gpus").text
    assert 'id="w1-gpus"' in few and 'id="w1-model"' in few
    assert 'id="w1-mfu"' not in few and '<input type="hidden" name="mfu" value="">' in few
    every = client.get("/widgets/plan?knobs=all").text
    for knob in (
        "model",
        "mode",
        "precision",
        "kv_precision",
        "gpus",
        "sharding",
        "batch_size",
        "context_tokens",
        "prompt_tokens",
        "output_tokens",
        "train_tokens",
        "optimizer",
        "activation_checkpointing",
        "mfu",
    ):
        assert f'id="w1-{knob}"' in every, knob


def test_playground_shows_every_knob(lessons_client: TestClient) -> None:
    page = lessons_client.get(f"{FLAGSHIP}/21").text
    assert page.count('id="w1-') >= 14 and 'id="w1-activation_checkpointing"' in page


def test_a_gpu_count_below_one_gets_its_message_beside_the_field(client: TestClient) -> None:
    r = client.get("/widgets/plan?gpus=0", headers=HX)
    assert r.status_code == 422
    assert re.search(r'id="w1-gpus-error" hx-swap-oob="true">Must be at least 1', r.text)
    assert "Not updated: fix the field above" in r.text and "Traceback" not in r.text


def test_integer_weights_for_training_are_refused_beside_the_precision(client: TestClient) -> None:
    r = client.get("/widgets/plan?mode=train&precision=int4", headers=HX)
    assert r.status_code == 422
    assert re.search(
        r'id="w1-precision-error" hx-swap-oob="true">Training needs fp32, bf16, fp16 or fp8', r.text
    )


def test_an_unknown_model_or_knob_is_explained(client: TestClient) -> None:
    model = client.get("/widgets/plan?model=gpt-9", headers=HX)
    assert model.status_code == 422 and "Unknown model &#39;gpt-9&#39;" in model.text
    knob = client.get("/widgets/plan?knobs=model,warp", headers=HX)
    assert knob.status_code == 422 and "Unknown knob warp" in knob.text


def test_an_update_inside_a_lesson_puts_what_differs_from_the_lesson_in_the_url(lessons_client: TestClient) -> None:
    form = "model=llama-3.1-70b&precision=bf16&mode=serve&gpus=4&batch_size=1&context_tokens=8192&predict=true"
    r = lessons_client.get(f"/widgets/plan?{form}&w=2&lesson=what-ai-workloads-need&step=1", headers=HX)
    share = urlsplit(r.headers["X-Share-Url"])
    assert share.path == f"{FLAGSHIP}/1" and share.fragment == "w2"
    assert parse_qs(share.query) == {"w2.model": ["llama-3.1-70b"], "w2.gpus": ["4"]}


def test_each_update_is_announced_politely(client: TestClient) -> None:
    r = client.get("/widgets/plan?model=llama-3.1-70b", headers=HX)
    assert re.search(
        r'<p id="w1-announce" hx-swap-oob="innerHTML">Does not fit: each GPU would need 145.78 GB', r.text
    )
    page = client.get("/widgets/plan").text
    assert re.search(r'id="w1-announce" role="status" aria-live="polite"', page)


def test_the_breakdown_chart_has_a_text_twin(client: TestClient) -> None:
    r = client.get("/widgets/plan?model=llama-3.1-70b", headers=HX).text
    assert re.search(r'<svg class="plan-bar"[^>]+role="img" aria-labelledby="w1-bar-caption"', r)
    assert "Weights 141.11 GB" in r and "65.78 GB more than fits" in r
    assert "<table" in r and "GB on one GPU" in r
