"""The drill mechanism: seeds, the registry and lesson blocks, the self-check, and the mastery streak."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime

import pytest

from app.classroom.attempts import Attempt, streak
from app.drills.base import Solution, Variant
from app.drills.registry import all_drills, validate_block
from app.drills.seeds import MAX_SEED, learner_seed
from app.drills.selfcheck import check_question, run
from tests.unit.drills.drill_helpers import drill

LEARNER_A = "0b7c5c8e-1111-4e1d-9a55-5c1e8c0f0001"
LEARNER_B = "0b7c5c8e-2222-4e1d-9a55-5c1e8c0f0002"


@pytest.mark.parametrize("name", ["bytes-per-parameter", "will-it-fit", "spot-the-mistake"])
def test_the_same_learner_drill_and_number_give_the_same_question(name: str) -> None:
    d = drill(name)
    first = d.question(learner_seed(LEARNER_A, name, 0))
    again = d.question(learner_seed(LEARNER_A, name, 0))
    assert first == again


@pytest.mark.parametrize("name", ["bytes-per-parameter", "will-it-fit", "spot-the-mistake"])
def test_the_next_number_and_another_learner_give_other_questions(name: str) -> None:
    d = drill(name)
    mine = [d.question(learner_seed(LEARNER_A, name, n)).parameters for n in range(6)]
    theirs = [d.question(learner_seed(LEARNER_B, name, n)).parameters for n in range(6)]
    assert len({repr(p) for p in mine}) >= 4  # six questions in a row are not all the same one
    assert sum(a != b for a, b in zip(mine, theirs, strict=True)) >= 4


def test_seeds_fit_a_signed_64_bit_column_and_differ_by_drill() -> None:
    seeds = {learner_seed(LEARNER_A, name, 0) for name in all_drills()}
    assert len(seeds) == 3 and all(0 <= s <= MAX_SEED for s in seeds)


def test_lesson_blocks_are_checked_against_the_registry() -> None:
    assert validate_block("bytes-per-parameter", {"mastery": 3}) == []
    assert validate_block("will-it-fit", {}) == []
    assert validate_block("nope", {})[0].startswith("unknown drill 'nope'")
    assert "mastery" in validate_block("spot-the-mistake", {"mastery": 0})[0]
    assert "colour" in validate_block("spot-the-mistake", {"colour": "red"})[0]


def test_every_drill_passes_its_own_self_check() -> None:
    assert [str(p) for p in run(40)] == []


def test_self_check_catches_an_answer_key_the_grader_disagrees_with() -> None:
    d = drill("bytes-per-parameter")
    q = d.question(1)
    good = d.solve(q)
    broken = replace(d, solve=lambda _q: good.model_copy(update={"expected": {**good.expected, "gpus": 99.0}}))
    problems = check_question(broken, q, good)
    assert problems and "marked wrong on ['gpus']" in problems[0]


def test_self_check_catches_a_wrong_answer_that_does_not_get_its_message() -> None:
    d = drill("bytes-per-parameter")
    q = d.question(1)
    silent = d.solve(q).model_copy(update={"variants": [Variant(part="gpus", id="ghost", value=9.0, message="")]})
    problems = check_question(d, q, silent)
    assert any("should get the message of 'ghost'" in p for p in problems)


def test_self_check_catches_malformed_input_that_is_graded() -> None:
    d = drill("bytes-per-parameter")
    q = d.question(1)
    lenient = replace(d, malformed=({"bytes_per_parameter": "16", "total": "128 GB", "gpus": "2"},))
    problems = check_question(lenient, q, d.solve(q))
    assert any("graded as an attempt" in p for p in problems)


def test_a_solution_without_hints_is_reported() -> None:
    d = drill("will-it-fit")
    q = d.question(0)
    bare: Solution = d.solve(q).model_copy(update={"hints": []})
    assert any("no hints" in p for p in check_question(d, q, bare))


def _attempt(n: int, question: int, correct: bool) -> Attempt:
    return Attempt(id=n, learner_id=LEARNER_A, drill="d", lesson="l", step=1, question=question, seed=0, answers={},
                   parsed={}, correct_parts={}, score=float(correct), correct=correct, mistake=None,
                   created_at=datetime(2025, 1, 1, tzinfo=UTC))


def test_the_streak_counts_first_tries_back_from_the_latest_question() -> None:
    assert streak([]) == 0
    assert streak([_attempt(1, 0, True), _attempt(2, 1, True), _attempt(3, 2, True)]) == 3
    assert streak([_attempt(1, 0, True), _attempt(2, 1, False), _attempt(3, 2, True)]) == 1


def test_a_second_try_after_the_solution_does_not_count() -> None:
    tries = [_attempt(1, 0, True), _attempt(2, 1, False), _attempt(3, 1, True), _attempt(4, 2, True)]
    assert streak(tries) == 1


def test_skipped_questions_neither_count_nor_break_the_streak() -> None:
    assert streak([_attempt(1, 0, True), _attempt(2, 3, True)]) == 2
