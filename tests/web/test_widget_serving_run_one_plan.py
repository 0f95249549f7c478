"""The serving run, the batch limit it derives and the dgx-1 panel come from one plan (issue 27, high items 1, 2):
they never disagree about whether it fits, and the words follow the state of the queue."""

from __future__ import annotations

import re

import pytest
from fastapi.testclient import TestClient

from app.widgets._fields import MODEL_OPTIONS
from app.widgets.serving_run import BATCH_CHOICES
from tests.web.live_clock import Clock, clock_fixture

__all__ = ["clock_fixture"]

HX = {"HX-Request": "true"}
URL = "/widgets/serving-run?play_seconds=60&w=1&lesson=what-ai-workloads-need&step=8"
RATES = (0.5, 6.0, 60.0)  # well below, near and far above what one GPU finishes


def panel_fits(html: str) -> bool:
    found = re.search(r'<aside id="dgx-panel"[^>]*data-fits="(true|false)"', html)
    assert found, "the answer carries no panel"
    return found[1] == "true"


def value(html: str, key: str) -> str:
    found = re.search(rf'data-value="{key}"[^>]*>([^<]*)<', html)
    assert found, f"no {key} in the result"
    return found[1]


def plan_says(client: TestClient, model: str, gpus: int, batch: int) -> str:
    """The plan widget's verdict line for the serving run's own scenario (1,000 prompt and 500 output tokens)."""
    query = (f"mode=serve&model={model}&gpus={gpus}&batch_size={batch}&context_tokens=1500&prompt_tokens=1000"
             "&output_tokens=500&precision=bf16")
    html = client.get(f"/widgets/plan?{query}", headers=HX).text
    found = re.search(r'data-value="verdict">(.*?)</p>', html, re.S)
    assert found, "the plan widget gave no verdict"
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", "", found[1])).strip()


@pytest.mark.parametrize("model", [m for m, _ in MODEL_OPTIONS])
def test_the_run_the_panel_and_the_plan_widget_never_disagree_about_fitting(
    client: TestClient, clock: Clock, model: str
) -> None:
    """Every model x batch limit x arrival rate, half a minute into the run and before Start: a run that serves is
    a plan the panel and the plan widget call fitting, at the batch it runs; one memory cannot take one sequence
    more; a run that refuses is refused by both, with the same figure."""
    for max_batch in BATCH_CHOICES:
        for rate, started in [(r, f"&started_at={clock.now - 30:.0f}&run_of=") for r in RATES] + [(1.0, "")]:
            html = client.get(f"{URL}&model={model}&max_batch={max_batch}&arrival_rate={rate:g}{started}",
                              headers=HX).text
            refused = "data-refusal" in html
            assert panel_fits(html) is not refused, (model, max_batch, rate)
            if refused:
                need = re.search(r"GPU 0 needs ([0-9.]+) GB", html)
                assert need and re.search(r'value="start" disabled', html)
                assert "tokens/s" not in html.split('id="dgx-panel"')[0]  # no speed for a run that cannot start
                said = plan_says(client, model, 8, 1)
                verdict = re.fullmatch(r"Does not fit: ([0-9.,]+) GB of 80 GB on each of 8 GPUs", said)
                assert verdict and float(verdict[1]) == pytest.approx(float(need[1]), abs=0.05)  # rounded to 0.1 GB
                continue
            gpus = int(re.search(r"were loaded once onto (\d+) GPU", html)[1])  # type: ignore[index]
            limit = int(value(html, "batch").split(" of ")[1])
            assert limit <= max_batch and float(value(html, "batch").split(" of ")[0]) <= limit
            assert plan_says(client, model, gpus, limit).startswith("Fits:")
            if limit < max_batch:
                assert f"The batch holds at most {limit} sequences here, not {max_batch}" in html
                assert plan_says(client, model, gpus, limit + 1).startswith("Does not fit:")
            if gpus > 1:
                assert "the fewest of dgx-1's that hold them" in html
                assert plan_says(client, model, gpus // 2, 1).startswith("Does not fit:")


def test_a_model_too_big_for_dgx1_refuses_naming_only_a_control_the_widget_has(
    client: TestClient, clock: Clock
) -> None:
    html = client.get(f"{URL}&model=llama-3.1-405b", headers=HX).text
    refusal = re.search(r"data-refusal>(.*?)</p>", html, re.S)
    assert refusal and "does not fit" in refusal[1] and "does not start" in refusal[1]
    assert "Pick a smaller model here" in refusal[1] and "step 14" in refusal[1]
    assert not panel_fits(html)


def test_step_8_prose_and_the_widget_name_the_same_gpus_and_batch_for_the_70b(lessons_client: TestClient) -> None:
    page = lessons_client.get("/lessons/what-ai-workloads-need/8?w1.model=llama-3.1-70b&w1.max_batch=256").text
    prose = re.search(r"the run loads it on (\d+) GPUs, the fewest that hold it, and their memory caps the batch at "
                      r"(\d+) sequences", page)
    assert prose, "step 8 no longer says where the 70B runs"
    widget = page[page.index('data-widget="serving-run"') :]
    assert f"were loaded once onto {prose[1]} GPUs" in widget
    assert value(widget, "batch").endswith(f" of {prose[2]}")
    assert f"The batch holds at most {prose[2]} sequences here, not 256" in widget
    assert panel_fits(page)  # the panel draws the same plan, fitting


def states_along(client: TestClient, clock: Clock, rates: list[float]) -> list[str]:
    """The widget's answers as the rate changes every two wall seconds (ten simulated), continuing the run."""
    html = client.get(f"{URL}&arrival_rate={rates[0]:g}&action=start", headers=HX).text
    answers = []
    for rate in rates:
        clock.now += 2
        kept = re.findall(r'<input type="hidden" name="(started_at|elapsed|run_of|segments)" value="([^"]*)">', html)
        html = client.get(f"{URL}&arrival_rate={rate:g}&" + "&".join(f"{k}={v}" for k, v in kept), headers=HX).text
        answers.append(html)
    return answers


@pytest.mark.parametrize("rates", [
    [20, 20, 2, 2, 2, 2],
    [40, 1, 1, 1, 1],
    [1, 12, 12, 5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5],
    [2, 2, 2],
])
def test_the_status_and_the_explanation_follow_the_queue(client: TestClient, clock: Clock, rates: list[float]) -> None:
    """Learner walk W21: never 'keeping up' beside a queue; draining says how long until it clears; the status
    line, the callout and the panel name one state."""
    for html in states_along(client, clock, rates):
        waiting = float(value(html, "queue").replace(",", ""))
        state = re.search(r'data-state="([a-z ]+)"', html)
        assert state, "no verdict"
        status = re.search(r"Serving run (?:running|paused|finished)[^,.]*, ([a-z ]+)", html)
        activity = re.search(r'<p class="activity">serving [^:]+: ([^<]+)</p>', html)
        assert activity
        if state[1] == "keeping up":
            assert waiting < 1 and "Keeping up." in html
        else:
            assert "Keeping up." not in html and "keeping up" not in activity[1]
        if state[1] == "draining":
            assert "Draining the queue." in html and "clears in about" in html
            assert activity[1].startswith(f"draining a queue of {value(html, 'queue')}")
        if state[1] == "saturated":
            assert "saturated" in activity[1]
        if status:
            assert state[1].split()[0] in status[1]
