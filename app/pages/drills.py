"""Drill views on a step, and the page flows of a drill (answer, hint, next question): what the routers call.

A learner's question comes from a seed of their id, the drill and the question number; the expected answer is
computed when grading and never leaves the server before an attempt.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field

from pydantic import BaseModel, ConfigDict, Field

from app.classroom import attempts
from app.classroom.db import Database
from app.classroom.ratelimit import RateLimited
from app.drills.base import AnswerErrors as AnswerErrors  # re-exported: routers reach drills through this service
from app.drills.base import Coverage, PartResult
from app.drills.base import Drill as Drill
from app.drills.base import Feedback as Feedback
from app.drills.base import Question as Question
from app.drills.seeds import MAX_SEED as MAX_SEED
from app.drills.seeds import Room, learner_question
from app.engine.placement import NodeLoad
from app.lessons.model import Block, Lesson
from app.pages.errors import NotFound
from app.pages.lesson_drills import drill_for
from app.pages.lessons import find_lesson

ANSWERS_PER_MINUTE = 20  # a learner typing answers never gets near this; a script does


class DrillView(BaseModel):
    """One drill block on a step, for one learner: the question, what they typed, and the feedback."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    name: str = Field(description="The drill's name (registry key or a declared drill's)")
    title: str = Field(description="The drill's title")
    did: str = Field(description="DOM id of the drill, e.g. d3 for block 3")
    index: int = Field(description="Position of the block in the step")
    lesson: str = Field(description="The lesson's slug")
    step: int = Field(description="The step's number")
    number: int = Field(description="Question number, from 0")
    question: Question = Field(description="The question dealt to this learner (from their seed)")
    values: dict[str, str] = Field(default_factory=dict, description="Answers as typed")
    errors: dict[str, str] = Field(default_factory=dict, description="Why an answer could not be read")
    feedback: Feedback | None = Field(default=None, description="The grade of the last answer, with the solution")
    tries: int = Field(default=0, description="Graded attempts at this question")
    streak: int = Field(default=0, description="Right at the first try in a row")
    mastery: int = Field(default=3, description="The streak that masters the drill")
    mastered: bool = Field(default=False, description="Mastered already")
    just_mastered: bool = Field(default=False, description="Mastered by this answer: the step is marked done")
    hints: list[str] = Field(default_factory=list, description="Hints shown so far")
    hints_total: int = Field(default=0, description="Hints the question has")
    message: str = Field(default="", description="A notice above the question, e.g. too many answers")
    link_title: str = Field(default="", description="The title of the step a feedback link opens")
    node: NodeLoad | None = Field(default=None, description="The work the question puts on dgx-1, for the panel")
    coverage: Coverage | None = Field(default=None, description="Topics met and right, for a drill with a spread")

    def value(self, part: str) -> str:
        return self.values.get(part, "")

    def error(self, part: str) -> str:
        return self.errors.get(part, "")

    def result(self, part: str) -> PartResult | None:
        return next((r for r in self.feedback.parts if r.id == part), None) if self.feedback else None

    @property
    def parameters_json(self) -> str:
        return json.dumps(self.question.parameters, separators=(",", ":"))

    @property
    def counts(self) -> bool:
        """Whether the next submission counts toward mastery (only a question's first try does)."""
        return self.tries == 0

    @property
    def status(self) -> str:
        """Where the learner stands against mastery, never past a target ("4 of 3"): the streak up to its target,
        then, for a drill that also needs a spread, how many different ones are still to get right."""
        cov, first = self.coverage, "right at the first try"
        if self.mastered:
            spread = f", {cov.needed} different ones among them" if cov else ""
            return f"{self.mastery} {first} in a row{spread}."
        if cov is None:
            return f"{self.streak} of {self.mastery} {first} in a row to master it."
        right = min(len(cov.right), cov.needed)
        if self.streak < self.mastery:
            return (f"{self.streak} of {self.mastery} {first} in a row, and {right} of {cov.needed} different ones "
                    f"{first}, to master it.")
        more = cov.needed - right
        return (f"{self.mastery} {first} in a row: done ({self.streak} so far). To master it, {more} more "
                f"different one{'' if more == 1 else 's'} {first}: {right} of {cov.needed} so far.")

    @property
    def announcement(self) -> str:
        """What a screen reader hears after a submission."""
        if self.errors:
            return f"{len(self.errors)} answer{'s' if len(self.errors) > 1 else ''} could not be read."
        if self.feedback is None:
            return self.message or f"Question {self.number + 1}."
        fb = self.feedback
        head = "All right." if fb.correct else f"{fb.right_parts} of {fb.graded_parts} parts right."
        return head + (" Drill mastered: this step is done." if self.just_mastered else "")


