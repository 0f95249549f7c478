"""Progress is honest (issue 27, W8 and X1): a "predict first" step is done only once its guess is in, and a
lesson reads "You finished" on its completion page, overview and the home page only when every step is done;
otherwise they say what is left."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from app.lessons.loader import load_lessons
from app.lessons.model import Lesson
from app.main import create_app
from app.pages.lessons import widget_blocks
from app.pages.predictions import question
from tests.conftest import LESSONS, Learner, make_settings

HX = {"HX-Request": "true"}


def _predict_steps() -> list[tuple[str, int, list[tuple[int, str]]]]:
    """Every step of the served lessons with a "predict first" widget: (lesson, step, [(widget, answer)])."""
    lessons, _ = load_lessons([LESSONS])
    found = []
    for lesson in lessons:
        for step in lesson.steps:
            asks = [(i, spec.answer_choice) for i, block, widget in widget_blocks(step)
                    if (spec := question(widget, block)) is not None]
            if asks:
                found.append((lesson.slug, step.number, asks))
    return found


PREDICT_STEPS = _predict_steps()


def _state(client: TestClient, slug: str, number: int) -> str:
    match = re.search(rf'data-step="{number}" data-state="(\w+)"', client.get(f"/lessons/{slug}").text)
    assert match, f"step {number} is not on the overview"
    return match.group(1)


def _guess(client: TestClient, slug: str, number: int, w: int, choice: str) -> None:
    learner = Learner(client)
    token = learner.csrf(learner.open(f"/lessons/{slug}/{number}"))
    data = {"csrf_token": token, "lesson": slug, "step": str(number), "w": str(w), "guess": "20", "choice": choice}
    assert client.post("/predictions", data=data, follow_redirects=False).status_code == 303


def test_the_lessons_have_predict_steps_to_check() -> None:
    assert len(PREDICT_STEPS) >= 4, PREDICT_STEPS  # the walk pressed on past four in the flagship alone


@pytest.mark.parametrize(("slug", "number", "asks"), PREDICT_STEPS, ids=[f"{s}-{n}" for s, n, _ in PREDICT_STEPS])
def test_pressing_on_without_a_guess_leaves_a_predict_step_not_done_and_the_guess_makes_it_done(
    lessons_client: TestClient, slug: str, number: int, asks: list[tuple[int, str]]
) -> None:
    learner = Learner(lessons_client)
    page = learner.open(f"/lessons/{slug}/{number}")
    assert re.search(r'data-nav="next" type="submit">(Skip for now →|Finish lesson)', page), "says it skips"
    learner.finish_step(slug, number)
    assert _state(lessons_client, slug, number) != "done"
    for w, choice in asks:
        _guess(lessons_client, slug, number, w, choice)
    again = learner.open(f"/lessons/{slug}/{number}")
    assert re.search(r'data-nav="next" type="submit">(Done, next →|Finish lesson)', again)
    learner.finish_step(slug, number)
    assert _state(lessons_client, slug, number) == "done"


SLUG = "three"
LESSON_YAML = """slug: three
title: Three steps
summary: Prose, a guess, prose.
minutes: 3
sections:
  - title: All
    steps: [01-read.md, 02-guess.md, 03-read.md]
"""
PROSE = """---
title: {title}
summary: Read this.
minutes: 1
---

Some prose.
"""
GUESS = """---
title: Guess first
summary: Guess, then look.
minutes: 1
---

