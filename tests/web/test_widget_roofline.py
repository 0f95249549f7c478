"""The roofline with a batch slider, over HTTP."""

from __future__ import annotations

import re

from fastapi.testclient import TestClient

HX = {"HX-Request": "true"}


def dot_x(html: str) -> float:
    match = re.search(r'class="rl-point rl-point-weights" cx="([\d.]+)"', html)
    assert match
    return float(match.group(1))


def test_single_user_decode_sits_near_one_flop_a_byte_below_the_ridge(client: TestClient) -> None:
    r = client.get("/widgets/roofline?model=llama-3.1-8b&precision=bf16&batch_size=1", headers=HX).text
    # 2 FLOPs a weight over 15.01 GB read (the weights less 128,255 unused embedding rows): 1.07
    assert '<span data-value="intensity">1.1</span> FLOPs per byte' in r and "memory-bound" in r
    assert "<strong>295 FLOPs per byte</strong>" in r and "reaches the ridge at a batch of 276" in r


def test_the_batch_moves_the_point_right_and_across_the_ridge(client: TestClient) -> None:
    texts = [client.get(f"/widgets/roofline?batch_size={b}", headers=HX).text for b in (1, 32, 512)]
    xs = [dot_x(t) for t in texts]
    assert xs == sorted(xs) and xs[0] < xs[1] < xs[2]
    assert '<span data-value="binds">compute-bound</span>' in texts[2]


def test_the_chart_has_log_axes_with_units_and_a_text_twin(client: TestClient) -> None:
    r = client.get("/widgets/roofline", headers=HX).text
    assert "Arithmetic intensity (FLOPs per byte, log scale)" in r and "Attainable FLOPS (log scale)" in r
    assert 'role="img" aria-labelledby="w1-roofline-caption"' in r and "<table" in r
    assert "with its KV caches, decode never reaches the ridge" in r  # with 1,000 tokens of KV cache a sequence


def test_the_panel_fills_with_kv_caches_as_the_batch_grows(client: TestClient) -> None:
    def used(batch: int) -> int:
        text = client.get(f"/widgets/roofline?batch_size={batch}&context_tokens=8192", headers=HX).text
        return int(re.search(r'data-gpu="0" data-used="(\d+)"', text).group(1))  # type: ignore[union-attr]

    assert used(64) > used(1)


def test_a_batch_above_the_slider_is_refused_beside_it(client: TestClient) -> None:
    r = client.get("/widgets/roofline?batch_size=5000", headers=HX)
    assert r.status_code == 422
    assert re.search(r'id="w1-batch_size-error" hx-swap-oob="true">Must be at most 1,024', r.text)
