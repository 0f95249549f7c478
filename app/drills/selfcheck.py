"""Drills test themselves: over many seeds, the engine's own answer scores full marks, every listed wrong
answer gets its own message, and malformed input is refused rather than graded.

`gpu-classroom check` calls run(seeds) and prints each problem as file:line: message.
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass

from app.drills.base import AnswerErrors, Drill, Question, Solution, typed_form
from app.drills.registry import all_drills


@dataclass(frozen=True)
class Problem:
    """Something wrong with a drill, with where its module is."""

    file: str
    line: int
    message: str

    def __str__(self) -> str:
        return f"{self.file}:{self.line}: {self.message}"


def _where(drill: Drill) -> tuple[str, int]:
    try:
        lines, start = inspect.getsourcelines(drill.solve)
        return inspect.getsourcefile(drill.solve) or drill.name, start
    except (OSError, TypeError):
        return drill.name, 0


def check_question(drill: Drill, q: Question, solution: Solution) -> list[str]:
    """What is wrong with one generated question, in sentences (empty when it is sound)."""
    out: list[str] = []
    right = {p.id: typed_form(p, solution.expected[p.id]) for p in q.parts}
    feedback = drill.grade(q, right)
    if not feedback.correct:
        wrong = [r.id for r in feedback.parts if not r.correct]
        out.append(f"seed {q.seed}: the engine's own answer {right} is marked wrong on {wrong}")
    for v in solution.variants:
        answers = {**right, v.part: typed_form(q.part(v.part), v.value)}
        result = next(r for r in drill.grade(q, answers).parts if r.id == v.part)
        if result.correct or result.mistake != v.id:
            out.append(
                f"seed {q.seed}: wrong answer '{answers[v.part]}' for {v.part} should get the message of "
                f"'{v.id}' but got {'full marks' if result.correct else repr(result.mistake)}"
            )
    for bad in drill.malformed:
        try:
            drill.grade(q, bad)
        except AnswerErrors:
            continue
        out.append(f"seed {q.seed}: malformed answers {bad} were graded as an attempt")
    if not solution.hints:
        out.append(f"seed {q.seed}: no hints")
    return out


def run(seeds: int = 200) -> list[Problem]:
    """Every drill over seeds 0..seeds-1; a Problem for each thing that is wrong."""
    problems: list[Problem] = []
    for drill in all_drills().values():
        file, line = _where(drill)
        for seed in range(seeds):
            try:
                q = drill.question(seed)
                found = check_question(drill, q, drill.solve(q))
            except Exception as exc:  # noqa: BLE001 - a crash is a problem to report, not to hide
                found = [f"seed {seed}: {type(exc).__name__}: {exc}"]
            problems += [Problem(file=file, line=line, message=f"drill {drill.name}: {m}") for m in found]
    return problems
