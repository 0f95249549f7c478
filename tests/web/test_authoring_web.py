"""An author's lesson through HTTP: author mode keeps serving the last good version of a lesson broken by a save (its
problem shown in a banner that stays in view, and only in author mode), and a class of the walk's lesson carries
what the author wrote for the instructor: the drill's description on the dashboard and projector, the step's note on
the dashboard, and each learner's free-text answer on their page and in the export, never graded."""

from __future__ import annotations

import csv
import html
import io
import json
import re
import shutil
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from app.drills.base import typed_form
from app.main import create_app
from app.pages.lesson_drills import find_drill
from tests.conftest import FIXTURE_LESSONS, make_settings
from tests.web.classroom_helpers import Room, csrf_of, room_for

AUTHORING = Path(__file__).resolve().parents[1] / "fixtures" / "authoring"
DRILL = "kv-cache-size/kv-size"
WAIT = 15.0  # seconds for the watcher to see a save on a busy machine


@pytest.fixture
def mine(tmp_path: Path) -> Path:
    shutil.copytree(AUTHORING, tmp_path / "my-lessons")
    return tmp_path / "my-lessons"


def saved_and_reloaded(client: TestClient, file: Path, old: str, new: str) -> None:
    """Save an edit the way an editor does and wait until author mode has reloaded the lesson."""
    state = client.app.state.author  # type: ignore[attr-defined]
    before = state.version_of("kv-cache-size")
    file.write_text(file.read_text().replace(old, new, 1))
    deadline = time.monotonic() + WAIT
    while state.version_of("kv-cache-size") == before:
        assert time.monotonic() < deadline, "author mode did not reload the saved lesson"
        time.sleep(0.1)


def test_a_broken_save_keeps_the_last_good_version_and_shows_its_problem_only_in_author_mode(
    tmp_path: Path, mine: Path
) -> None:
    settings = make_settings(tmp_path, FIXTURE_LESSONS, lessons_dirs=str(mine))
    step = mine / "kv-cache-size" / "02-watch-it-grow.md"
    with TestClient(create_app(settings, author=True)) as author:
        good = author.get("/lessons/kv-cache-size/2").text
        assert 'data-widget="plan"' in good and "has-problems" not in good
        saved_and_reloaded(author, step, "batch_size: 8", "batch_size: eight")
        page = author.get("/lessons/kv-cache-size/2")
        assert page.status_code == 200 and 'data-widget="plan"' in page.text  # the last good version, still served
        opening = re.search(r'<div class="([^"]*)" id="author-mode"', page.text)
        assert opening and opening.group(1) == "author-mode has-problems"  # sticky: in view as the page scrolls
        banner = html.unescape(page.text.split('id="author-mode"', 1)[1].split("</div>", 1)[0])
        assert f"{step}:12: widget plan: batch_size: 'eight' is not a whole number" in banner
        assert "The page shows the lesson's last version without problems" in banner
        assert "has-problems" not in author.get("/lessons/tiny/1").text  # another lesson: no banner of this one
    with TestClient(create_app(settings)) as served:  # the same folder served: no banner, the lesson left out
        page = served.get("/lessons/kv-cache-size/2")
        assert page.status_code == 404 and "author-mode" not in page.text
        assert "is not served: its files have problems for its author to fix" in html.unescape(page.text)
        assert served.get("/lessons/tiny/1").status_code == 200


@pytest.fixture
def kv_room(tmp_path: Path, mine: Path) -> Iterator[Room]:
    yield from room_for(make_settings(tmp_path, mine))


