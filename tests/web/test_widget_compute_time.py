"""Compute time with an MFU slider, over HTTP."""

from __future__ import annotations

import re

from fastapi.testclient import TestClient

from app.engine.models import get_model
from app.engine.plan import PlanRequest, make_plan
from app.engine.sizing import SEQUENCE_TOKENS, compute_time
from app.engine.text import seconds

HX = {"HX-Request": "true"}


def test_step_13_trains_llama_8b_on_15t_tokens_in_about_7_years(lessons_client: TestClient) -> None:
    page = lessons_client.get("/lessons/what-ai-workloads-need/13").text
    # 6·N·D's 7.2 years, plus causal attention at 8,192-token sequences (13 % more for the 8B): 8.2 years
    years = compute_time(get_model("llama-3.1-8b"), 15e12, 8, 0.4).seconds
    assert f'<span data-value="time">{seconds(years)}</span> at 40 % MFU' in page and "8.2 years" in page
    assert 'type="range" min="0.05" max="1" step="0.01" value="0.4"' in page


def test_halving_the_mfu_doubles_the_time(client: TestClient) -> None:
    r = client.get("/widgets/compute-time?model=llama-3.1-8b&tokens=15e12&gpus=8&mfu=0.2", headers=HX).text
    at_40 = compute_time(get_model("llama-3.1-8b"), 15e12, 8, 0.4).seconds
    assert f'<span data-value="time">{seconds(2 * at_40)}</span> at 20 % MFU' in r


def test_the_chart_marks_the_chosen_mfu_on_the_curve(client: TestClient) -> None:
    low = client.get("/widgets/compute-time?mfu=0.2", headers=HX).text
    high = client.get("/widgets/compute-time?mfu=0.8", headers=HX).text
    x = [float(re.search(r'class="rl-marker" cx="([\d.]+)"', t).group(1)) for t in (low, high)]  # type: ignore[union-attr]
    assert x[0] < x[1]
    assert "Time (years)" in low and "MFU (share of peak FLOPS reached)" in low


def test_an_mfu_above_one_is_refused_beside_the_slider(client: TestClient) -> None:
    r = client.get("/widgets/compute-time?mfu=1.5", headers=HX)
    assert r.status_code == 422
    assert re.search(r'id="w1-mfu-error" hx-swap-oob="true">Must be at most 1', r.text)


def panel_key(html: str) -> str:
    found = re.search(r'<aside id="dgx-panel"[^>]*data-key="([0-9a-f]+)"', html)
    assert found
    return found.group(1)


def utilisations(html: str) -> list[str]:
    """What each GPU of the dgx-1 panel says it is doing: '100 % busy · 700 W'."""
    return re.findall(r'<span class="gpu-util">([^<]*)</span>', html)


def test_step_13_places_the_training_run_on_dgx_1(lessons_client: TestClient) -> None:
    page = lessons_client.get("/lessons/what-ai-workloads-need/13").text
    panel = page[page.index('id="dgx-panel"') :]
    assert "training Llama 3.1 8B on 8 GPUs at 40 % MFU" in panel
    plan = make_plan(PlanRequest(model="llama-3.1-8b", mode="train", gpus=8, sharding="zero3",
                                 context_tokens=SEQUENCE_TOKENS, activation_checkpointing="full"))
    assert utilisations(panel) == ["100 % busy · 700 W"] * 8 and f'data-used="{plan.per_gpu.total}"' in panel
    # 32.0 GB since issue 12 (was 20.0): the loss head's 10.6 GB and the layer being recomputed (1.4 GB).
    assert "ZeRO-3 over the 8 GPUs, one sequence of 8,192 tokens a GPU" in page and "32.0 GB on each GPU" in page


def test_moving_the_mfu_renames_the_run_on_the_panel_but_the_gpus_stay_busy(client: TestClient) -> None:
    """A fed GPU is busy at any MFU (as in step 5's training run): MFU is the share of peak a busy second
    achieves, so the panel's utilisation and power stay put and only its activity line follows the slider."""
    first = client.get("/widgets/compute-time?mfu=0.4", headers=HX).text
    assert 'id="dgx-panel"' in first and 'hx-swap-oob="true"' in first
    moved = client.get(f"/widgets/compute-time?mfu=0.8&panel_key={panel_key(first)}", headers=HX).text
    assert 'id="dgx-panel"' in moved, "the panel must come out of band when the MFU changes its activity line"
    assert "at 40 % MFU" in first and "at 80 % MFU" in moved
    assert utilisations(first) == utilisations(moved) == ["100 % busy · 700 W"] * 8
    assert "All eight GPUs: 255.7 GB of 640 GB · 5.6 kW" in moved  # 8 × 32.0 GB (step 13's plan)
    same = client.get(f"/widgets/compute-time?mfu=0.8&panel_key={panel_key(moved)}", headers=HX).text
    assert 'id="dgx-panel"' not in same


def test_a_run_that_does_not_fit_shows_the_overflow_and_leaves_the_gpus_idle(client: TestClient) -> None:
    html = client.get("/widgets/compute-time?model=llama-3.1-70b&gpus=8&mfu=0.4", headers=HX).text
    assert 'data-fits="false"' in html and 'data-overflow="0"' in html
    assert utilisations(html) == ["0 % busy · 70 W"] * 8
    assert "the run could not start, so every time here is arithmetic only" in html
    assert html.index("data-refusal") < html.index('data-value="time"')
