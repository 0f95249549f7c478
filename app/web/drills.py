"""Drills on the page (answer, hint, next question, for htmx and without JavaScript) and the drills API.

HTML:  POST /drills/{name}/answer   grade the current question and store the attempt (CSRF, rate-limited)
       GET  /drills/{name}/hint     one more hint
       POST /drills/{name}/next     move on to a new question (CSRF)
JSON:  GET  /api/drills                          the drills
       GET  /api/drills/{name}/question?seed=N   a question without its answer
       POST /api/drills/{name}/grade             grade answers for a seed: per part, the score, the solution

{name} is a built-in drill's name, or `lesson-slug/drill-id` for a drill declared in a lesson's block.
A learner's question comes from a seed of their id, the drill and the question number; the expected
answer is computed when grading and never leaves the server before an attempt.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Annotated, Any

from fastapi import APIRouter, Body, Depends, Form, HTTPException, Query, Request
from fastapi.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from pydantic import BaseModel, ConfigDict, Field

from app.classroom import attempts
from app.classroom.db import Database
from app.classroom.ratelimit import RateLimited
from app.drills.base import AnswerErrors, Coverage, Drill, Feedback, PartResult, Question
from app.drills.seeds import MAX_SEED, learner_seed
from app.engine.placement import NodeLoad
from app.lessons.model import Block, Lesson
from app.web.contexts import panel_view
from app.web.deps import DB, LearnerId, Lessons, Tpl, find_lesson, is_htmx
from app.web.lesson_drills import drill_for, every_drill, find_drill
from app.web.security import require_csrf
from app.web.templating import Templates

router = APIRouter()
api = APIRouter(prefix="/api/drills", tags=["drills"])

TEMPLATE = "drills/drill.html"
ANSWERS_PER_MINUTE = 20  # a learner typing answers never gets near this; a script does
ANSWER_PREFIX = "answer-"


class DrillView(BaseModel):
    """One drill block on a step, for one learner: the question, what they typed, and the feedback."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    name: str
    title: str
    did: str = Field(description="DOM id of the drill, e.g. d3 for block 3")
    index: int = Field(description="Position of the block in the step")
    lesson: str
    step: int
    number: int = Field(description="Question number, from 0")
    question: Question
    values: dict[str, str] = Field(default_factory=dict, description="Answers as typed")
    errors: dict[str, str] = Field(default_factory=dict, description="Why an answer could not be read")
    feedback: Feedback | None = None
    tries: int = Field(default=0, description="Graded attempts at this question")
    streak: int = 0
    mastery: int = 3
    mastered: bool = False
    just_mastered: bool = False
    hints: list[str] = Field(default_factory=list, description="Hints shown so far")
    hints_total: int = 0
    message: str = Field(default="", description="A notice above the question, e.g. too many answers")
    link_title: str = ""
    node: NodeLoad | None = None
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
    def announcement(self) -> str:
        """What a screen reader hears after a submission."""
        if self.errors:
            return f"{len(self.errors)} answer{'s' if len(self.errors) > 1 else ''} could not be read."
        if self.feedback is None:
            return self.message or f"Question {self.number + 1}."
        fb = self.feedback
        head = "All right." if fb.correct else f"{fb.right_parts} of {len(fb.parts)} parts right."
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
    db: Database,
    learner: str,
    lesson: Lesson,
    step: int,
    index: int,
    block: Block,
    lessons: list[Lesson],
    *,
    hints: int = 0,
    typed: Mapping[str, str] | None = None,
    errors: Mapping[str, str] | None = None,
    message: str = "",
    just_mastered: bool = False,
    status: attempts.DrillStatus | None = None,
) -> DrillView | None:
    """The learner's current question in a drill block, with their last attempt graded again as feedback.

    `status`: where the learner stands, when the caller has just read or written it (saves a query)."""
    drill = drill_for(block)
    if drill is None:
        return None
    settings = drill.settings.model_validate(block.params)
    status = status or await attempts.status(db, learner, drill.name)
    question = drill.question(learner_seed(learner, drill.name, status.question))
    last = status.on_question[-1] if status.on_question else None
    feedback = None
    if last is not None and not errors:
        try:
            feedback = drill.grade(question, last.answers)
        except AnswerErrors:  # stored answers were read once; if the parser changed, show none
            feedback = None
    solution_hints = drill.solve(question).hints
    view = DrillView(
        name=drill.name,
        title=drill.title,
        did=f"d{index}",
        index=index,
        lesson=lesson.slug,
        step=step,
        number=status.question,
        question=question,
        values=dict(typed) if typed is not None else (dict(last.answers) if last else {}),
        errors=dict(errors or {}),
        feedback=feedback,
        tries=len(status.on_question),
        streak=status.streak,
        mastery=settings.mastery,
        mastered=status.mastered,
        just_mastered=just_mastered,
        hints=solution_hints[: max(0, min(hints, len(solution_hints)))],
        hints_total=len(solution_hints),
        message=message,
        link_title=_step_title(lessons, feedback.link if feedback else None),
        coverage=drill.coverage(attempts.first_tries(status.attempts)) if drill.topic is not None else None,
    )
    if feedback is not None and drill.node_load is not None:
        view.node = drill.node_load(question)
    return view


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


