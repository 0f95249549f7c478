"""Helpers for drill tests: answers as a learner would type them, and questions of a chosen kind."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from app.drills.base import Drill, Question, typed_form
from app.drills.registry import get_drill


def drill(name: str) -> Drill:
    found = get_drill(name)
    assert found is not None, name
    return found


def right_answers(d: Drill, q: Question) -> dict[str, str]:
    """The engine's own answers, typed."""
    solution = d.solve(q)
    return {p.id: typed_form(p, solution.expected[p.id]) for p in q.parts}


def answers_for(name: str, parameters: dict[str, Any]) -> dict[str, str]:
    """The right answers to the question a page shows, from its public parameters (as an outsider would)."""
    d = drill(name)
    template = d.question(0)
    q = template.model_copy(update={"parameters": parameters})
    return right_answers(d, q)


def find(d: Drill, wanted: Callable[[Question], bool], seeds: int = 3000) -> Question:
    """The first generated question that has what a test needs."""
    for seed in range(seeds):
        q = d.question(seed)
        if wanted(q):
            return q
    raise AssertionError("no such question in the first seeds")
