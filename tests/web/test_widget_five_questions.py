"""The five questions over HTTP: each answered with an engine number and linked to the step that works it out."""

from __future__ import annotations

import re

import pytest
from fastapi.testclient import TestClient

from app.engine.models import CATALOG, get_model
from app.engine.plan import PlanRequest, make_plan
from app.engine.sizing import cluster_scale
from app.engine.text import num
from app.engine.workload import ASSUMED_MFU
from app.lessons.loader import load_lessons
from tests.conftest import LESSONS

HX = {"HX-Request": "true"}
LESSON = "/lessons/what-ai-workloads-need/"


def answer(html: str, key: str) -> str:
    found = re.search(rf'data-value="{key}">([^<]*)<', html)
    assert found
    return found.group(1)


def links(html: str, key: str) -> list[str]:
    block = re.search(rf'<li data-question="{key}">(.*?)</li>', html, re.S)
    assert block
    return re.findall(r'href="([^"]+)"', block.group(1))


def test_step_19_answers_the_five_questions_for_llama_8b(lessons_client: TestClient) -> None:
    page = lessons_client.get(LESSON + "19").text
    assert answer(page, "fit") == "Serving: 19.0 GB of 80 GB: fits."
    serve = make_plan(PlanRequest()).serve  # one user, the achieved bandwidth and a pass's fixed cost
    assert serve is not None
    said = f"Decoding for one user: memory bandwidth, {num(serve.tokens_per_second)} tokens a second"
    assert answer(page, "speed").startswith(said)
    gpus = _gpus(90)
    assert answer(page, "gpus").startswith(f"{num(gpus)} H100s ({num(-(-gpus // 8))} dgx-1 nodes)")
    # 185.0 GB since issue 12 (was 510.4): 128.5 GB of state + 44.1 GB of FlashAttention-era activations
    # + 10.6 GB of loss head + 1.8 GB of runtime, not the stored score matrix's 380 GB.
    assert "185.0 GB of 80 GB" in answer(page, "failure")
    assert "$3.00 an hour (illustrative)" in answer(page, "cost")


def opened(client: TestClient, href: str) -> tuple[str, str, str]:
    """Where a link lands (the step's address and its #anchor) and the page there; it must redirect by name."""
    moved = client.get(href.replace("&amp;", "&"), follow_redirects=False)
    assert moved.status_code == 307, (href, moved.status_code)
    location = moved.headers["location"]
    page = client.get(location.split("#")[0])
    assert page.status_code == 200, location
    return location.split("#")[0], location.partition("#")[2], page.text


def test_each_question_links_to_a_step_whose_widget_answers_it(lessons_client: TestClient) -> None:
    page = lessons_client.get(LESSON + "19").text
    for key in ("fit", "speed", "gpus", "failure", "cost"):
        hrefs = links(page, key)
        assert hrefs, key
        for href in hrefs:
            assert re.match(rf"{LESSON}step/[a-z0-9-]+(\?|$)", href), href  # by the step's name, never its number
            address, anchor, landed = opened(lessons_client, href)
            widget = re.search(r"widget=([a-z-]+)", href)
            if widget is None:  # a drill step: the drill is there
                assert 'data-drill="will-it-fit"' in landed, href
                continue
            assert anchor, href
            assert re.search(rf'<section class="widget[^"]*" id="{anchor}"[^>]*data-widget="{widget[1]}"', landed), href


def test_a_link_by_name_follows_its_step_when_the_steps_are_renumbered() -> None:
    lesson = next(le for le in load_lessons(LESSONS, strict=False)[0] if le.slug == "what-ai-workloads-need")
    steps = [lesson.steps[0], *lesson.steps]  # a step inserted at the front: every number moves up by one
    moved = lesson.model_copy(update={"steps": [s.model_copy(update={"number": n}) for n, s in enumerate(steps, 1)]})
    before = lesson.step_link("training-at-real-scale", "cluster-scale", {"model": "llama-3.1-70b"})
    after = moved.step_link("training-at-real-scale", "cluster-scale", {"model": "llama-3.1-70b"})
    assert before == f"{LESSON}6?w=1&model=llama-3.1-70b#w1" and after == f"{LESSON}7?w=1&model=llama-3.1-70b#w1"
    assert lesson.step_link("a-model-is-a-pile-of-numbers", "plan") == f"{LESSON}1#w2"  # the step's second widget


def test_a_link_to_a_step_or_widget_the_lesson_lacks_is_a_404(lessons_client: TestClient) -> None:
    assert lessons_client.get(f"{LESSON}step/no-such-step", follow_redirects=False).status_code == 404
    wrong = lessons_client.get(f"{LESSON}step/training-at-real-scale?widget=roofline", follow_redirects=False)
    assert wrong.status_code == 404


