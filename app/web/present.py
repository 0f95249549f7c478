"""Presenting mode: a presentable lesson's steps as full-screen slides, and speaker notes for a second window."""

from __future__ import annotations

from fastapi import APIRouter, HTTPException, Request
from fastapi.responses import HTMLResponse

from app.lessons.model import Lesson, Step
from app.pages.steps import build_step_page
from app.web.deps import DB, LearnerId, Lessons, Tpl, find_lesson, is_htmx

router = APIRouter()


def _presentable(slug: str, lessons: list[Lesson]) -> Lesson:
    lesson = find_lesson(slug, lessons)
    if not lesson.presentable:
        raise HTTPException(status_code=404, detail=f"'{lesson.title}' is read step by step; it has no slides.")
    return lesson


def notes_paragraphs(step: Step) -> list[str]:
    """A step's speaker notes as paragraphs (blank lines separate them)."""
    text = (step.meta.notes or "").strip()
    return [" ".join(p.split()) for p in text.split("\n\n") if p.strip()]


def _step(lesson: Lesson, number: int) -> Step:
    step = lesson.step(number)
    if step is None:
        raise HTTPException(
            status_code=404, detail=f"'{lesson.title}' has {len(lesson.steps)} slides; no slide {number}."
        )
    return step


@router.get("/lessons/{slug}/{number}/present", response_class=HTMLResponse)
async def present(request: Request, slug: str, number: int, lessons: Lessons, db: DB, tpl: Tpl,
                  learner: LearnerId) -> HTMLResponse:  # fmt: skip
    """One slide full-screen; an htmx request (the arrow keys) gets only the slide, so full screen stays on."""
    lesson = _presentable(slug, lessons)
    page = await build_step_page(db, learner, lesson, number, request.query_params,
                                 record=not request.state.new_learner)
    context = {"request": request, "page": page, "notes": notes_paragraphs(page.step), "fragment": False}
    headers = {"Vary": "HX-Request"}
    if is_htmx(request):
        return HTMLResponse(tpl.block("present.html", "slide", **{**context, "fragment": True}), headers=headers)
    return HTMLResponse(tpl.page("present.html", **context), headers=headers)


@router.get("/lessons/{slug}/{number}/notes", response_class=HTMLResponse)
async def notes(request: Request, slug: str, number: int, lessons: Lessons, tpl: Tpl) -> HTMLResponse:
    """Speaker notes of a slide, for a second window that follows the presenting one."""
    lesson = _presentable(slug, lessons)
    step = _step(lesson, number)
    following = lesson.step(number + 1)
    context = {"request": request, "lesson": lesson, "step": step, "notes": notes_paragraphs(step),
               "following": following, "fragment": False}  # fmt: skip
    headers = {"Vary": "HX-Request"}
    if is_htmx(request):
        return HTMLResponse(tpl.block("notes.html", "notes_view", **{**context, "fragment": True}), headers=headers)
    return HTMLResponse(tpl.page("notes.html", **context), headers=headers)
