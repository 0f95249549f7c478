"""A learner keeps the hints they opened on a question, and never meets the same question twice in a row."""

from __future__ import annotations

import re

import pytest

from app.drills.registry import all_drills
from app.drills.seeds import learner_question, learner_seed
from app.web.security import LEARNER_COOKIE, Signer
from tests.web.drill_helpers import HX, STEPS, DrillLearner, drill_client, drills  # noqa: F401

NAMES = list(STEPS)
# A learner whose first two bytes-per-parameter questions, as first drawn, are the same question.
REPEATER = "00000000-0000-0000-0000-00000001e14b"


def hints_shown(page: str) -> list[str]:
    block = re.search(r'<div class="drill-hints".*?</div>', page, re.S)
    assert block, "no hints block"
    return re.findall(r"<li>(.*?)</li>", block.group(0))


def open_hint(drills: DrillLearner, name: str, shown: int) -> str:
    query = f"lesson=drills&step={STEPS[name]}&block=1&shown={shown}"
    response = drills.client.get(f"/drills/{name}/hint?{query}", headers=HX)
    assert response.status_code == 200
    return response.text


@pytest.mark.parametrize("name", NAMES)
def test_hints_opened_on_a_question_stay_open_after_a_reload_and_an_answer(drills: DrillLearner, name: str) -> None:
    drills.open(name)
    open_hint(drills, name, 0)
    two = hints_shown(open_hint(drills, name, 1))
    assert len(two) == 2
    assert hints_shown(drills.open(name)) == two  # a reload, no ?hints= in the address
    answered = drills.answer(name, drills.right_answers(name))
    assert answered.status_code == 200 and hints_shown(answered.text) == two
    assert hints_shown(drills.open(name)) == two


@pytest.mark.parametrize("name", NAMES)
def test_the_next_question_starts_without_hints(drills: DrillLearner, name: str) -> None:
    drills.open(name)
    open_hint(drills, name, 0)
    moved = drills.next_question(name)
    assert hints_shown(moved.text) == [] and hints_shown(drills.open(name)) == []


def test_the_same_question_never_comes_twice_in_a_row(drills: DrillLearner) -> None:
    name = "bytes-per-parameter"
    drill = all_drills()[name]
    assert drill.question(learner_seed(REPEATER, name, 0)).parameters == drill.question(
        learner_seed(REPEATER, name, 1)).parameters  # as first drawn, question 2 repeats question 1
    drills.client.cookies.set(LEARNER_COOKIE, Signer("test-secret-key").cookie.dumps(REPEATER))
    first = drills.open(name)
    second = drills.next_question(name).text
    assert drills.parameters(second) != drills.parameters(first)
    assert drills.question_number(drills.open(name)) == 1


@pytest.mark.parametrize("name", NAMES)
def test_no_learner_meets_a_question_twice_in_a_row(name: str) -> None:
    drill = all_drills()[name]
    for learner in (f"00000000-0000-0000-0000-{n:012x}" for n in range(0, 40_000, 997)):
        questions = [learner_question(drill, learner, n).parameters for n in range(8)]
        assert all(a != b for a, b in zip(questions, questions[1:], strict=False)), (learner, questions)
