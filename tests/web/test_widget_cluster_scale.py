"""The cluster-scale calculator over HTTP."""

from __future__ import annotations

import re

from fastapi.testclient import TestClient

from app.engine.models import get_model
from app.engine.sizing import cluster_scale
from app.engine.text import seconds

HX = {"HX-Request": "true"}


def test_step_6_sizes_llama_405b_at_66_days_on_16384_gpus(lessons_client: TestClient) -> None:
    page = lessons_client.get("/lessons/what-ai-workloads-need/6").text
    # 66 days from 6·N·D, 69 with causal attention counted (issue 25 item 7); thousands of years on one GPU
    c = cluster_scale(get_model("llama-3.1-405b"), 15.6e12, 0.41, 16_384, 90)
    assert f'<span data-value="days">{c.days_at_gpus:.1f} days</span> on 16,384 GPUs' in page
    assert 66 < c.days_at_gpus < 70
    # one GPU cannot hold 405B's training: its time is shown, labelled arithmetic only
    assert f'<span data-value="one_gpu">{seconds(c.seconds_on_one_gpu)}</span> (arithmetic only: one GPU cannot' in page
    # 229, was 147 before issue 12: one 8,192-token sequence a GPU with full checkpointing now also holds
    # the loss head (fp32 logits and their gradient, 11 GB) and the layer being recomputed (5.1 GB).
    assert (
        '<dd data-value="gpus_for_memory">229</dd>' in page
        and f'<dd data-value="gpus_for_deadline">{c.gpus_for_deadline:,}</dd>' in page
    )


def test_a_lower_mfu_lets_the_deadline_escape(client: TestClient) -> None:
    enough = cluster_scale(get_model("llama-3.1-405b"), 15.6e12, 0.41, 1, 90).gpus_for_deadline
    base = f"model=llama-3.1-405b&tokens=15.6e12&gpus={enough}&deadline_days=90"
    ok = client.get(f"/widgets/cluster-scale?{base}&mfu=0.41", headers=HX).text
    late = client.get(f"/widgets/cluster-scale?{base}&mfu=0.35", headers=HX).text
    assert "(within the 90-day deadline)" in ok and "(past the 90-day deadline)" in late


def test_too_few_gpus_cannot_hold_the_run(client: TestClient) -> None:
    r = client.get("/widgets/cluster-scale?model=llama-3.1-405b&gpus=64", headers=HX).text
    assert "This run cannot start: 64 GPUs have too little memory to hold it; it needs at least 229." in r
    assert r.index("data-refusal") < r.index('data-value="days"')


def test_a_deadline_of_zero_days_is_refused_beside_the_field(client: TestClient) -> None:
    r = client.get("/widgets/cluster-scale?deadline_days=0", headers=HX)
    assert r.status_code == 422
    assert re.search(r'id="w1-deadline_days-error" hx-swap-oob="true">Must be at least 1', r.text)