def test_another_model_changes_the_answers_and_opens_the_widgets_with_it(client: TestClient) -> None:
    html = client.get("/widgets/five-questions?model=llama-3.1-70b", headers=HX).text
    assert "does not fit; it needs 2 GPUs" in answer(html, "fit")
    gpus = cluster_scale(get_model("llama-3.1-70b"), 15e12, ASSUMED_MFU, 8, 90).gpus_needed
    assert links(html, "gpus") == [  # the answer's scenario: its tokens, MFU and GPU count
        f"{LESSON}step/training-at-real-scale?widget=cluster-scale&amp;model=llama-3.1-70b&amp;tokens=1.5e%2B13"
        f"&amp;mfu=0.4&amp;gpus={gpus}"
    ]
    assert f'href="{LESSON}step/drill-will-it-fit"' in html  # a drill takes no model


def test_a_link_with_a_model_opens_its_widget_with_that_model(lessons_client: TestClient) -> None:
    html = lessons_client.get("/widgets/five-questions?model=llama-3.1-70b", headers=HX).text
    [href] = links(html, "gpus")
    _, anchor, landed = opened(lessons_client, href)
    widget = re.search(rf'<section class="widget[^"]*" id="{anchor}".*?</form>', landed, re.S)
    assert widget and '<option value="llama-3.1-70b" selected>' in widget[0], href


def test_a_tighter_deadline_asks_for_more_gpus(client: TestClient) -> None:
    slow = answer(client.get("/widgets/five-questions?deadline_days=90", headers=HX).text, "gpus")
    fast = answer(client.get("/widgets/five-questions?deadline_days=30", headers=HX).text, "gpus")
    assert slow.startswith(f"{num(_gpus(90))} H100s") and fast.startswith(f"{num(_gpus(30))} H100s")
    assert _gpus(30) == pytest.approx(3 * _gpus(90), abs=3)


def _gpus(days: int) -> int:
    """GPUs that train the 8B on 15 T tokens by the deadline at the assumed 40 % MFU (model FLOPs with attention)."""
    return cluster_scale(get_model("llama-3.1-8b"), 15e12, ASSUMED_MFU, 8, days).gpus_for_deadline


def test_bad_input_is_refused_beside_its_field(client: TestClient) -> None:
    r = client.get("/widgets/five-questions?deadline_days=0", headers=HX)
    assert r.status_code == 422
    assert re.search(r'id="w1-deadline_days-error" hx-swap-oob="true">Must be at least 0', r.text)


def _speed_figure(text: str) -> float:
    found = re.search(r"([\d,]+(?:\.\d+)?) tokens a second", text)
    assert found, text
    return float(found[1].replace(",", ""))


@pytest.mark.parametrize("model", list(CATALOG))
def test_the_decode_link_opens_a_widget_showing_the_answers_speed(lessons_client: TestClient, model: str) -> None:
    """'Work it out: decode' keeps the scenario: the widget it opens shows the tokens a second the answer quotes."""
    html_ = lessons_client.get(f"/widgets/five-questions?model={model}", headers=HX).text
    said = answer(html_, "speed")
    if "no speed" in said:
        return
    decode = links(html_, "speed")[1]  # compute time, decode, the roofline
    _, anchor, landed = opened(lessons_client, decode)
    section = re.search(rf'<section class="widget[^"]*" id="{anchor}".*?</section>', landed, re.S)
    assert section, decode
    figure_at = r'data-value="tokens_per_second">([\d,.]+)<|One sequence\s*</dt>\s*<dd[^>]*>([\d,.]+)'
    shown = re.search(figure_at, section[0])
    if shown is None:  # step 15's predict box first: it asks about the very model and precision of the answer
        assert f"produce for one user of {CATALOG[model].name} in bf16?" in section[0], decode
        return
    figure = float((shown[1] or shown[2]).replace(",", ""))
    assert figure == pytest.approx(_speed_figure(said), abs=0.5), decode  # the answer rounds to whole tokens


@pytest.mark.parametrize("model", list(CATALOG))
def test_the_starved_pipeline_speed_is_for_gpus_that_hold_the_run(lessons_client: TestClient, model: str) -> None:
    """A tokens-a-second figure for training is given only for a GPU count the run fits on, and its link opens
    step 5's run on that count, which starts rather than refusing."""
    html_ = lessons_client.get(f"/widgets/five-questions?model={model}", headers=HX).text
    detail = re.search(r'<li data-question="failure">.*?<p class="working">(.*?)</p>', html_, re.S)
    assert detail
    [run] = [h for h in links(html_, "failure") if "widget=training-run" in h]
    _, anchor, landed = opened(lessons_client, run)
    section = re.search(rf'<section class="widget[^"]*" id="{anchor}".*?</section>', landed, re.S)
    assert section
    if "tokens a second" in detail[1]:
        assert "data-refusal" not in section[0], run
    else:
        assert "No speed is given" in detail[1] and "data-refusal" in section[0]
