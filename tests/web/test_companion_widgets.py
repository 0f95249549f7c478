"""The companion lessons' widgets over HTTP: as the lesson renders them, updated by htmx, and refusing bad input."""

from __future__ import annotations

import re

import pytest
from fastapi.testclient import TestClient

from app.engine import collectives
from app.engine.cost import ELECTRICITY_USD_PER_KWH
from app.engine.limits import gpu_limits
from app.engine.memory import weight_bytes
from app.engine.models import get_model
from app.engine.plan import PlanRequest, make_plan
from app.engine.power import node_watts
from app.engine.text import num

HX = {"HX-Request": "true"}
SLIDES = "/lessons/what-is-gpu-infrastructure"
WORK = "/lessons/understanding-the-work"


def value(html: str, name: str) -> str:
    match = re.search(rf'data-value="{name}">([^<]*)<', html)
    assert match, f"no {name} in the response"
    return match.group(1)


# --- data-path ------------------------------------------------------------------------------------------


def test_step_3_shows_the_loader_setting_the_pace_and_gpus_busy_40_percent(lessons_client: TestClient) -> None:
    html = lessons_client.get(f"{WORK}/3").text
    assert value(html, "busy") == "GPUs busy 40 %"
    assert 'data-limit="loader"' in html
    assert re.search(r'data-stage="loader">\s*<line[^>]*/>\s*<rect', html)  # drawn as a box in the SVG
    assert "The loader is the slowest stage and sets the pace." in html  # the diagram's text twin


def test_more_loader_workers_raise_the_busy_share_until_compute_limits(client: TestClient) -> None:
    busy = []
    for workers in (4, 8, 10, 16):
        r = client.get(f"/widgets/data-path?loader_workers={workers}", headers=HX)
        assert r.status_code == 200
        busy.append(value(r.text, "busy"))
    assert busy == ["GPUs busy 40 %", "GPUs busy 80 %", "GPUs busy 100 %", "GPUs busy 100 %"]
    assert 'data-limit="compute"' in client.get("/widgets/data-path?loader_workers=16", headers=HX).text


def test_the_data_path_moves_the_dgx1_panels_utilisation(client: TestClient) -> None:
    r = client.get("/widgets/data-path?loader_workers=4", headers=HX).text
    assert 'id="dgx-panel"' in r and 'hx-swap-oob="true"' in r
    assert r.count("40 % busy") == 8  # all eight GPUs of the job wait for the loader


def test_a_slow_network_becomes_the_stage_that_limits(client: TestClient) -> None:
    r = client.get("/widgets/data-path?loader_workers=16&distributed=true&network_gb_s=0.125", headers=HX).text
    assert 'data-limit="network"' in r and "Exchanging gradients" in r


def test_a_negative_worker_count_is_refused_beside_the_field(client: TestClient) -> None:
    r = client.get("/widgets/data-path?loader_workers=-1", headers=HX)
    assert r.status_code == 422
    assert re.search(r'id="w1-loader_workers-error" hx-swap-oob="true">Must be at least 1', r.text)
    assert "Not updated: fix the field above" in r.text  # the result swaps in, marked stale


# --- slide widgets ----------------------------------------------------------------------------------------


def test_slide_2_shows_llama_70b_overflowing_one_h100(lessons_client: TestClient) -> None:
    html = lessons_client.get(f"{SLIDES}/2").text
    assert 'data-widget="memory-capacity"' in html and 'data-fits="false"' in html
    assert "Does not fit: one GPU would need 145.8 GB of 80 GB" in html


def test_spreading_llama_70b_over_two_gpus_makes_it_fit(client: TestClient) -> None:
    r = client.get("/widgets/memory-capacity?model=llama-3.1-70b&gpus=2", headers=HX)
    assert r.status_code == 200 and 'data-fits="true"' in r.text
    assert "Fits:" in value(r.text, "verdict")


def test_serving_llama_70b_on_3_gpus_is_refused_beside_the_gpus_field(client: TestClient) -> None:
    """Tensor parallel: 64 heads do not split over 3 GPUs (training, data parallel, may use 3)."""
    r = client.get("/widgets/memory-capacity?model=llama-3.1-70b&gpus=3", headers=HX)
    error = re.search(r'id="w1-gpus-error"[^>]*>([^<]*)<', r.text)
    assert r.status_code == 422 and error and "64 attention heads that cannot be cut" in error.group(1)
    assert "1, 2, 4, 8, 16, 32 or 64 GPUs" in error.group(1)
    assert client.get("/widgets/memory-capacity?model=llama-3.1-70b&gpus=3&mode=train", headers=HX).status_code == 200


