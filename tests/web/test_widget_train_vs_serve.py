"""Training and inference side by side, over HTTP."""

from __future__ import annotations

import re

from fastapi.testclient import TestClient

HX = {"HX-Request": "true"}


def test_step_10_compares_both_jobs_for_llama_8b(lessons_client: TestClient) -> None:
    page = lessons_client.get("/lessons/what-ai-workloads-need/10").text
    assert "19.0 GB on one GPU" in page and "128.5 GB of state before activations" in page
    assert "≈ 2 × N = 1.6 × 10¹⁰ FLOPs" in page and "≈ 6 × N = 4.8 × 10¹⁰ FLOPs" in page
    assert (
        '<td data-value="serve_limit">Memory bandwidth' in page
        and '<td data-value="train_limit">Compute' in page
    )


def test_a_bigger_model_grows_the_memory_rows_and_keeps_the_limits(client: TestClient) -> None:
    r = client.get("/widgets/train-vs-serve?model=llama-3.1-70b", headers=HX).text
    # 21 training GPUs since issue 12 (was 17): full checkpointing also holds the loss head and one rebuilt layer.
    assert "on each of 2 GPUs" in r and "on each of 21 GPUs" in r
    assert (
        '<td data-value="serve_limit">Memory bandwidth' in r and '<td data-value="train_limit">Compute' in r
    )


def test_an_unknown_model_is_refused_beside_the_field(client: TestClient) -> None:
    r = client.get("/widgets/train-vs-serve?model=llama-9", headers=HX)
    assert r.status_code == 422
    assert re.search(r'id="w1-model-error" hx-swap-oob="true">Unknown model', r.text)