def _locate(
    lessons: list[Lesson], name: str, slug: str, step: int, index: int
) -> tuple[Drill, Lesson, Block]:
    """The drill, lesson and block a form names; 404 unless that block is this drill."""
    lesson = find_lesson(slug, lessons)
    block = dict(drill_blocks(lesson, step)).get(index)
    drill = drill_for(block) if block is not None and block.name == name else None
    if drill is None or block is None:
        raise HTTPException(
            status_code=404, detail=f"There is no '{name}' drill at that place in the lesson."
        )
    return drill, lesson, block


async def _render(
    request: Request,
    db: Database,
    tpl: Templates,
    learner: str,
    view: DrillView,
    lessons: list[Lesson],
    status: int = 200,
    headers: Mapping[str, str] | None = None,
) -> Response:
    """The drill alone for htmx (announcement and dgx-1 panel out of band), else the whole step page."""
    head = {"Vary": "HX-Request", **(headers or {})}
    if is_htmx(request):
        html = tpl.block(TEMPLATE, "drill", d=view, request=request)
        html += tpl.block(TEMPLATE, "announce", d=view, oob=True)
        if view.node is not None:
            html += tpl.block("panel.html", "panel", panel=panel_view(view.node), oob=True)
        return HTMLResponse(html, status_code=status, headers=head)
    from app.web import steps as step_pages  # steps imports this module

    page = await step_pages.build_step_page(db, learner, find_lesson(view.lesson, lessons), view.step, {})
    page.drills[view.index] = view
    if view.node is not None:
        page.panel = panel_view(view.node)
    return HTMLResponse(tpl.page("step.html", request=request, page=page), status_code=status, headers=head)


def _back(view_lesson: str, step: int, index: int, query: str = "") -> RedirectResponse:
    return RedirectResponse(f"/lessons/{view_lesson}/{step}{query}#d{index}", status_code=303)


FormInt = Annotated[int, Form(ge=0, le=1_000_000)]


