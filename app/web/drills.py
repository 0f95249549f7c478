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

from typing import Annotated, Any

from fastapi import APIRouter, Body, Depends, Form, HTTPException, Query, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from pydantic import BaseModel, ConfigDict, Field

from app.classroom.db import Database
from app.pages import drills as drill_pages
from app.pages.contexts import panel_view
from app.pages.drills import MAX_SEED, AnswerErrors, Drill, DrillPlace, DrillView, Feedback, Outcome, Question
from app.pages.lesson_drills import every_drill, find_drill
from app.pages.lessons import Lessons as LessonList
from app.pages.steps import build_step_page
from app.web.deps import DB, LearnerId, Lessons, Tpl, find_lesson, is_htmx
from app.web.panel import panel_update, shown_panel
from app.web.responses import problem, retry_after, unprocessable, vary_html
from app.web.security import require_csrf
from app.web.templating import Templates

router = APIRouter()
api = APIRouter(prefix="/api/drills", tags=["drills"])

TEMPLATE = "drills/drill.html"
ANSWER_PREFIX = "answer-"
FormInt = Annotated[int, Form(ge=0, le=1_000_000)]


async def drill_form(
    request: Request, lesson: Annotated[str, Form(max_length=100)], step: FormInt, block: FormInt, question: FormInt
) -> DrillPlace:
    """The fields every drill form sends: the block of the step, the question seen, and the answers typed."""
    form = await request.form()
    typed = {k.removeprefix(ANSWER_PREFIX): str(v)[:200] for k, v in form.items() if k.startswith(ANSWER_PREFIX)}
    return DrillPlace(lesson=lesson, step=step, block=block, question=question, answers=typed)


DrillForm = Annotated[DrillPlace, Depends(drill_form)]


async def _render(
    request: Request, db: Database, tpl: Templates, learner: str, view: DrillView, lessons: LessonList,
    status: int = 200, headers: dict[str, str] | None = None,
) -> Response:
    """The drill alone for htmx (announcement and dgx-1 panel out of band), else the whole step page."""
    if is_htmx(request):
        body = tpl.block(TEMPLATE, "drill", d=view, request=request)
        body += tpl.block(TEMPLATE, "announce", d=view, oob=True)
        if view.node is not None:  # only when it differs from the panel the page shows (app/web/panel.py)
            body += panel_update(tpl, view.node, await shown_panel(request))
        return vary_html(body, status, headers)
    page = await build_step_page(db, learner, find_lesson(view.lesson, lessons), view.step, {})
    page.drills[view.index] = view
    if view.node is not None:
        page.panel = panel_view(view.node)
    return vary_html(tpl.page("step.html", request=request, page=page), status, headers)


async def _answered(
    request: Request, db: Database, tpl: Templates, learner: str, out: Outcome, lessons: LessonList
) -> Response:
    """A drill form's outcome: back to the step without JavaScript once it is stored, else the drill again."""
    if out.graded and not is_htmx(request):
        return _back(out.view.lesson, out.view.step, out.view.index)
    return await _render(request, db, tpl, learner, out.view, lessons, out.status, retry_after(out.retry_after))


def _back(view_lesson: str, step: int, index: int, query: str = "") -> RedirectResponse:
    return RedirectResponse(f"/lessons/{view_lesson}/{step}{query}#d{index}", status_code=303)


@router.post("/drills/{name:path}/answer", dependencies=[Depends(require_csrf)], response_class=HTMLResponse)
async def answer(
    request: Request, name: str, db: DB, tpl: Tpl, lessons: Lessons, learner: LearnerId, form: DrillForm
) -> Response:
    """Grade the learner's answers to their current question; unreadable answers are refused, not counted."""
    found = drill_pages.locate(lessons, name, form)
    out = await drill_pages.answer(db, learner, found)
    return await _answered(request, db, tpl, learner, out, lessons)


@router.get("/drills/{name:path}/hint", response_class=HTMLResponse)
async def hint(
    request: Request, name: str, db: DB, tpl: Tpl, lessons: Lessons, learner: LearnerId,
    lesson: Annotated[str, Query(max_length=100)], step: Annotated[int, Query(ge=0, le=10_000)],
    block: Annotated[int, Query(ge=0, le=10_000)], shown: Annotated[int, Query(ge=0, le=10)] = 0,
) -> Response:
    """One more hint for the learner's current question; it stays open after an answer and a reload."""
    found = drill_pages.locate(lessons, name, DrillPlace(lesson=lesson, step=step, block=block))
    if not is_htmx(request):
        return _back(found.lesson.slug, step, block, f"?hints={shown + 1}")
    view = await found.open_hint(db, learner, shown)
    return vary_html(tpl.block(TEMPLATE, "hints", d=view, request=request))


@router.post("/drills/{name:path}/next", dependencies=[Depends(require_csrf)], response_class=HTMLResponse)
async def next_question(
    request: Request, name: str, db: DB, tpl: Tpl, lessons: Lessons, learner: LearnerId, form: DrillForm
) -> Response:
    """Move on to a new question (pressing twice on the same question moves on once)."""
    found = drill_pages.locate(lessons, name, form)
    out = await drill_pages.next_question(db, learner, found)
    return await _answered(request, db, tpl, learner, out, lessons)


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


def _drill_or_404(name: str, lessons: LessonList) -> Drill:
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
        detail = [problem(f"answers.{k}", v, ["body", "answers", k], "answer") for k, v in exc.errors.items()]
        return unprocessable(detail)
    return fb


router.include_router(api)
