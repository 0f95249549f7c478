"""The attempts CSV an instructor downloads says, in words, which question was asked and which mistake an
answer shows, not only ids and slugs."""

from __future__ import annotations

import csv
import html
import io
from collections.abc import Iterator
from pathlib import Path

import pytest

from app.drills.registry import all_drills
from app.drills.seeds import learner_question
from tests.conftest import make_settings
from tests.unit.drills.drill_helpers import answers_for
from tests.web.classroom_helpers import Room, room_for
from tests.web.drill_helpers import DrillLearner, write_lesson

LEARNER = "5d0c7a1e-2f4b-4c8e-9a6d-3b1f0e7c2a94"


@pytest.fixture
def drill_room(tmp_path: Path) -> Iterator[Room]:
    yield from room_for(make_settings(tmp_path, write_lesson(tmp_path)))


def test_the_attempts_csv_carries_the_question_text_and_the_mistake_in_words(drill_room: Room) -> None:
    created = drill_room.instructor.create(lesson="drills")
    drill_room.instructor.open_dashboard(created)
    ada = drill_room.learner(LEARNER)
    ada.joins(created.code, "Ada")
    drill = all_drills()["bytes-per-parameter"]
    question = learner_question(drill, LEARNER, 0)
    wrong = next(v for v in drill.solve(question).variants if v.part == "bytes_per_parameter")
    answers = {**answers_for(drill.name, question.parameters), "bytes_per_parameter": f"{wrong.value:g}"}
    learner = DrillLearner(ada.client)
    page = html.unescape(learner.answer(drill.name, answers).text)
    assert wrong.message in page  # what the learner was told about their answer

    text = drill_room.instructor.client.get(f"/teach/{created.code}/export/attempts.csv").text
    rows = {r["part"]: r for r in csv.DictReader(io.StringIO(text))}
    assert rows["bytes_per_parameter"]["question_text"] == question.prompt
    assert question.prompt.split(" (")[0] in page
    assert rows["bytes_per_parameter"]["part_prompt"] == "Bytes of training state per parameter"
    assert rows["bytes_per_parameter"]["mistake"] == wrong.id
    assert rows["bytes_per_parameter"]["mistake_name"] == wrong.message
    assert rows["total"]["part_correct"] == "yes" and rows["total"]["mistake_name"] == ""