def drill_blocks(lesson: Lesson, step: int) -> list[tuple[int, Block]]:
    """(position in the step, block) of every drill block of a step."""
    found = lesson.step(step)
    return [(i, b) for i, b in enumerate(found.blocks) if b.kind == "drill"] if found else []


def _step_title(lessons: list[Lesson], link: str | None) -> str:
    """The title of the step a link like /lessons/slug/5 points at, if there is one."""
    if not link or not link.startswith("/lessons/"):
        return ""
    slug, _, number = link.removeprefix("/lessons/").partition("/")
    lesson = next((le for le in lessons if le.slug == slug), None)
    step = lesson.step(int(number)) if lesson and number.isdigit() else None
    return step.title if step else ""


async def build_view(
    db: Database, learner: str, lesson: Lesson, step: int, index: int, block: Block, lessons: list[Lesson], *,
    hints: int = 0, typed: Mapping[str, str] | None = None, errors: Mapping[str, str] | None = None,
    message: str = "", just_mastered: bool = False, status: attempts.DrillStatus | None = None,
) -> DrillView | None:
    """The learner's current question in a drill block, with their last attempt graded again as feedback.

    `status`: where the learner stands, when the caller has just read or written it (saves a query)."""
    drill = drill_for(block)
    if drill is None:
        return None
    status = status or await attempts.status(db, learner, drill.name, lesson.slug)
    question = current_question(drill, learner, status)
    last = status.on_question[-1] if status.on_question else None
    feedback = _regraded(drill, question, last.answers) if last is not None and not errors else None
    solution_hints = drill.solve(question).hints
    hints = max(hints, status.hints)  # the hints opened on this question stay open
    view = DrillView(
        name=drill.name, title=drill.title, did=f"d{index}", index=index, lesson=lesson.slug, step=step,
        number=status.question, question=question,
        values=dict(typed) if typed is not None else (dict(last.answers) if last else {}),
        errors=dict(errors or {}), feedback=feedback, tries=len(status.on_question), streak=status.streak,
        mastery=drill.settings.model_validate(block.params).mastery, mastered=status.mastered,
        just_mastered=just_mastered, hints=solution_hints[: max(0, min(hints, len(solution_hints)))],
        hints_total=len(solution_hints), message=message,
        link_title=_step_title(lessons, feedback.link if feedback else None),
        coverage=drill.coverage(attempts.first_tries(status.attempts)) if drill.topic is not None else None,
    )
    if feedback is not None and drill.node_load is not None:
        view.node = drill.node_load(question)
    return view


def current_question(drill: Drill, learner: str, status: attempts.DrillStatus) -> Question:
    """The learner's current question: the one they answered under its number, else the one their seat in their
    class is dealt (app/drills/seeds.py), else their own."""
    room = Room(*status.room) if status.room else None
    return learner_question(drill, learner, status.question, room, status.seed_of(status.question))


def _regraded(drill: Drill, question: Question, answers: Mapping[str, str]) -> Feedback | None:
    """Stored answers graded again; they were read once, so if the parser changed since, show none."""
    try:
        return drill.grade(question, answers)
    except AnswerErrors:
        return None


async def drill_views(
    db: Database, learner: str, lesson: Lesson, step: int, query: Mapping[str, str], lessons: list[Lesson]
) -> dict[int, DrillView]:
    """A view for every drill block of a step (query `hints=N` shows N hints)."""
    typed = query.get("hints", "")
    hints = int(typed) if re.fullmatch(r"[0-9]{1,2}", typed) else 0
    views = {}
    for i, block in drill_blocks(lesson, step):
        view = await build_view(db, learner, lesson, step, i, block, lessons, hints=min(hints, 10))
        if view is not None:
            views[i] = view
    return views


@dataclass(frozen=True)
class DrillPlace:
    """Where a drill form was sent from: the block of a step, and the question the learner saw."""

    lesson: str
    step: int
    block: int
    question: int = 0
    answers: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Located:
    """The drill of a block, with its lesson and block; `at` is where the form said it was."""

    drill: Drill
    lesson: Lesson
    block: Block
    at: DrillPlace
    lessons: list[Lesson]

    async def view(
        self, db: Database, learner: str, *, hints: int = 0, typed: Mapping[str, str] | None = None,
        errors: Mapping[str, str] | None = None, message: str = "", just_mastered: bool = False,
        status: attempts.DrillStatus | None = None,
    ) -> DrillView:
        """The learner's view of this drill block (see build_view)."""
        view = await build_view(
            db, learner, self.lesson, self.at.step, self.at.block, self.block, self.lessons, hints=hints, typed=typed,
            errors=errors, message=message, just_mastered=just_mastered, status=status,
        )
        assert view is not None  # the block is this drill: locate made sure
        return view

    async def open_hint(self, db: Database, learner: str, shown: int) -> DrillView:
        """The view with one more hint open; it stays open after an answer and a reload."""
        status = await attempts.status(db, learner, self.drill.name, self.lesson.slug)
        status.hints = await attempts.open_hints(db, learner, self.drill.name, status.question, shown + 1)
        return await self.view(db, learner, status=status)


