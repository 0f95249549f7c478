"""The dgx-1 panel's text twins: what a screen reader hears of each GPU, the announcement of a change, the
legend, and the power a running workload draws."""

from __future__ import annotations

import re
from decimal import ROUND_HALF_UP, Decimal
from urllib.parse import urlencode

from fastapi.testclient import TestClient

from app.engine.hardware import H100_SXM, node
from app.engine.placement import H100_IDLE_WATTS
from app.engine.plan import PlanRequest, make_plan
from app.engine.power import gpu_watts, node_watts
from app.engine.text import gb, watts
from tests.web.live_clock import Clock, clock_fixture
from tests.web.test_widget_plan_predict import guess

__all__ = ["clock_fixture"]

HX = {"HX-Request": "true"}
SERVE_8B_ON_2 = PlanRequest(model="llama-3.1-8b", gpus=2)


def bar_labels(html: str) -> dict[int, str]:
    """The text description of each GPU's memory bar, by GPU index."""
    found = re.findall(r'<svg class="gpu-bar"[^>]*aria-label="(GPU (\d+): [^"]*)"', html)
    return {int(index): label for label, index in found}


def announcement(html: str) -> str:
    found = re.search(r'<p id="dgx-announce"[^>]*>([^<]*)</p>', html)
    assert found, "no dgx-announce element"
    return found.group(1)


def test_each_gpu_bar_says_in_words_what_it_holds(client: TestClient) -> None:
    html = client.get("/widgets/plan?model=llama-3.1-8b&gpus=2", headers=HX).text
    mem = make_plan(SERVE_8B_ON_2).per_gpu
    parts = [("weights", mem.weights), ("kv cache", mem.kv_cache), ("activations", mem.activations),
             ("runtime", mem.runtime)]
    held = ", ".join(f"{name} {gb(size, 1)}" for name, size in parts if size > 0)
    labels = bar_labels(html)
    assert sorted(labels) == list(range(node().gpus))
    for i in (0, 1):
        assert labels[i] == f"GPU {i}: {gb(mem.total, 1)} of 80 GB; {held}"
    assert all(labels[i] == f"GPU {i}: 0.0 GB of 80 GB; empty" for i in range(2, 8))


def test_the_announcement_is_a_polite_status_that_says_what_gpu_0_now_holds(client: TestClient) -> None:
    page = client.get("/widgets/plan").text  # the widget's own page carries the live region
    assert re.search(r'<p id="dgx-announce"[^>]*role="status"', page) and 'aria-live="polite"' in page
    fits = client.get("/widgets/plan?model=llama-3.1-8b", headers=HX).text
    total = make_plan(PlanRequest(model="llama-3.1-8b")).per_gpu.total
    assert announcement(fits) == (
        f"GPU 0: {gb(total, 1)} of 80 GB. serving Llama 3.1 8B (bf16) on 1 GPU: weights loaded, idle until a "
        "request arrives."
    )
    assert announcement(fits).startswith("GPU 0: 19.0 GB of 80 GB")
    assert 'id="dgx-announce" class="visually-hidden" hx-swap-oob="innerHTML"' in fits


def test_an_overflow_is_announced_with_the_gpu_and_how_much_too_much(client: TestClient) -> None:
    html = client.get("/widgets/plan?model=llama-3.1-70b", headers=HX).text
    total = make_plan(PlanRequest(model="llama-3.1-70b")).per_gpu.total
    assert announcement(html) == (
        f"GPU 0 overflows: needs {gb(total, 1)} of 80 GB, {gb(total - H100_SXM.memory_bytes, 1)} too much."
    )


def test_the_legend_names_every_part_a_gpu_can_hold_in_stacking_order(client: TestClient) -> None:
    html = client.get("/widgets/plan").text  # the page: an update's copy leaves the legend to the page's own
    legend = re.search(r'<ul class="legend" aria-label="Legend" data-kept="legend">(.*?)</ul>', html, re.S)
    assert legend
    names = [re.sub(r"<[^>]+>", "", item).strip() for item in re.findall(r"<li>(.*?)</li>", legend.group(1), re.S)]
    assert names[:7] == [
        "Weights", "KV cache", "Activations", "Loss head", "Gradients", "Optimizer state", "Runtime"
    ]


