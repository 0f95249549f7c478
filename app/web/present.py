"""Presenting mode: a presentable lesson's steps as full-screen slides, and speaker notes for a second window."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse

from app.pages.steps import build_step_page
from app.pages.views import NotesPage, SlidePage, notes_paragraphs, presentable, slide_step
from app.web.deps import DB, LearnerId, Lessons, Tpl, is_htmx

router = APIRouter()


@router.get("/lessons/{slug}/{number}/present", response_class=HTMLResponse)
async def present(request: Request, slug: str, number: int, lessons: Lessons, db: DB, tpl: Tpl,
                  learner: LearnerId) -> HTMLResponse:
    """One slide full-screen; an htmx request (the arrow keys) gets only the slide, so full screen stays on."""
    lesson = presentable(lessons, slug)
    page = await build_step_page(db, learner, lesson, number, request.query_params,
                                 record=not request.state.new_learner)
    fragment = is_htmx(request)
    slide = SlidePage(page=page, notes=notes_paragraphs(page.step), fragment=fragment)
    html = tpl.render(slide, request, blocks=["slide"] if fragment else None)
    return HTMLResponse(html, headers={"Vary": "HX-Request"})


@router.get("/lessons/{slug}/{number}/notes", response_class=HTMLResponse)
async def notes(request: Request, slug: str, number: int, lessons: Lessons, tpl: Tpl) -> HTMLResponse:
    """Speaker notes of a slide, for a second window that follows the presenting one."""
    lesson = presentable(lessons, slug)
    step = slide_step(lesson, number)
    fragment = is_htmx(request)
    page = NotesPage(lesson=lesson, step=step, notes=notes_paragraphs(step), following=lesson.step(number + 1),
                     fragment=fragment)
    html = tpl.render(page, request, blocks=["notes_view"] if fragment else None)
    return HTMLResponse(html, headers={"Vary": "HX-Request"})