def locate(lessons: list[Lesson], name: str, at: DrillPlace) -> Located:
    """The drill, lesson and block a form names; 404 unless that block is this drill."""
    lesson = find_lesson(at.lesson, lessons)
    block = dict(drill_blocks(lesson, at.step)).get(at.block)
    drill = drill_for(block) if block is not None and block.name == name else None
    if drill is None or block is None:
        raise NotFound(f"There is no '{name}' drill at that place in the lesson.")
    return Located(drill=drill, lesson=lesson, block=block, at=at, lessons=lessons)


@dataclass(frozen=True)
class Outcome:
    """What a drill form did: the view to show, its HTTP status, and whether it was graded and stored."""

    view: DrillView
    status: int = 200
    retry_after: int | None = None
    graded: bool = False


async def answer(db: Database, learner: str, found: Located) -> Outcome:
    """Grade the learner's answers to their current question; unreadable answers are refused, not counted.

    Two short transactions: one read (where the learner stands, whether their class holds them back), the
    grading in between, and one write (the rate-limit count, the attempt, mastery) with a single commit."""
    drill, at, typed = found.drill, found.at, dict(found.at.answers)
    before = await attempts.before_answer(db, learner, drill.name, found.lesson.slug, at.step)
    if before.held_at is not None:
        return await held(db, learner, found, before)
    status = before.status
    q = current_question(drill, learner, status)
    errors, feedback = _grade(drill, q, typed) if at.question == status.question else (None, None)
    mastery = drill.settings.model_validate(found.block.params).mastery
    spread_met = drill.topic is None or drill.coverage(attempts.first_tries(status.attempts)).spread_met_with(
        drill.topic(q))
    try:
        status, newly = await attempts.after_answer(
            db, learner, drill.name, status, _attempt(found, q, typed, feedback), limit_key=f"drill-answer:{learner}",
            limit=ANSWERS_PER_MINUTE, window_seconds=60, mastery=mastery, spread_met=spread_met,
        )
    except RateLimited as exc:
        message = (f"That is more than {ANSWERS_PER_MINUTE} answers in a minute. Wait {exc.retry_after} s and "
                   "press Check answer again: your answers are still in the form, and nothing was graded.")
        view = await found.view(db, learner, typed=typed, message=message, status=status)
        view.feedback, view.node = None, None
        return Outcome(view, 429, retry_after=exc.retry_after)
    if at.question != status.question:  # 200, not 409: htmx swaps it in, and the learner sees the current question
        message = f"That question was replaced by question {status.question + 1}: here it is."
        return Outcome(await found.view(db, learner, message=message, status=status))
    if errors is not None:
        return Outcome(await found.view(db, learner, typed=typed, errors=errors, status=status), 422)
    return Outcome(await found.view(db, learner, just_mastered=newly, status=status), graded=True)


def _grade(drill: Drill, q: Question, typed: Mapping[str, str]) -> tuple[dict[str, str] | None, Feedback | None]:
    """The feedback on the answers, or why they could not be read."""
    try:
        return None, drill.grade(q, typed)
    except AnswerErrors as exc:
        return exc.errors, None


def _attempt(found: Located, q: Question, typed: Mapping[str, str], fb: Feedback | None) -> attempts.NewAttempt | None:
    """The attempt to store for graded answers; none when nothing was graded."""
    if fb is None:
        return None
    return attempts.NewAttempt(
        lesson=found.lesson.slug, step=found.at.step, question=found.at.question, seed=q.seed,
        answers={p.id: typed.get(p.id, "") for p in q.parts},
        parsed={r.id: r.value for r in fb.parts},  # in each part's unit (GB for a size)
        correct_parts={r.id: r.correct for r in fb.parts if r.graded}, score=fb.score, mistake=fb.mistake,
    )


async def held(db: Database, learner: str, found: Located, before: attempts.Before) -> Outcome:
    """423 beside the drill: the learner's class is held at an earlier step; nothing is graded or stored."""
    message = (f"Your class is held at step {before.held_at}: this drill opens when your instructor releases "
               "the class. Nothing was graded or stored.")
    view = await found.view(db, learner, typed=found.at.answers, message=message, status=before.status)
    view.feedback, view.node = None, None
    return Outcome(view, 423)


async def next_question(db: Database, learner: str, found: Located) -> Outcome:
    """Move on to a new question (pressing twice on the same question moves on once)."""
    before = await attempts.before_answer(db, learner, found.drill.name, found.lesson.slug, found.at.step)
    if before.held_at is not None:
        return await held(db, learner, found, before)
    await attempts.next_question(db, learner, found.drill.name, found.at.question)
    return Outcome(await found.view(db, learner), graded=True)