def test_training_multiplies_the_footprint(client: TestClient) -> None:
    serve = client.get("/widgets/memory-capacity?model=llama-3.1-8b&mode=serve", headers=HX).text
    train = client.get("/widgets/memory-capacity?model=llama-3.1-8b&mode=train", headers=HX).text
    assert 'data-fits="true"' in serve and 'data-fits="false"' in train
    assert "optimizer state 96.4 GB" in train and "optimizer state" not in serve


def test_training_with_int4_weights_is_refused(client: TestClient) -> None:
    r = client.get("/widgets/memory-capacity?mode=train&precision=int4", headers=HX)
    assert r.status_code == 422 and "storage format for serving" in r.text


def test_slide_3_all_reduce_takes_76_ms_on_nvlink_and_longer_elsewhere(lessons_client: TestClient) -> None:
    """16.06 GB of gradients over 8 GPUs: 2 × 7/8 × bytes ÷ the bus bandwidth a ring reaches (370 of NVLink's 450
    GB/s, the same share of PCIe's 63 and one port's 50) plus NCCL's latency; NVLink's is the engine's collective,
    the one training plans use."""
    html = lessons_client.get(f"{SLIDES}/3").text
    cells = r'<tr data-link="(\w+)"><th scope="row">[^<]+</th><td>([^<]+)</td><td>([^<]+)</td><td>([^<]+)</td>'
    rows = {link: (line, reached, took) for link, line, reached, took in re.findall(cells, html)}
    assert rows == {"nvlink": ("450 GB/s", "370 GB/s", "76 ms"), "pcie": ("63 GB/s", "52 GB/s", "543 ms"),
                    "network": ("50 GB/s", "41 GB/s", "684 ms")}
    grads = weight_bytes(get_model("llama-3.1-8b"), "bf16")
    assert collectives.seconds("all-reduce", grads, 8) == pytest.approx(0.0760, abs=5e-5)  # the engine's one call


def test_interconnect_links_must_be_known(client: TestClient) -> None:
    r = client.get("/widgets/interconnect?links=nvlink,carrier-pigeon", headers=HX)
    assert r.status_code == 422 and "Links are some of: nvlink, pcie, network" in r.text


def test_slide_4_busy_is_full_while_useful_compute_is_tiny(lessons_client: TestClient) -> None:
    html = lessons_client.get(f"{SLIDES}/4").text
    gauges = dict(re.findall(r'data-gauge="(\w+)">.*?class="bar-value"[^>]*>([^<]+)<', html, re.S))
    # 2 × 8.03 B FLOPs in one decode step (15.01 GB of weights, one embedding row, + 2,048 tokens of KV, read at
    # the achieved bandwidth, plus the fixed cost of a pass): the plan's own step
    serve = make_plan(PlanRequest(batch_size=1, context_tokens=2048)).serve
    assert serve is not None
    useful = 2 * 8_030_261_248 / serve.decode_seconds_per_token / 989e12
    assert gauges["busy"] == "100.0 %" and gauges["compute"] == f"{useful * 100:.1f} %" and useful < 0.005


def test_a_bigger_batch_makes_a_million_tokens_cheaper(client: TestClient) -> None:
    one = value(client.get("/widgets/utilisation?batch_size=1", headers=HX).text, "cost")
    many = value(client.get("/widgets/utilisation?batch_size=64", headers=HX).text, "cost")
    assert float(one.strip("$")) > 10 * float(many.strip("$"))


def test_utilisation_refuses_a_batch_beyond_its_slider(client: TestClient) -> None:
    r = client.get("/widgets/utilisation?batch_size=100000", headers=HX)
    assert r.status_code == 422 and "Must be at most 256" in r.text


def test_slide_8_decode_is_bandwidth_bound_and_the_h200_reads_faster(lessons_client: TestClient) -> None:
    html = lessons_client.get(f"{SLIDES}/8").text
    # the speed a user gets is the plan's (achieved bandwidth, fixed cost a step), the flagship's figure; the
    # datasheet ceiling is named as one (learner walk W35)
    for gpu in ("h100", "h200"):
        page = html if gpu == "h100" else lessons_client.get(f"/widgets/bandwidth-capacity?gpu={gpu}", headers=HX).text
        req = PlanRequest(gpu=gpu, context_tokens=8192)
        served, ceiling = make_plan(req).serve, gpu_limits(req).tokens_per_second
        assert served is not None and served.tokens_per_second < ceiling
        assert value(page, "speed") == f"{num(served.tokens_per_second)} tokens a second"
        assert value(page, "ceiling") == num(ceiling)
    assert 'data-binds="memory-bandwidth"' in html


