"""Done means done (issue 13, item 2): a drill step is done by mastery only; pressing on past it is a skip,
and the overview, the instructor's grid, the learner page and the exports say "skipped", not "done"."""

from __future__ import annotations

import csv
import io
import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from tests.conftest import make_settings
from tests.web.classroom_helpers import Room, Student, csrf_of, room_for

SLUG = "skip"
LESSON_YAML = """slug: skip
title: Skip practice
summary: Prose, a drill, prose.
minutes: 5
sections:
  - title: All
    steps: [01-read.md, 02-drill.md, 03-read.md]
"""
PROSE = """---
title: {title}
summary: Read this.
minutes: 1
---

Some prose.
"""
DRILL = """---
title: The drill
summary: Practise bytes per parameter.
minutes: 3
---

Some prose before the drill.

```drill bytes-per-parameter
mastery: 3
```
"""


@pytest.fixture
def room(tmp_path: Path) -> Iterator[Room]:
    folder = tmp_path / "lessons" / SLUG
    folder.mkdir(parents=True)
    (folder / "lesson.yaml").write_text(LESSON_YAML)
    (folder / "01-read.md").write_text(PROSE.format(title="Read first"))
    (folder / "02-drill.md").write_text(DRILL)
    (folder / "03-read.md").write_text(PROSE.format(title="Read last"))
    yield from room_for(make_settings(tmp_path, tmp_path / "lessons"))


def press_on(learner: Student, number: int) -> str:
    """The step's primary button, as a learner presses it; returns where it leads."""
    page = learner.open(f"/lessons/{SLUG}/{number}")
    r = learner.client.post(f"/lessons/{SLUG}/{number}/done", data={"csrf_token": csrf_of(page)},
                            follow_redirects=False)
    assert r.status_code == 303
    return str(r.headers["location"])


def test_a_drill_step_offers_skip_for_now_and_pressing_it_skips_rather_than_completes(room: Room) -> None:
    ada = room.learner()
    assert "Done, next →" in ada.open(f"/lessons/{SLUG}/1")
    drill_page = ada.open(f"/lessons/{SLUG}/2")
    assert "Skip for now →" in drill_page and "Done, next" not in drill_page
    press_on(ada, 1)
    assert press_on(ada, 2) == f"/lessons/{SLUG}/3"
    ada.open(f"/lessons/{SLUG}/3")
    overview = ada.open(f"/lessons/{SLUG}")
    assert 'data-step="1" data-state="done"' in overview
    assert 'data-step="2" data-state="skipped"' in overview and "drill skipped" in overview
    assert "1 done" in overview  # the skipped drill is not counted as done
    assert "Skip for now →" in ada.open(f"/lessons/{SLUG}/2")  # still not done on a second visit


def test_the_instructor_sees_skipped_not_done_in_the_grid_learner_page_and_exports(room: Room) -> None:
    created = room.instructor.create(lesson=SLUG)
    room.instructor.open_dashboard(created)
    ada = room.learner()
    ada.joins(created.code, "Ada")
    press_on(ada, 1)
    press_on(ada, 2)
    ada.open(f"/lessons/{SLUG}/3")
    live = room.instructor.live().text
    row = re.search(r'<tr data-learner="(\d+)" data-step="3">.*?</tr>', live, re.S)
    assert row, live[:800]
    cells = re.findall(r'<td class="c[^"]*"', row.group(0))
    assert cells == ['<td class="c c-done"', '<td class="c c-skipped"', '<td class="c c-current"'], cells
    get = room.instructor.client.get
    learner_page = get(f"/teach/{created.code}/learners/{row.group(1)}").text
    assert re.search(r'data-step="2" data-state="skipped">.*?drill skipped', learner_page, re.S)
    person = next(csv.DictReader(io.StringIO(get(f"/teach/{created.code}/export/learners.csv").text)))
    assert (person["step_1_state"], person["step_2_state"]) == ("done", "skipped")
    assert person["step_2_done"] != person["step_1_done"]  # the drill step is not done
    data = json.loads(get(f"/teach/{created.code}/export/class.json").text)
    assert [s["state"] for s in data["learners"][0]["steps"]] == ["done", "skipped", "current"]


def test_finishing_the_last_step_lands_on_a_completion_page(room: Room) -> None:
    ada = room.learner()
    press_on(ada, 1)
    press_on(ada, 2)
    assert press_on(ada, 3) == f"/lessons/{SLUG}/complete"
    page = ada.open(f"/lessons/{SLUG}/complete")  # the drill was skipped: the lesson is not finished (X1)
    assert "You finished" not in page and "Not finished yet: Skip practice" in page and "2 of 3 steps done." in page
    assert re.search(r'data-step="2" data-state="left"><a href="/lessons/skip/2">Step 2: The drill</a> '
                     r'\(drill not mastered yet\)', page)
    assert re.search(r'data-state="skipped">Not yet mastered: <a href="/lessons/skip/2">The drill', page)
    assert "Continue at step" not in page


def test_the_flagship_completion_page_links_the_cheat_sheet_and_the_companion_lessons(
    lessons_client: TestClient,
) -> None:
    page = lessons_client.get("/lessons/what-ai-workloads-need/complete")
    assert page.status_code == 200
    assert 'href="/lessons/what-ai-workloads-need/20">The cheat sheet</a>' in page.text
    others = [slug for slug in re.findall(r'href="/lessons/([\w-]+)">', page.text) if slug != "what-ai-workloads-need"]
    assert len(others) == 2, others
    assert 'data-step="7" data-state="skipped"' in page.text  # no drill mastered yet


def test_a_learner_who_pressed_on_to_the_end_past_a_drill_is_told_what_is_left_not_finished(room: Room) -> None:
    ada = room.learner()
    for number in (1, 2, 3):
        press_on(ada, number)
    overview = ada.open(f"/lessons/{SLUG}")
    assert "You finished" not in overview and "1 of 3 steps are not done yet" in overview
    assert f'href="/lessons/{SLUG}/2">Go to step 2, the first not done</a>' in overview
    assert f'href="/lessons/{SLUG}/complete">What is left</a>' in overview


def test_a_learner_part_way_through_is_offered_to_continue(room: Room) -> None:
    ada = room.learner()
    press_on(ada, 1)
    overview = ada.open(f"/lessons/{SLUG}")
    assert "Continue at step" in overview and "You finished" not in overview
