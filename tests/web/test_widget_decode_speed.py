"""Decode speed by model, precision and GPU generation, over HTTP."""

from __future__ import annotations

import re

from fastapi.testclient import TestClient

from app.engine.compute import STEP_OVERHEAD_SECONDS
from app.engine.hardware import HBM_ACHIEVED_SHARE
from app.engine.text import num

HX = {"HX-Request": "true"}


def speed(html: str) -> str:
    match = re.search(r'<span data-value="tokens_per_second">([\d,]+)</span>', html)
    assert match
    return match.group(1)


def ceiling(html: str) -> str:
    match = re.search(r'<span data-value="ceiling">([\d,]+)</span>', html)
    assert match, "no ceiling"
    return match.group(1)


def test_llama_8b_on_one_h100_decodes_at_most_208_tokens_a_second(client: TestClient) -> None:
    """The ceiling: 3.35 TB/s ÷ (15.01 GB of weights read, one embedding row, + 1.07 GB of KV); weights alone
    223. What a user sees: the same bytes at the achieved 68.5 % of the bandwidth plus 1.6 ms a step."""
    r = client.get(
        "/widgets/decode-speed?model=llama-3.1-8b&precision=bf16&gpu=h100&context_tokens=8192", headers=HX
    )
    assert ceiling(r.text) == "208" and "Weights alone, at the ceiling: 223 tokens/s" in r.text
    seen = 1 / ((15.01e9 + 1.074e9) / (3.35e12 * HBM_ACHIEVED_SHARE) + STEP_OVERHEAD_SECONDS)
    assert speed(r.text) == num(seen) and "all 16.06 GB stored" in r.text


def test_bandwidth_and_bytes_move_the_ceiling(client: TestClient) -> None:
    q = "/widgets/decode-speed?model=llama-3.1-8b&context_tokens=8192"
    assert ceiling(client.get(f"{q}&gpu=a100", headers=HX).text) == "127"
    assert ceiling(client.get(f"{q}&gpu=h200", headers=HX).text) == "298"
    # 3.35 TB/s ÷ (8.03 + 1.07) GB: a real fp8 checkpoint (9.08 GB) keeps embeddings and LM head in bf16, and a
    # step skips the 1.05 GB of 16-bit embedding rows its token does not look up (learner walk W30: both shown).
    fp8 = client.get(f"{q}&precision=fp8", headers=HX).text
    assert ceiling(fp8) == "368" and "all 9.08 GB stored (the layers' matrices in fp8, the embeddings and output" in fp8
    assert "less the 1.05 GB of embedding rows for tokens it does not see" in fp8
    assert int(speed(fp8).replace(",", "")) < 368


def test_the_panel_shows_the_model_on_an_h100_of_dgx1(client: TestClient) -> None:
    r = client.get("/widgets/decode-speed?model=llama-3.1-8b&context_tokens=8192", headers=HX).text
    assert 'id="dgx-panel"' in r and 'data-gpu="0" data-used="19028985344"' in r


def test_an_unknown_gpu_is_refused_beside_the_field(client: TestClient) -> None:
    r = client.get("/widgets/decode-speed?gpu=b200", headers=HX)
    assert r.status_code == 422
    assert re.search(r'id="w1-gpu-error" hx-swap-oob="true">Choose one of', r.text)
