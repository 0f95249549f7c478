"""Neighbours in a class get different questions, even from a drill with a small choice space (the walk: Ann and
Ben got the same first question from a declared drill of 27 combinations)."""

from __future__ import annotations

import random

from hypothesis import given, settings
from hypothesis import strategies as st

from app.drills.base import Drill, Part, Question
from app.drills.registry import all_drills
from app.drills.seeds import Room, learner_question, question_space, space_size


def _small(rng: random.Random) -> Question:
    """3 models × 3 batches × 3 contexts: 27 questions, as the walk's declared drill."""
    model, batch, context = rng.choice("ABC"), rng.choice([1, 4, 16]), rng.choice([4096, 8192, 32768])
    return Question(drill="small", title="t", prompt=f"{model} {batch} {context}",
                    parameters={"model": model, "batch": batch, "context": context},
                    parts=[Part(id="x", prompt="x", kind="count", unit="GPUs")])


SMALL = Drill(name="lesson/small", title="Small", description="", generate=_small, solve=lambda q: None)  # type: ignore[arg-type,return-value]


def face(q: Question) -> str:
    return q.model_dump_json(exclude={"seed"})


def test_a_small_choice_space_is_found_whole_and_a_large_one_is_not() -> None:
    assert space_size(SMALL) == 27
    assert question_space(all_drills()["bytes-per-parameter"]) is None


@settings(max_examples=300, deadline=None)
@given(code=st.text(alphabet="23456789ABCDEFGHJKMNPQRSTUVWXYZ", min_size=6, max_size=6),
       seat=st.integers(min_value=0, max_value=600), number=st.integers(min_value=0, max_value=40))
def test_neighbouring_seats_never_share_a_question_and_a_seat_never_repeats_one_in_a_row(
        code: str, seat: int, number: int) -> None:
    def q(s: int, n: int) -> str:
        return face(learner_question(SMALL, f"learner-{s}", n, Room(code, s)))

    assert q(seat, number) != q(seat + 1, number)  # the next seat
    assert q(seat, number) != q(seat, number + 1)  # their next question
    assert q(seat, number + 1) != q(seat + 1, number)  # a neighbour one question behind
    assert q(seat, number) == q(seat, number)  # and the same seat, number and class always give the same


def test_a_class_of_27_sees_all_27_questions_once_and_another_class_deals_them_differently() -> None:
    first = [face(learner_question(SMALL, f"l{s}", 0, Room("K7M3QX", s))) for s in range(27)]
    other = [face(learner_question(SMALL, f"l{s}", 0, Room("X3NM2S", s))) for s in range(27)]
    assert len(set(first)) == 27 and set(first) == set(other) and first != other


def test_a_question_answered_stays_the_learners_when_they_join_a_class() -> None:
    alone = learner_question(SMALL, "ann", 0)
    assert learner_question(SMALL, "ann", 0, Room("K7M3QX", 3), seen=alone.seed) == alone


def test_a_drill_with_many_questions_keeps_each_learners_own_seeds_in_a_class() -> None:
    drill = all_drills()["will-it-fit"]
    assert learner_question(drill, "ann", 2, Room("K7M3QX", 0)) == learner_question(drill, "ann", 2)
