"""One plan drives the dgx-1 panel and the page says which (issue 27): on every step at most one widget places work,
the panel names it, a weights-only calculator never turns it red, a planned job is not drawn running, and the plan
widget says which GPU counts work before the learner types one."""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest
from fastapi.testclient import TestClient

from app.engine.models import CATALOG
from app.engine.workload import split_counts
from app.lessons.loader import load_lessons
from app.lessons.model import Lesson, Step
from app.main import create_app
from app.pages.steps import widget_views
from app.widgets.registry import get_widget
from tests.conftest import LESSONS, make_settings
from tests.web.test_widget_plan_predict import guess

HX = {"HX-Request": "true"}
FLAGSHIP = "/lessons/what-ai-workloads-need"
ALL_LESSONS, _ = load_lessons(LESSONS, strict=False)
STEPS = [(lesson, step) for lesson in ALL_LESSONS for step in lesson.steps]


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TestClient]:
    """One app over the real lessons for the sweep of every step (reading pages changes nothing they show)."""
    with TestClient(create_app(make_settings(tmp_path_factory.mktemp("site"), LESSONS))) as c:
        yield c


def panel(html: str) -> str:
    found = re.search(r'<aside id="dgx-panel".*?</aside>', html, re.S)
    assert found, "no panel"
    return found[0]


def shown_by(html: str) -> str:
    found = re.search(r'data-shown-by="([^"]*)"', panel(html))
    assert found
    return found[1]


@pytest.mark.parametrize(("lesson", "step"), STEPS, ids=[f"{le.slug}-{s.number}" for le, s in STEPS])
def test_at_most_one_widget_on_a_step_places_work_and_the_panel_names_it(
    site: TestClient, lesson: Lesson, step: Step
) -> None:
    views = widget_views(lesson, step, {})
    placing = [v for v in views.values() if v.node is not None]
    assert len(placing) <= 1, f"{[v.name for v in placing]} all drive the panel of one step"
    html = site.get(f"/lessons/{lesson.slug}/{step.number}").text
    named = shown_by(html)
    if named:  # the panel names a widget of this step, and says so in words
        titles = {w.title for v in views.values() if (w := get_widget(v.name)) is not None}
        assert named in titles and f"Showing the work of &ldquo;{named}&rdquo; on this page." in html
    else:
        assert "Nothing on this page has placed work on dgx-1 yet." in html


@pytest.mark.parametrize("parameters", ["8.03e9", "70e9", "405e9", "1e12"])
def test_the_weights_only_calculator_never_changes_the_panel_the_plan_draws(lessons_client: TestClient,
                                                                            parameters: str) -> None:
    """Learner walk W1: 70e9 in the calculator turned the panel red beside a plan that fits."""
    guess(lessons_client, 1, 2, "25")
    page = lessons_client.get(f"{FLAGSHIP}/1").text
    assert shown_by(page) == "Plan on dgx-1" and 'data-fits="true"' in panel(page)
    key = re.search(r'data-key="([0-9a-f]+)"', panel(page))
    assert key
    r = lessons_client.get(f"/widgets/weight-storage?w=1&lesson=what-ai-workloads-need&step=1&parameters={parameters}"
                           f"&bits=16&panel_key={key[1]}", headers=HX)
    assert r.status_code == 200 and 'id="dgx-panel"' not in r.text
    reloaded = lessons_client.get(f"{FLAGSHIP}/1?w1.parameters={parameters}").text
    assert panel(reloaded) == panel(page)


@pytest.mark.parametrize("gpus", [1, 2, 4, 8])
def test_a_training_job_is_drawn_planned_until_launch_is_pressed(client: TestClient, gpus: int) -> None:
    """Learner walk W10: before Launch no GPU is busy or draws a working GPU's power; after it, the job computes."""
    query = f"/widgets/plan?mode=train&sharding=zero3&gpus={gpus}&launch=true&model=llama-3.1-8b"
    planned = panel(client.get(query, headers=HX).text)
    if 'data-fits="false"' in planned:
        assert "100 % busy" not in planned
        return
    assert "planned, not launched, press Launch to start it" in planned
    assert re.findall(r'class="gpu-util">([^<]*)<', planned) == ["0 % busy · 70 W"] * 8
    launched = client.get(query + "&launched=true", headers=HX).text
    assert "Launch accepted" in launched and "launched, computing" in panel(launched)
    assert re.findall(r'class="gpu-util">([^<]*)<', panel(launched))[:gpus] == ["100 % busy · 700 W"] * gpus


@pytest.mark.parametrize("model", sorted(CATALOG))
def test_the_gpu_hint_names_the_counts_that_work_for_the_model_on_screen(client: TestClient, model: str) -> None:
    """Learner walk W3: the hint promised 1 to 8 while 3, 5, 6 and 7 were refused in unexplained words."""
    html = client.get(f"/widgets/plan?model={model}&gpus=1&w=1", headers=HX).text
    hint = re.search(r'id="w1-gpus-hint"[^>]*>([^<]*)<', html)
    assert hint
    work = [n for n in split_counts(CATALOG[model]) if n <= 8]
    listed = [int(n) for n in re.findall(r"\d+", hint[1].split(" on dgx-1")[0].split(":")[-1])]
    assert listed == work
    assert "attention heads cannot be cut" in hint[1] and "equal share of every layer" in hint[1]
    for gpus in range(1, 9):
        r = client.get(f"/widgets/plan?model={model}&gpus={gpus}&w=1", headers=HX)
        assert (r.status_code == 200) is (gpus in work), gpus
        if gpus not in work:
            error = re.search(r'id="w1-gpus-error"[^>]*>([^<]*)<', r.text)
            assert error and "(tensor parallel)" in error[1] and "equal share of every layer" in error[1]
    train = client.get(f"/widgets/plan?model={model}&gpus=3&mode=train&w=1", headers=HX).text
    assert "1 to 8 on dgx-1" in train