@router.post("/drills/{name:path}/answer", dependencies=[Depends(require_csrf)], response_class=HTMLResponse)
async def answer(
    request: Request,
    name: str,
    db: DB,
    tpl: Tpl,
    lessons: Lessons,
    learner: LearnerId,
    lesson: Annotated[str, Form(max_length=100)],
    step: FormInt,
    block: FormInt,
    question: FormInt,
) -> Response:
    """Grade the learner's answers to their current question; unreadable answers are refused, not counted.

    Two short transactions: one read (where the learner stands, whether their class holds them back), the
    grading in between, and one write (the rate-limit count, the attempt, mastery) with a single commit."""
    drill, found, blk = _locate(lessons, name, lesson, step, block)
    form = await request.form()
    typed = {
        k.removeprefix(ANSWER_PREFIX): str(v)[:200] for k, v in form.items() if k.startswith(ANSWER_PREFIX)
    }
    args = (db, learner, found, step, block, blk, lessons)
    before = await attempts.before_answer(db, learner, drill.name, found.slug, step)
    if before.held_at is not None:
        return await _held(request, db, tpl, learner, lessons, args, typed, before)
    status = before.status
    q = drill.question(learner_seed(learner, drill.name, status.question))
    new, errors, feedback = None, None, None
    if question == status.question:
        try:
            feedback = drill.grade(q, typed)
        except AnswerErrors as exc:
            errors = exc.errors
    if feedback is not None:
        new = attempts.NewAttempt(
            lesson=found.slug, step=step, question=question, seed=q.seed,
            answers={p.id: typed.get(p.id, "") for p in q.parts},
            parsed={r.id: r.value for r in feedback.parts},  # in each part's unit (GB for a size)
            correct_parts={r.id: r.correct for r in feedback.parts}, score=feedback.score, mistake=feedback.mistake,
        )
    mastery = drill.settings.model_validate(blk.params).mastery
    spread_met = drill.topic is None or drill.coverage(attempts.first_tries(status.attempts)).spread_met_with(
        drill.topic(q))
    try:
        status, newly = await attempts.after_answer(
            db, learner, drill.name, status, new, limit_key=f"drill-answer:{learner}", limit=ANSWERS_PER_MINUTE,
            window_seconds=60, mastery=mastery, spread_met=spread_met,
        )
    except RateLimited as exc:
        message = (
            f"That is more than {ANSWERS_PER_MINUTE} answers in a minute. Wait {exc.retry_after} s and "
            "press Check answer again: your answers are still in the form, and nothing was graded."
        )
        view = await build_view(*args, typed=typed, message=message, status=status)
        assert view is not None
        view.feedback, view.node = None, None
        return await _render(
            request, db, tpl, learner, view, lessons, 429, {"Retry-After": str(exc.retry_after)}
        )
    if question != status.question:
        message = f"That question was replaced by question {status.question + 1}: here it is."
        view = await build_view(*args, message=message, status=status)
        assert view is not None  # 200, not 409: htmx swaps it in, and the learner sees the current question
        return await _render(request, db, tpl, learner, view, lessons)
    if errors is not None:
        view = await build_view(*args, typed=typed, errors=errors, status=status)
        assert view is not None
        return await _render(request, db, tpl, learner, view, lessons, 422)
    if not is_htmx(request):
        return _back(found.slug, step, block)
    view = await build_view(*args, just_mastered=newly, status=status)
    assert view is not None
    return await _render(request, db, tpl, learner, view, lessons)


async def _held(
    request: Request, db: Database, tpl: Templates, learner: str, lessons: list[Lesson], args: tuple[Any, ...],
    typed: Mapping[str, str], before: attempts.Before,
) -> Response:
    """423 beside the drill: the learner's class is held at an earlier step; nothing is graded or stored."""
    message = (f"Your class is held at step {before.held_at}: this drill opens when your instructor releases "
               "the class. Nothing was graded or stored.")
    view = await build_view(*args, typed=typed, message=message, status=before.status)
    assert view is not None
    view.feedback, view.node = None, None
    return await _render(request, db, tpl, learner, view, lessons, 423)


@router.get("/drills/{name:path}/hint", response_class=HTMLResponse)
async def hint(
    request: Request,
    name: str,
    db: DB,
    tpl: Tpl,
    lessons: Lessons,
    learner: LearnerId,
    lesson: Annotated[str, Query(max_length=100)],
    step: Annotated[int, Query(ge=0, le=10_000)],
    block: Annotated[int, Query(ge=0, le=10_000)],
    shown: Annotated[int, Query(ge=0, le=10)] = 0,
) -> Response:
    """One more hint for the learner's current question."""
    _, found, blk = _locate(lessons, name, lesson, step, block)
    if not is_htmx(request):
        return _back(found.slug, step, block, f"?hints={shown + 1}")
    view = await build_view(db, learner, found, step, block, blk, lessons, hints=shown + 1)
    assert view is not None
    return HTMLResponse(tpl.block(TEMPLATE, "hints", d=view, request=request), headers={"Vary": "HX-Request"})


