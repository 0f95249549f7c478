"""Spot the mistake: 44 scenarios of 22 mistakes, four options without close cousins, feedback that teaches."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from app.drills.spot_the_mistake import COUSINS, catalogue, cousins
from tests.unit.drills.drill_helpers import drill, right_answers

D = drill("spot-the-mistake")
ROOT = Path(__file__).resolve().parents[3]


def test_the_data_has_22_mistakes_and_two_scenarios_of_each() -> None:
    data = catalogue()
    assert len(data.mistakes) == 22 and len({m.id for m in data.mistakes}) == 22
    assert len(data.scenarios) == 44
    ids = {m.id for m in data.mistakes}
    for m in ids:
        assert sum(s.mistake == m for s in data.scenarios) >= 1, m
    assert all(s.mistake in ids for s in data.scenarios)
    assert all(group <= ids for group in COUSINS)


def test_every_mistake_links_to_a_step_that_exists() -> None:
    for m in catalogue().mistakes:
        slug, _, number = m.teaches.partition("/")
        spec = yaml.safe_load((ROOT / "lessons" / slug / "lesson.yaml").read_text())
        steps = [name for section in spec["sections"] for name in section["steps"]]
        assert 1 <= int(number) <= len(steps), m.id


@pytest.mark.parametrize("seed", range(300))
def test_four_options_include_the_answer_and_no_close_cousin_of_it(seed: int) -> None:
    q = D.question(seed)
    options = q.parameters["options"]
    answer = catalogue().scenario(q.parameters["scenario"]).mistake
    assert len(options) == len(set(options)) == 4 and answer in options
    assert not (set(options) - {answer}) & cousins(answer)


def test_every_scenario_comes_up() -> None:
    seen = {D.question(s).parameters["scenario"] for s in range(600)}
    assert seen == {s.id for s in catalogue().scenarios}


def test_right_answer_names_the_principle_and_the_slide_that_teaches_it() -> None:
    q = next(D.question(s) for s in range(200) if D.question(s).parameters["scenario"] == "fp8-on-ampere")
    fb = D.grade(q, right_answers(D, q))
    assert fb.correct
    assert fb.principle and "natively" in fb.principle
    assert fb.link == "/lessons/what-is-gpu-infrastructure/14"


def test_a_wrong_pick_says_what_that_mistake_is_about_and_still_teaches_the_right_one() -> None:
    q = D.question(4)
    right = right_answers(D, q)["mistake"]
    wrong = next(c for c in q.part("mistake").choices if c.value != right)
    fb = D.grade(q, {"mistake": wrong.value})
    assert not fb.correct and fb.parts[0].mistake == wrong.names[0]
    assert wrong.label in fb.parts[0].message
    assert fb.link and re.fullmatch(r"/lessons/what-is-gpu-infrastructure/\d+", fb.link)


def test_the_answer_can_be_given_by_letter_by_title_or_by_id() -> None:
    q = D.question(9)
    letter = right_answers(D, q)["mistake"]
    choice = next(c for c in q.part("mistake").choices if c.value == letter)
    for typed in (letter, choice.label, choice.names[0], choice.label.upper()):
        assert D.grade(q, {"mistake": typed}).correct, typed


def test_hints_rule_out_distractors_and_never_the_answer() -> None:
    for seed in range(100):
        q = D.question(seed)
        solution = D.solve(q)
        answer = next(c for c in q.part("mistake").choices if c.value == solution.expected["mistake"])
        assert len(solution.hints) == 2
        assert all(answer.label not in h for h in solution.hints)
        assert all(solution.principle not in h for h in solution.hints)  # type: ignore[operator]
