"""Compute time with an MFU slider, over HTTP."""

from __future__ import annotations

import re

from fastapi.testclient import TestClient

HX = {"HX-Request": "true"}


def test_step_13_trains_llama_8b_on_15t_tokens_in_about_7_years(lessons_client: TestClient) -> None:
    page = lessons_client.get("/lessons/what-ai-workloads-need/13").text
    assert '<span data-value="time">7.2 years</span> at 40 % MFU' in page
    assert 'type="range" min="0.05" max="1" step="0.01" value="0.4"' in page


def test_halving_the_mfu_doubles_the_time(client: TestClient) -> None:
    r = client.get("/widgets/compute-time?model=llama-3.1-8b&tokens=15e12&gpus=8&mfu=0.2", headers=HX).text
    assert '<span data-value="time">14 years</span> at 20 % MFU' in r


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
