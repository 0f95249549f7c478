"""A class's drills in words: the outline a class keeps of its lesson, each stored attempt put into words and
figures for the exports, and each revealed drill's answers summed up for the projector (app/drills/room.py)."""

from __future__ import annotations

from collections.abc import Mapping

from app.classroom.export import AttemptText, Describe, PartText
from app.classroom.outline import Outline, StepOutline
from app.classroom.report import AttemptLine
from app.drills.base import AnswerErrors, Drill
from app.drills.room import Answer, RoomSummary, summarise
from app.lessons.model import Lesson, Step
from app.pages.lesson_drills import drill_for, find_drill


def outline_for(lesson: Lesson) -> Outline:
    """The part of a lesson a class keeps: steps, titles, minutes, drills, and what each drill's parts ask."""
    steps = tuple(StepOutline(number=s.number, title=s.title, minutes=s.meta.minutes,
                              drills=tuple(b.name for b in s.blocks if b.kind == "drill"),
                              note=s.meta.instructor_note or "", about=_about(s)) for s in lesson.steps)
    labels: dict[str, dict[str, str]] = {}
    for step in lesson.steps:
        for block in step.blocks:
            drill = drill_for(block) if block.kind == "drill" else None
            if drill is not None and drill.name not in labels:
                labels[drill.name] = {p.id: p.prompt for p in drill.question(0).parts}
    return Outline(slug=lesson.slug, title=lesson.title, steps=steps, labels=labels)


def _about(step: Step) -> tuple[tuple[str, str], ...]:
    """(drill, what it asks in a line) for each drill of a step that says: a declared drill's `description`."""
    return tuple((b.name, str(b.params["description"])) for b in step.blocks
                 if b.kind == "drill" and b.declared and isinstance(b.params.get("description"), str))


def own_description(lessons: list[Lesson], name: str) -> str | None:
    """What a drill asks, for the room: a declared drill without a `description` of its own has none to show
    (not "Declared in a lesson: …"); None leaves a built-in drill's own."""
    for lesson in lessons:
        for step in lesson.steps:
            for block in step.blocks:
                if block.kind == "drill" and block.declared and block.name == name:
                    text = block.params.get("description") if isinstance(block.params, Mapping) else None
                    return str(text) if text else ""
    return None


def describe_attempts(lessons: list[Lesson]) -> Describe:
    """Puts a stored attempt into words for an export, by grading the answers as typed again: its question's text,
    and per part what it asked, its unit, the answer as read and the expected value (in that unit) and the mistake
    this part's answer shows (what the learner was told)."""

    def describe(a: AttemptLine) -> AttemptText:
        drill = find_drill(lessons, a.drill)
        if drill is None:  # a drill since removed from the lessons: its ids and stored values are all there is
            return AttemptText()
        question = drill.question(a.seed)
        try:
            graded = {r.id: r for r in drill.grade(question, a.answers).parts}
        except AnswerErrors:
            graded = {}
        parts = {}
        for p in question.parts:
            r = graded.get(p.id)
            parts[p.id] = PartText(prompt=p.prompt, unit=p.unit, value=r.value if r else None,
                                   expected=r.expected if r else None, mistake=(r.mistake or "") if r else "",
                                   mistake_name=r.message if r and r.mistake else "")
        return AttemptText(question=question.prompt, parts=parts)

    return describe


def room_summaries(lessons: list[Lesson], answers: Mapping[str, list[tuple[int, dict[str, str]]]],
                   shown: Mapping[str, int] | None = None) -> dict[str, RoomSummary]:
    """For each revealed drill ('step:drill'), its answers summed up for a room; for a drill in `shown`, the
    question of that seed stays on screen with its right answer and the engine's worked solution."""
    out = {}
    for key, rows in answers.items():
        name = key.partition(":")[2]
        drill: Drill | None = find_drill(lessons, name)
        if drill is not None:
            out[key] = summarise(drill, [Answer(seed=seed, answers=typed) for seed, typed in rows],
                                 pinned=(shown or {}).get(key), description=own_description(lessons, name))
    return out
