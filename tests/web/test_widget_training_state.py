"""The training-state breakdown over HTTP."""

from __future__ import annotations

import re

from fastapi.testclient import TestClient

HX = {"HX-Request": "true"}


def test_step_3_sums_every_line_to_16_bytes_and_128_5_gb(lessons_client: TestClient) -> None:
    page = lessons_client.get("/lessons/what-ai-workloads-need/3").text
    assert '<span data-value="bytes_per_parameter">16</span> bytes a parameter' in page
    assert '<span data-value="ratio">8×</span>' in page and 'data-value="total">128.5 GB' in page
    assert [k for k in re.findall(r'data-line="(\w+)"', page)] == [
        "weights",
        "gradients",
        "master",
        "moment1",
        "moment2",
    ]


def test_switching_the_optimizer_changes_only_its_lines(client: TestClient) -> None:
    sgd = client.get("/widgets/training-state?model=llama-3.1-8b&optimizer=sgd-momentum", headers=HX).text
    assert '<span data-value="bytes_per_parameter">12</span>' in sgd
    assert re.findall(r'data-line="(\w+)"', sgd) == ["weights", "gradients", "master", "momentum"]


def test_the_panel_shows_the_state_overflowing_one_gpu(client: TestClient) -> None:
    r = client.get("/widgets/training-state?model=llama-3.1-8b&optimizer=adam", headers=HX).text
    assert 'id="dgx-panel"' in r and 'data-overflow="0"' in r
    assert "GPU 0 needs 128.5 GB but holds 80 GB: 48.5 GB too much." in r
    assert "That is the training state alone, before any activation" in r


def test_an_unknown_optimizer_is_refused_beside_the_field(client: TestClient) -> None:
    r = client.get("/widgets/training-state?optimizer=lion", headers=HX)
    assert r.status_code == 422
    assert re.search(r'id="w1-optimizer-error" hx-swap-oob="true">Choose one of', r.text)
