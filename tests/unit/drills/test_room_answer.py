"""The projector's "show the answer": the question on screen with each graded part's right answer, as the
learner's feedback writes it, and the engine's worked solution; a free-text part has no right answer to show."""

from __future__ import annotations

import random

from app.drills.base import Drill, Part, Question, Solution, write
from app.drills.registry import all_drills
from app.drills.room import Answer, summarise


def test_the_answer_on_screen_is_the_pinned_questions_own_with_its_worked_solution() -> None:
    drill = all_drills()["bytes-per-parameter"]
    latest, pinned = drill.question(11), drill.question(22)
    summary = summarise(drill, [Answer(seed=11, answers={}), Answer(seed=22, answers={})], pinned=22)
    worked = drill.solve(pinned)
    assert summary.example == pinned.prompt != latest.prompt and summary.example_seed == 22
    assert [(e.prompt, e.answer) for e in summary.expected] == [
        (p.prompt, write(p, worked.expected[p.id])) for p in pinned.parts]
    assert summary.solution == worked.solution and summary.answer_shown
    unpinned = summarise(drill, [Answer(seed=11, answers={})])
    assert unpinned.example == latest.prompt and not unpinned.answer_shown and unpinned.solution == []


def _with_text(rng: random.Random) -> Question:
    n = rng.choice([2, 4])
    return Question(drill="why", title="Why", prompt=f"{n} GPUs: how many? Why?", parameters={"n": n},
                    parts=[Part(id="count", prompt="How many", kind="count", unit="GPUs"),
                           Part(id="why", prompt="Why", kind="text")])


def test_a_free_text_part_shows_no_right_answer() -> None:
    drill = Drill(name="l/why", title="Why", description="", generate=_with_text,
                  solve=lambda q: Solution(expected={"count": float(q.parameters["n"])}, solution=["Count them."]))
    summary = summarise(drill, [Answer(seed=1, answers={"count": "2", "why": "because"})], pinned=1)
    assert [e.prompt for e in summary.expected] == ["How many"] and summary.solution == ["Count them."]
