"""The matrix-multiply counter over HTTP."""

from __future__ import annotations

import re

from fastapi.testclient import TestClient

HX = {"HX-Request": "true"}


def test_step_2_counts_one_token_through_llamas_up_projection(lessons_client: TestClient) -> None:
    page = lessons_client.get("/lessons/what-ai-workloads-need/2").text
    assert '<span data-value="flops">117,440,512</span> FLOPs' in page
    assert "2 × 1 × 4,096 × 14,336" in page


def test_raising_m_multiplies_the_flops_but_not_the_weight_bytes(client: TestClient) -> None:
    one = client.get("/widgets/matmul?m=1&k=4096&n=14336", headers=HX).text
    many = client.get("/widgets/matmul?m=64&k=4096&n=14336", headers=HX).text
    assert '<span data-value="flops">7,516,192,768</span>' in many
    weights = (
        r'data-matrix="weights"><th scope="row">Weights \(k × n\)</th>'
        r'<td>4,096 × 14,336</td><td class="num">117,440,512'
    )
    assert re.search(weights, one) and re.search(weights, many)
    assert "1.0 FLOPs per byte" in one and "62.7 FLOPs per byte" in many


def test_a_size_of_zero_is_refused_beside_the_field(client: TestClient) -> None:
    r = client.get("/widgets/matmul?m=0&k=4096&n=14336", headers=HX)
    assert r.status_code == 422
    assert re.search(r'id="w1-m-error" hx-swap-oob="true">Must be at least 1', r.text)


def test_a_counter_places_no_work_on_dgx1(client: TestClient) -> None:
    assert 'id="dgx-panel"' not in client.get("/widgets/matmul?m=8", headers=HX).text


def test_the_bytes_chart_has_a_text_twin(client: TestClient) -> None:
    r = client.get("/widgets/matmul?m=8", headers=HX).text
    assert 'role="img" aria-labelledby="w1-bars-caption"' in r and "MB moved" in r and "<table" in r