@router.post("/drills/{name:path}/next", dependencies=[Depends(require_csrf)], response_class=HTMLResponse)
async def next_question(
    request: Request,
    name: str,
    db: DB,
    tpl: Tpl,
    lessons: Lessons,
    learner: LearnerId,
    lesson: Annotated[str, Form(max_length=100)],
    step: FormInt,
    block: FormInt,
    question: FormInt,
) -> Response:
    """Move on to a new question (pressing twice on the same question moves on once)."""
    drill, found, blk = _locate(lessons, name, lesson, step, block)
    before = await attempts.before_answer(db, learner, drill.name, found.slug, step)
    if before.held_at is not None:
        return await _held(request, db, tpl, learner, lessons, (db, learner, found, step, block, blk, lessons), {},
                           before)
    await attempts.next_question(db, learner, drill.name, question)
    if not is_htmx(request):
        return _back(found.slug, step, block)
    view = await build_view(db, learner, found, step, block, blk, lessons)
    assert view is not None
    return await _render(request, db, tpl, learner, view, lessons)


# The JSON API -------------------------------------------------------------------------------------------


class DrillInfo(BaseModel):
    """A drill a tool can ask questions of."""

    name: str = Field(description="Drill name, as in a lesson's ```drill NAME``` block")
    title: str
    description: str
    question: str = Field(description="Address of a question: add ?seed=N")


class GradeRequest(BaseModel):
    """Answers to the question of a seed, each exactly as a learner would type it."""

    model_config = ConfigDict(extra="forbid")

    seed: int = Field(ge=0, le=MAX_SEED, description="Seed of the question")
    answers: dict[str, Annotated[str, Field(max_length=200)]] = Field(
        description='Part id → answer as typed, e.g. {"total": "128.5 GB"}', max_length=20
    )


def _drill_or_404(name: str, lessons: list[Lesson]) -> Drill:
    drill = find_drill(lessons, name)
    if drill is None:
        raise HTTPException(status_code=404, detail=f"There is no drill called '{name}'.")
    return drill


ERRORS: dict[int | str, dict[str, Any]] = {
    400: {"description": "The body is not valid JSON"},
    404: {"description": "No such drill"},
    422: {"description": "Invalid input or answers that cannot be read: the field and a sentence"},
}


@api.get("", response_model=list[DrillInfo])
async def list_drills(lessons: Lessons) -> list[DrillInfo]:
    """Every drill: the built-in ones and those the lessons declare (named lesson-slug/drill-id)."""
    return [
        DrillInfo(
            name=d.name,
            title=d.title,
            description=d.description,
            question=f"/api/drills/{d.name}/question?seed=0",
        )
        for d in every_drill(lessons).values()
    ]


@api.get("/{name:path}/question", response_model=Question, responses=ERRORS)
async def api_question(name: str, lessons: Lessons, seed: Annotated[int, Query(ge=0, le=MAX_SEED)]) -> Question:
    """The question a seed generates, without its answer: prompt, parameters and parts."""
    return _drill_or_404(name, lessons).question(seed)


@api.post("/{name:path}/grade", response_model=Feedback, responses=ERRORS)
async def api_grade(name: str, lessons: Lessons, body: Annotated[GradeRequest, Body()]) -> Response | Feedback:
    """Grade answers for a seed: each part right or wrong with its expected value, the score, the solution."""
    drill = _drill_or_404(name, lessons)
    q = drill.question(body.seed)
    try:
        fb = drill.grade(q, body.answers)
    except AnswerErrors as exc:
        detail = [
            {"field": f"answers.{k}", "message": v, "loc": ["body", "answers", k], "msg": v, "type": "answer"}
            for k, v in exc.errors.items()
        ]
        message = "; ".join(f"{d['field']}: {d['message']}" for d in detail)
        return JSONResponse({"detail": detail, "message": message}, status_code=422)
    return fb


router.include_router(api)
