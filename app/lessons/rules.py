"""Rules `gpu-classroom check` applies across loaded lessons: glossary terms marked before they are taught, markers
that name a term, and honest minutes. Each problem names its file and line."""

from __future__ import annotations

import math
import re
from collections.abc import Sequence

from app.lessons.glossary import MARKER, Glossary, Term
from app.lessons.model import Lesson, Problem, Step

WORDS_PER_MINUTE = 200
WIDGET_MINUTES: dict[str, float] = {  # a live widget: read its result, move a control or two, read again
    "plan": 2.0,  # the whole plan and the dgx-1 panel: several controls, many figures
    "five-questions": 2.0,
    "workload-sheet": 5.0,  # the learner writes a sheet of their own workload
    "profile": 4.0,  # the learner runs a timing on their own machine and enters it
}
DEFAULT_WIDGET_MINUTES = 1.5
PREDICT_MINUTES = 0.5  # committing a guess first
DRILL_MINUTES = 3.0  # a drill: read the question, work it out, answer, read the worked solution
CHEATSHEET_MINUTES = 1.0
STEP_SLACK = 0.5  # a step's minutes may be this fraction off the computed figure ...
STEP_SLACK_MINUTES = 1.0  # ... or this many minutes, whichever is larger
LESSON_SLACK = 0.15  # the lesson's minutes may be this fraction off the sum of its steps' computed figures ...
LESSON_SLACK_MINUTES = 2.0  # ... or this many minutes

_FENCE = re.compile(r"^\s*```\s*(\S*)")
_STRIP = [
    re.compile(r"\{\{.*?\}\}"),  # engine expressions: their names are code, not prose
    re.compile(r"`[^`]*`"),  # inline code
    re.compile(r"\]\([^)]*\)"),  # link targets
]


def computed_minutes(step: Step) -> float:
    """Reading time at WORDS_PER_MINUTE plus the stated time of each widget (by kind), drill and cheat sheet."""
    minutes = step.words / WORDS_PER_MINUTE
    for block in step.blocks:
        if block.kind == "widget":
            minutes += WIDGET_MINUTES.get(block.name, DEFAULT_WIDGET_MINUTES)
            minutes += PREDICT_MINUTES if block.params.get("predict") else 0.0
        elif block.kind == "drill":
            minutes += DRILL_MINUTES
        elif block.kind == "cheatsheet":
            minutes += CHEATSHEET_MINUTES
    return minutes


def minutes_problems(lessons: Sequence[Lesson]) -> list[Problem]:
    """A step whose `minutes:` is far from its computed figure, and a lesson whose `minutes:` is far from the sum of
    its steps' `minutes:`."""
    problems: list[Problem] = []
    for lesson in lessons:
        total = 0.0
        for step in lesson.steps:
            want = computed_minutes(step)
            total += step.meta.minutes  # each step's own figure, itself checked against its computed one
            if abs(step.meta.minutes - want) > max(STEP_SLACK * want, STEP_SLACK_MINUTES):
                problems.append(Problem(file=str(step.file), line=_front_line(step, "minutes:"), message=(
                    f"minutes: {step.meta.minutes:g} is far from the {want:.1f} computed "
                    f"({step.words} words at {WORDS_PER_MINUTE} a minute plus its widgets and drills); "
                    f"write minutes: {max(1, round(want))}")))
        if lesson.steps and abs(lesson.minutes - total) > max(LESSON_SLACK * total, LESSON_SLACK_MINUTES):
            spec = lesson.path / "lesson.yaml"
            problems.append(Problem(file=str(spec), line=_file_line(spec, "minutes:"), message=(
                f"minutes: {lesson.minutes:g} is far from the {total:.0f} its steps' minutes add up to; "
                f"write minutes: {math.ceil(total)}")))
    return problems


def _file_line(path: object, needle: str) -> int:
    try:
        lines = open(str(path), encoding="utf-8").read().splitlines()
    except OSError:
        return 1
    return next((i for i, line in enumerate(lines, start=1) if line.startswith(needle)), 1)


def _front_line(step: Step, needle: str) -> int:
    return _file_line(step.file, needle)


def _prose_lines(text: str) -> list[tuple[int, str]]:
    """(line number, prose) of a step file: its body outside widget, drill and cheat-sheet blocks (a reveal block is
    prose), without expressions, inline code and link targets."""
    lines = text.splitlines()
    start = 0
    if lines and lines[0].strip() == "---":
        start = next((i + 1 for i in range(1, len(lines)) if lines[i].strip() == "---"), len(lines))
    out: list[tuple[int, str]] = []
    fence: str | None = None
    for i in range(start, len(lines)):
        line = lines[i]
        match = _FENCE.match(line)
        if match:
            fence = None if fence is not None else (match.group(1) or "code")
            continue
        if fence is not None and fence != "reveal":
            continue
        for pattern in _STRIP:
            line = pattern.sub(lambda m: " " * len(m.group(0)), line)
        out.append((i + 1, line))
    return out


def glossary_problems(lessons: Sequence[Lesson], glossary: Glossary) -> list[Problem]:
    """A marker that names no glossary term; a term used on a page before the step that teaches it, with no marker
    at or before its first use on that page. 'Before' is an earlier step of the same lesson, or any step of a lesson
    that comes earlier in the home page's order."""
    order = {le.slug: i for i, le in enumerate(sorted(lessons, key=lambda le: (le.order, le.title)))}
    problems: list[Problem] = []
    for lesson in lessons:
        for step in lesson.steps:
            text = step.file.read_text(encoding="utf-8")
            problems += _step_problems(step, lesson, text, glossary, order)
    return problems


def _taught_later(term: Term, lesson: Lesson, step: Step, order: dict[str, int]) -> bool:
    if term.lesson == lesson.slug:
        return step.number < term.step
    return term.lesson in order and order[lesson.slug] < order[term.lesson]


def _step_problems(step: Step, lesson: Lesson, text: str, glossary: Glossary, order: dict[str, int]) -> list[Problem]:
    problems: list[Problem] = []
    marked: dict[str, tuple[int, int]] = {}  # term -> (line, column) of its first marker on the page
    used: dict[str, tuple[int, int, str]] = {}  # term -> (line, column, text) of its first unmarked use
    patterns = [(t, t.pattern()) for t in glossary.terms if _taught_later(t, lesson, step, order)]
    for number, line in _prose_lines(text):
        for match in MARKER.finditer(line):
            term = glossary.find(match.group(1))
            if term is None:
                problems.append(Problem(file=str(step.file), line=number,
                                        message=f"marker [[{match.group(1)}]] names no glossary term "
                                        "(add it to glossary.yaml or fix the spelling)"))
            else:
                marked.setdefault(term.term, (number, match.start()))
        bare = MARKER.sub(lambda m: " " * len(m.group(0)), line)
        for term, pattern in patterns:
            if term.term in used:
                continue
            found = pattern.search(bare)
            if found:
                used[term.term] = (number, found.start(), found.group(0))
    for term, _ in patterns:
        if term.term not in used:
            continue
        at, column, word = used[term.term]
        if term.term in marked and marked[term.term] <= (at, column):
            continue
        where = f"step {term.step}" if term.lesson == lesson.slug else f"step {term.step} of {term.lesson}"
        problems.append(Problem(file=str(step.file), line=at, message=(
            f"'{word}' is used before {where} teaches it: mark its first use on this page "
            f"[[{term.term}]]" + (f" (or [[{term.term}|{word}]])" if word != term.term else ""))))
    return problems
