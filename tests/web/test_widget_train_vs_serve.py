"""Training and inference side by side, over HTTP."""

from __future__ import annotations

import html as markup
import re

from fastapi.testclient import TestClient

from app.engine.models import CATALOG
from app.engine.text import billions, flops

HX = {"HX-Request": "true"}


def text(html: str) -> str:
    return markup.unescape(re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html)))


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


def test_n_is_the_parameters_a_token_passes_through_and_says_so_for_every_model(client: TestClient) -> None:
    """2 × N and 6 × N use the active parameters; a mixture of experts says N is fewer than its total (W27)."""
    for model_id, arch in CATALOG.items():
        html = text(client.get(f"/widgets/train-vs-serve?model={model_id}", headers=HX).text)
        n = re.search(r"≈ 2 × N = ([\d.]+) × 10(\S+) FLOPs, N = ([\d.]+) B parameters", html)
        assert n, (model_id, html[:400])
        assert n.group(3) == billions(arch.active_parameters).removesuffix(" B")
        assert f"≈ 2 × N = {flops(2 * arch.active_parameters)}" in html
        moe = arch.active_parameters != arch.parameters
        assert (f"{billions(arch.active_parameters)} of them active for each token" in html) == moe
        assert ("experts, so only these of the" in html) == moe


def test_each_memory_figure_names_its_scenario(client: TestClient) -> None:
    html = text(client.get("/widgets/train-vs-serve?model=llama-3.1-8b", headers=HX).text)
    assert "a KV cache of 8,192 tokens for one user" in html
    assert "with ZeRO-3 and full activation checkpointing, one 8,192-token sequence a GPU" in html