def answer_with_an_explanation(room: Room, code: str, why: str) -> None:
    learner = room.learner()
    learner.joins(code, "Ann")
    page = learner.open("/lessons/kv-cache-size/3")
    params = re.search(r'data-drill-parameters="([^"]*)"', page)
    block = re.search(r'name="block" value="(\d+)"', page)
    number = re.search(r'name="question" value="(\d+)"', page)
    assert params and block and number
    drill = find_drill(room.app.state.lessons, DRILL)
    assert drill is not None
    q = drill.question(0).model_copy(update={"parameters": json.loads(html.unescape(params.group(1)))})
    right = {p.id: typed_form(p, drill.solve(q).expected[p.id]) for p in q.parts}
    form = {"csrf_token": csrf_of(page), "lesson": "kv-cache-size", "step": "3", "block": block.group(1),
            "question": number.group(1), **{f"answer-{k}": v for k, v in {**right, "why": why}.items()}}
    done = learner.client.post(f"/drills/{DRILL}/answer", data=form, headers={"HX-Request": "true"})
    assert done.status_code == 200 and "✓ All right" in done.text
    assert "Not graded: your instructor reads it." in done.text


def test_a_class_of_the_authors_lesson_carries_the_description_the_note_and_the_free_text(kv_room: Room) -> None:
    created = kv_room.instructor.create(lesson="kv-cache-size")
    dashboard = html.unescape(kv_room.instructor.open_dashboard(created))
    assert "The KV cache of a catalog model for a batch of conversations, in GB." in dashboard
    assert "Declared in a lesson" not in dashboard
    notes = dashboard.split('id="notes-title"', 1)[1].split("</section>", 1)[0]
    assert "Step 3: Drill: size the cache" in notes
    assert "Before revealing this drill, ask who remembered the 2 for keys and values." in notes
    answer_with_an_explanation(kv_room, created.code, "Every token of every conversation keeps its own K & V.")
    learners = re.findall(rf'href="(/teach/{created.code}/learners/\d+)"', kv_room.instructor.client.get(
        f"/teach/{created.code}").text)
    learner_page = html.unescape(kv_room.instructor.client.get(learners[0]).text)
    assert "Every token of every conversation keeps its own K & V." in learner_page
    export = kv_room.instructor.client.get(f"/teach/{created.code}/export/attempts.csv").text
    rows = list(csv.DictReader(io.StringIO(export)))
    why = next(r for r in rows if r["part"] == "why")
    kv = next(r for r in rows if r["part"] == "kv")
    assert why["typed"] == "Every token of every conversation keeps its own K & V."
    assert why["part_correct"] == "" and kv["part_correct"] == "yes"  # the text part is neither right nor wrong
    assert kv_room.instructor.post("reveal", drill=f"3:{DRILL}", shown="1").status_code == 303
    projector = html.unescape(kv_room.instructor.client.get(f"/teach/{created.code}/projector").text)
    reveal = projector[projector.index('data-revealed="true"'):]
    assert "The KV cache of a catalog model for a batch of conversations, in GB." in reveal
    assert 'data-part="why"' not in reveal  # nothing to count right or wrong
    assert "Before revealing this drill" not in kv_room.learner().client.get("/lessons/kv-cache-size/3").text


def test_author_modes_terminal_counts_problems_and_warnings_apart(caplog: pytest.LogCaptureFixture) -> None:
    """'reloaded kv: 1 warning', not '1 problem', when a lesson only has a warning; each line follows."""
    from types import SimpleNamespace

    from app.lessons.model import Problem
    from app.web.author import report

    few = Problem(file="my/kv/02-drill.md", line=12, message="27 different questions", warning=True)
    wrong = Problem(file="my/kv/01-intro.md", line=3, message="unknown widget")
    for found, said in (([few], "reloaded kv: 1 warning"), ([wrong, few], "reloaded kv: 1 problem, 1 warning"),
                        ([], "reloaded kv: ok")):
        caplog.clear()
        with caplog.at_level("WARNING", logger="gpu_classroom.author"):
            report(SimpleNamespace(problems_of=lambda _slug, f=found: f), {"kv"}, "reloaded")  # type: ignore[arg-type]
        lines = caplog.records[-1].getMessage().splitlines()
        assert lines[0] == said and lines[1:] == [f"  {p}" for p in found]