```widget plan
model: llama-3.1-8b
predict: true
```
"""


@pytest.fixture
def three(tmp_path: Path) -> Iterator[TestClient]:
    """A fresh app over a three-step lesson whose middle step asks for a guess."""
    folder = tmp_path / "lessons" / SLUG
    folder.mkdir(parents=True)
    (folder / "lesson.yaml").write_text(LESSON_YAML)
    (folder / "01-read.md").write_text(PROSE.format(title="Read first"))
    (folder / "02-guess.md").write_text(GUESS)
    (folder / "03-read.md").write_text(PROSE.format(title="Read last"))
    with TestClient(create_app(make_settings(tmp_path, tmp_path / "lessons"))) as c:
        yield c


def _walk(client: TestClient, *, guess: bool) -> str:
    """Press on through every step (guessing on step 2 or not); where the last press lands."""
    learner = Learner(client)
    learner.finish_step(SLUG, 1)
    if guess:
        _guess(client, SLUG, 2, 1, "yes")
    learner.finish_step(SLUG, 2)
    return learner.finish_step(SLUG, 3)


def test_a_lesson_pressed_through_without_its_guess_is_not_finished_and_says_what_is_left(three: TestClient) -> None:
    assert _walk(three, guess=False) == f"/lessons/{SLUG}/complete"
    page = three.get(f"/lessons/{SLUG}/complete").text
    assert "You finished" not in page and "Not finished yet: Three steps" in page
    assert "2 of 3 steps done." in page
    assert re.search(r'data-step="2" data-state="left"><a href="/lessons/three/2">Step 2: Guess first</a> '
                     r"\(opened, not done yet\)", page)
    overview = three.get(f"/lessons/{SLUG}").text
    assert "You finished" not in overview and "1 of 3 steps are not done yet" in overview
    assert 'href="/lessons/three/2">Go to step 2, the first not done</a>' in overview
    home = three.get("/").text
    assert "You finished" not in home
    assert 'href="/lessons/three/complete" data-resume="left">1 of 3 steps of Three steps not done yet' in home


def test_a_lesson_with_every_step_done_is_finished_everywhere(three: TestClient) -> None:
    _walk(three, guess=True)
    page = three.get(f"/lessons/{SLUG}/complete").text
    assert "You finished Three steps" in page and "All 3 steps done." in page and "Left to do" not in page
    assert "You finished this lesson" in three.get(f"/lessons/{SLUG}").text
    assert 'data-resume="complete">You finished Three steps' in three.get("/").text


def test_a_completion_page_opened_early_lists_every_step_left(three: TestClient) -> None:
    page = three.get(f"/lessons/{SLUG}/complete").text
    assert "You finished" not in page and "0 of 3 steps done." in page
    left = re.findall(r'data-step="(\d)" data-state="left">.*?\((not opened yet)\)', page)
    assert left == [("1", "not opened yet"), ("2", "not opened yet"), ("3", "not opened yet")]


def _lessons() -> list[Lesson]:
    return load_lessons([LESSONS])[0]


@pytest.mark.parametrize("slug", [le.slug for le in _lessons()])
def test_no_served_lesson_reads_finished_after_only_its_last_step(lessons_client: TestClient, slug: str) -> None:
    lesson = next(le for le in _lessons() if le.slug == slug)
    last = len(lesson.steps)
    Learner(lessons_client).finish_step(slug, last)  # the walk: "Finish lesson" on the last step only
    for url in (f"/lessons/{slug}/complete", f"/lessons/{slug}", "/"):
        assert "You finished" not in lessons_client.get(url).text, url


def test_a_guess_committed_in_place_turns_skip_for_now_into_done_next(three: TestClient) -> None:
    learner = Learner(three)
    page = learner.open(f"/lessons/{SLUG}/2")
    assert re.search(r'id="step-next"[^>]*>Skip for now →</button>', page)
    data = {"csrf_token": learner.csrf(page), "lesson": SLUG, "step": "2", "w": "1", "guess": "20", "choice": "yes"}
    r = three.post("/predictions", data=data, headers=HX)
    assert r.status_code == 200
    assert re.search(r'id="step-next"[^>]*hx-swap-oob="true">Done, next →</button>', r.text)
    refused = three.post("/predictions", data={**data, "guess": "lots"}, headers=HX)
    assert "step-next" not in refused.text or "Done, next" in refused.text  # stored already: the guess stands
