"""The request timeline over HTTP: one prefill, a decode step per output token, drawn to scale."""

from __future__ import annotations

import re

import pytest
from fastapi.testclient import TestClient

from app.engine.plan import PlanRequest, make_plan
from app.engine.text import seconds

HX = {"HX-Request": "true"}


def widths(html: str, phase: str) -> dict[str, float]:
    """Width of each row's prefill or decode block, by row key."""
    rows = re.findall(rf'<g data-row="(\w+)">.*?class="phase-{phase}" x="[\d.]+" y="[\d.]+" width="([\d.]+)"', html,
                      re.S)
    return {key: float(w) for key, w in rows}


def answer(html: str, key: str) -> str:
    found = re.search(rf'<span data-value="{key}">([^<]*)<', html)
    assert found
    return found.group(1)


def test_step_9_follows_a_1000_token_prompt_and_a_500_token_answer(lessons_client: TestClient) -> None:
    page = lessons_client.get("/lessons/what-ai-workloads-need/9").text
    # prefill: 2·N·T + attention at the H100's measured matmul share, plus a pass's fixed cost; a step reads
    # 15.01 GB + the KV cache at the achieved bandwidth, plus the fixed cost: the plan's own figures
    serve = make_plan(PlanRequest(prompt_tokens=1000, output_tokens=500, context_tokens=8192)).serve
    assert serve is not None
    assert answer(page, "total") == seconds(serve.request_seconds)
    assert answer(page, "prefill") == seconds(serve.prefill_seconds)
    assert answer(page, "steps") == "500" and answer(page, "step") == seconds(serve.decode_seconds_per_token)
    assert "fixed cost of about 1.6 ms" in page
    assert "serving Llama 3.1 8B (bf16) on 1 GPU" in page  # the panel holds the model


def test_a_longer_answer_grows_the_picture_far_more_than_a_longer_prompt(client: TestClient) -> None:
    html = client.get("/widgets/request-timeline?prompt_tokens=1000&output_tokens=500", headers=HX).text
    decode, prefill = widths(html, "decode"), widths(html, "prefill")
    assert decode["answer2"] == pytest.approx(2 * decode["this"], rel=0.01)
    # twice the prompt is nearly twice the prefill (attention grows with its square; the fixed cost does not)
    assert 1.8 * prefill["this"] < prefill["prompt2"] < 2.1 * prefill["this"]
    grow_answer = decode["answer2"] - decode["this"]
    grow_prompt = prefill["prompt2"] - prefill["this"]
    assert grow_answer > 20 * grow_prompt
    found = re.search(r"Long answers cost (\d+)× more here than long questions", html)
    assert found and int(found.group(1)) > 20


def test_the_picture_is_to_scale_prefill_and_decode_share_one_axis(client: TestClient) -> None:
    html = client.get("/widgets/request-timeline?prompt_tokens=8000&output_tokens=100", headers=HX).text
    decode, prefill = widths(html, "decode"), widths(html, "prefill")
    # 8,000 prompt tokens at 80 % of 989 TFLOPS ≈ 170 ms; 100 decode steps of ≈ 8.5 ms ≈ 850 ms
    assert 0.1 < prefill["this"] / decode["this"] < 0.4


def test_each_decode_step_is_marked_or_every_kth_when_too_thin(client: TestClient) -> None:
    few = client.get("/widgets/request-timeline?prompt_tokens=100&output_tokens=20", headers=HX).text
    many = client.get("/widgets/request-timeline?prompt_tokens=100&output_tokens=4000", headers=HX).text
    assert "a mark between every step" in few
    assert re.search(r"a mark every (\d+) steps", many)
    marks = re.search(r'<g data-row="this">.*?class="decode-tick" d="([^"]+)"', few, re.S)
    assert marks and marks.group(1).count("M") == 19  # between 20 steps


def test_the_timeline_has_a_text_twin(client: TestClient) -> None:
    html = client.get("/widgets/request-timeline", headers=HX).text
    assert 'role="img" aria-labelledby="w1-timeline-caption"' in html
    serve = make_plan(PlanRequest(prompt_tokens=1000, output_tokens=1000, context_tokens=8192)).serve
    assert serve is not None
    step, pre = seconds(serve.decode_seconds_per_token), seconds(serve.prefill_seconds)
    total = seconds(serve.prefill_seconds + 1000 * serve.decode_seconds_per_token)
    assert (f'<tr data-row="answer2"><th scope="row">Answer × 2</th><td>1,000 tokens in {pre}</td>'
            f'<td>1,000 × {step} = {seconds(1000 * serve.decode_seconds_per_token)}</td>'
            f'<td data-value="cache">8,192 tokens</td><td data-value="total">{total}</td>') in html


def test_a_model_too_big_for_one_gpu_is_split_and_says_so(client: TestClient) -> None:
    html = client.get("/widgets/request-timeline?model=llama-3.1-70b", headers=HX).text
    assert "split over 2 GPUs (tensor parallel)" in html and "2 of 8 GPUs in use" in html


def test_bad_lengths_are_refused_beside_their_fields(client: TestClient) -> None:
    r = client.get("/widgets/request-timeline?output_tokens=0", headers=HX)
    assert r.status_code == 422
    assert re.search(r'id="w1-output_tokens-error" hx-swap-oob="true">Must be at least 1', r.text)
    r = client.get("/widgets/request-timeline?prompt_tokens=1e9", headers=HX)
    assert r.status_code == 422 and 'id="w1-prompt_tokens-error" hx-swap-oob="true">' in r.text


def test_each_row_says_the_kv_cache_it_reads_when_the_request_outgrows_8192_tokens(client: TestClient) -> None:
    """Step 9 keeps 8,192 tokens of cache for a request; a longer one gets a cache as long as itself, and the table
    says so row by row rather than timing 16,000 tokens against an 8,192-token cache without a word (W26)."""
    for prompt, output in ((1000, 500), (8000, 500), (4000, 4000), (60000, 100)):
        html = client.get(f"/widgets/request-timeline?prompt_tokens={prompt}&output_tokens={output}", headers=HX).text
        caches = dict(re.findall(r'<tr data-row="(\w+)">.*?<td data-value="cache">([\d,]+) tokens</td>', html))
        wanted = {"this": prompt + output, "prompt2": 2 * prompt + output, "answer2": prompt + 2 * output}
        assert caches == {k: f"{max(8192, n):,}" for k, n in wanted.items()}, (prompt, output, caches)
        assert "the server keeps 8,192 tokens of cache for a request, or the whole request" in html