def test_the_panel_shows_the_widgets_gb_figure_rounded_by_one_rule_for_every_plan(client: TestClient) -> None:
    """The plan says GPU 0's need to two decimals and the panel to one: the panel's is always the plan's figure
    rounded half up (the walk saw 12.05 GB as 12.0 GB for fp8 and 12.1 GB for int8)."""
    checked = 0
    for model in ("llama-3.1-8b", "mistral-7b", "mixtral-8x7b", "llama-3.1-70b"):
        for precision in ("bf16", "fp8", "int8", "int4"):
            for gpus, context in ((1, 8192), (2, 1500), (8, 8192)):
                url = f"/widgets/plan?model={model}&precision={precision}&gpus={gpus}&context_tokens={context}"
                html = client.get(url, headers=HX).text
                headline = re.search(r'data-value="verdict">.*?<span data-value="total">([\d,]+\.\d\d) GB</span>',
                                     html, re.S)
                assert headline, url
                two = Decimal(headline.group(1).replace(",", ""))
                one = f"{two.quantize(Decimal('0.1'), rounding=ROUND_HALF_UP):,.1f} GB"
                assert bar_labels(html)[0].startswith(f"GPU 0: {one} of 80 GB"), (url, headline.group(1))
                why = re.search(r'<p class="why"[^>]*><strong>Does not fit\.</strong> GPU 0 needs ([\d,.]+ GB) ', html)
                assert ("Does not fit" in headline.group(0)) == bool(why), url
                assert not why or why.group(1) == one, (url, why.group(1), one)  # the why line rounds alike
                checked += 1
    assert checked == 48


def power(html: str) -> tuple[list[str], str]:
    """Each GPU's power and the eight together, as the panel writes them."""
    each = re.findall(r'<span class="gpu-util">[^<]*· ([^<]*)</span>', html)
    total = re.search(r'<p class="panel-total">[^<]*· ([^<]*) for the GPUs, ', html)
    assert total
    return each, total.group(1)


def test_a_running_training_run_draws_full_power_and_an_idle_node_idle_power(client: TestClient,
                                                                             clock: Clock) -> None:
    url = "/widgets/training-run?play_seconds=20&w=1&model=llama-3.1-8b&gpus=8&loader_samples_per_second=1000"
    ready = client.get(url, headers=HX).text
    loaded = gpu_watts(0.0, loaded=True)  # each GPU holds its share of the training state: 140 W, not a bare 70 W
    assert power(ready) == ([watts(loaded)] * 8, watts(8 * loaded))
    started = client.get(url + "&action=start", headers=HX).text
    state = dict(re.findall(r'<input type="hidden" name="(started_at|elapsed|run_of)" value="([^"]*)">', started))
    clock.now += 3
    running = client.get(f"{url}&{urlencode(state)}", headers=HX).text
    assert "computing" in running
    assert power(running) == ([watts(H100_SXM.tdp_watts)] * 8, watts(8 * H100_SXM.tdp_watts))  # 700 W, 5.6 kW
    # the whole server: the GPUs plus the non-GPU share, the one power rule's 8.4 kW (issue 25 item 8)
    assert f"{watts(node_watts(1.0))} for the whole server" in running


def test_a_training_job_at_any_mfu_draws_full_power_as_the_training_run_does(client: TestClient) -> None:
    for mfu in ("0.2", "0.5"):
        html = client.get(f"/widgets/compute-time?mfu={mfu}", headers=HX).text
        assert power(html) == ([watts(H100_SXM.tdp_watts)] * 8, watts(8 * H100_SXM.tdp_watts))


def test_step_1s_single_chat_user_leaves_gpu_0_idle_not_100_percent_busy_at_700_w(lessons_client: TestClient) -> None:
    """The plan loads the weights; without requests of its own the GPU waits at the 140 W floor of a GPU holding a
    model (app.engine.power), the other seven at their bare 70 W."""
    guess(lessons_client, 1, 2, "20 GB")  # the plan shows its panel once the guess is in
    page = lessons_client.get("/lessons/what-ai-workloads-need/1").text
    assert "serving Llama 3.1 8B" in page and "100 % busy · 700 W" not in page
    shown = re.findall(r'<span class="gpu-util">([^<]*)</span>', page)
    assert shown[0] == f"0 % busy · {watts(gpu_watts(0.0, loaded=True))}"
    assert shown[1] == f"0 % busy · {watts(H100_IDLE_WATTS)}"
    assert "weights loaded, idle until a request arrives" in page


def test_the_utilisation_slide_shows_its_gpu_decoding_flat_out(client: TestClient) -> None:
    """Busy is not useful: the slide's GPU decodes without pause, so it is 100 % busy at its TDP."""
    html = client.get("/widgets/utilisation?batch_size=1", headers=HX).text
    each, _ = power(html)
    assert each == [watts(H100_SXM.tdp_watts)] + [watts(H100_IDLE_WATTS)] * 7