def test_slide_8_a_model_that_does_not_fit_gets_no_speed(client: TestClient) -> None:
    html = client.get("/widgets/bandwidth-capacity?model=llama-3.1-70b&gpu=a100", headers=HX).text
    assert value(html, "speed") == "Does not fit on one NVIDIA A100 SXM4 80GB, so it does not run at any speed."
    assert "About " not in html and "under a ceiling" not in html and "arithmetic only" in html


def test_slide_7_four_nodes_overflow_a_15_kw_room(lessons_client: TestClient) -> None:
    html = lessons_client.get(f"{SLIDES}/7").text
    four = 4 * node_watts(1.0)  # 8.4 kW a node busy (app.engine.power), 33.6 kW
    assert 'data-fits-room="false"' in html and value(html, "watts") == f"{four / 1000:.1f} kW"
    assert f"{(four - 15_000) / 1000:.1f} kW over" in html
    # learner walk I4: the energy is the one node the room can run, not four
    assert value(html, "kwh") == f"{num(node_watts(1.0) * 720 / 1000)} kWh"


def test_slide_21_a_month_at_70_percent_load(lessons_client: TestClient) -> None:
    html = lessons_client.get(f"{SLIDES}/21").text
    kwh = node_watts(0.7) * 720 / 1000  # one power rule at 70 % busy
    assert value(html, "kwh") == f"{num(kwh)} kWh"
    # learner walk I5: the course's one electricity price, $0.13 a kWh (EIA 2023)
    assert value(html, "cost") == f"${kwh * ELECTRICITY_USD_PER_KWH:,.0f}"
    assert value(html, "co2") == f"{num(kwh * 0.4)} kg CO₂"
    full = lessons_client.get("/widgets/power-energy?load=1&price_per_kwh=0.15", headers=HX).text
    assert value(full, "kwh") == f"{num(8.4 * 720)} kWh" and "7,344 kWh" in full  # busy, and the rated maximum


def test_a_load_above_one_is_refused_beside_the_field(client: TestClient) -> None:
    r = client.get("/widgets/power-energy?load=1.5", headers=HX)
    assert r.status_code == 422
    assert re.search(r'id="w1-load-error" hx-swap-oob="true">Must be at most 1', r.text)


@pytest.mark.parametrize(
    "name", ["data-path", "memory-capacity", "interconnect", "utilisation", "bandwidth-capacity", "power-energy"]
)
def test_every_companion_widget_renders_as_a_page_without_javascript(client: TestClient, name: str) -> None:
    r = client.get(f"/widgets/{name}")
    assert r.status_code == 200 and "<html" in r.text and f'data-widget="{name}"' in r.text


# --- workload-sheet and profile blocks -----------------------------------------------------------------


def test_step_5_holds_the_sheet_form_with_examples_only_as_placeholders(lessons_client: TestClient) -> None:
    html = lessons_client.get(f"{WORK}/5").text
    assert 'data-widget="workload-sheet"' in html and 'action="/companion/sheet"' in html
    assert html.count('value="to_measure" checked') == 10  # two blank number rows under each of five headings
    assert html.count('class="sheet-number"') == 10
    assert 'placeholder="e.g. labelled photos' in html
    assert re.search(r'<textarea id="sheet-input"[^>]*></textarea>', html)  # empty: the example is not a value


def test_step_6_offers_the_sizes_and_says_what_it_does_not_predict(lessons_client: TestClient) -> None:
    html = lessons_client.get(f"{WORK}/6").text
    sizes = re.findall(r'<option value="(\d+)"( selected)?>\d+ MB</option>', html)
    assert sizes == [("8", ""), ("16", " selected"), ("32", ""), ("64", "")]
    assert "predicts nothing about GPU training speed" in html
    assert "gpu-classroom profile --size 64MB --repeat 5 --json" in html
    assert "profile-worker.js" in html


def test_a_profile_block_must_offer_its_own_default_size(client: TestClient) -> None:
    r = client.get("/widgets/profile?size_mb=4&sizes_mb=8,16", headers=HX)
    assert r.status_code == 422


def test_slide_4_names_the_cache_its_speed_assumes_and_refuses_a_batch_that_does_not_fit(client: TestClient) -> None:
    fits = client.get("/widgets/utilisation?batch_size=1&context_tokens=2048", headers=HX).text
    assert "each keeping 2,048 tokens of KV cache" in fits and "roofline's bound" not in fits
    html = client.get("/widgets/utilisation?batch_size=256&context_tokens=100000", headers=HX).text
    result = html.split('id="dgx-panel"')[0]
    assert "Does not fit." in result and "so it does not run" in result
    assert 'data-value="cost"' not in result and "tokens a second" not in result and "Busy" not in result
