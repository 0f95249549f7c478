"""Pages: home, a lesson's overview, a step, marking a step done, and the numbers behind it all."""

from __future__ import annotations

from fastapi import APIRouter, Depends, HTTPException, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from app.engine.constants import numbers as engine_numbers
from app.pages.steps import build_step_page, press_done
from app.pages.views import NumbersPage, complete_page, glossary_page, home_page, overview_page
from app.web.deps import DB, LearnerId, Lessons, Tpl, find_lesson
from app.web.security import require_csrf

router = APIRouter()


@router.get("/", response_class=HTMLResponse)
async def home(request: Request, lessons: Lessons, db: DB, tpl: Tpl, learner: LearnerId) -> HTMLResponse:
    """The lessons, each with minutes and progress, and where to continue."""
    return HTMLResponse(tpl.render(await home_page(db, learner, lessons), request))


@router.get("/glossary", response_class=HTMLResponse)
async def glossary(request: Request, tpl: Tpl) -> HTMLResponse:
    """Every glossary term with its definition and a link to the step that teaches it."""
    glossary = getattr(request.app.state, "glossary", None)  # author mode reads it afresh on each visit
    page = glossary_page(glossary, request.app.state.settings.lesson_dirs())
    return HTMLResponse(tpl.render(page, request))


@router.get("/numbers", response_class=HTMLResponse)
async def numbers(request: Request, tpl: Tpl) -> HTMLResponse:
    """Published measurements beside the engine's figures, and every constant with its source."""
    return HTMLResponse(tpl.render(NumbersPage(numbers=engine_numbers()), request))


@router.get("/lessons/{slug}", response_class=HTMLResponse)
async def overview(request: Request, slug: str, lessons: Lessons, db: DB, tpl: Tpl, learner: LearnerId) -> HTMLResponse:
    """A lesson's sections and steps, with done and current marked."""
    return HTMLResponse(tpl.render(await overview_page(db, learner, lessons, slug), request))


@router.get("/lessons/{slug}/complete", response_class=HTMLResponse)
async def complete(request: Request, slug: str, lessons: Lessons, db: DB, tpl: Tpl, learner: LearnerId) -> HTMLResponse:
    """Where finishing the last step lands: what was done, drills mastered or skipped, and where to go next."""
    return HTMLResponse(tpl.render(await complete_page(db, learner, lessons, slug), request))


@router.get("/lessons/{slug}/step/{name}", response_class=RedirectResponse, status_code=307)
async def step_by_name(request: Request, slug: str, name: str, lessons: Lessons) -> RedirectResponse:
    """The step called `name` (its file's name without the number), so a link survives renumbering; `widget`
    names the widget to open at, and the rest of the query goes to that widget."""
    query = {k: v for k, v in request.query_params.items() if k != "widget"}
    url = find_lesson(slug, lessons).step_link(name, request.query_params.get("widget", ""), query)
    if url is None:
        raise HTTPException(status_code=404, detail=f"The lesson has no step '{name}' with that widget.")
    return RedirectResponse(url, status_code=307)


@router.get("/lessons/{slug}/{number}", response_class=HTMLResponse)
async def step(request: Request, slug: str, number: int, lessons: Lessons, db: DB, tpl: Tpl,
               learner: LearnerId) -> HTMLResponse:
    """Step `number` of a lesson (counting from 1), its widgets computed on the server."""
    lesson = find_lesson(slug, lessons)
    page = await build_step_page(db, learner, lesson, number, request.query_params,
                                 record=not request.state.new_learner)
    status = 422 if any(w.errors for w in page.widgets.values()) else 200
    return HTMLResponse(tpl.page("step.html", request=request, page=page), status_code=status)


@router.post("/lessons/{slug}/{number}/done", dependencies=[Depends(require_csrf)])
async def mark_done(slug: str, number: int, lessons: Lessons, db: DB, learner: LearnerId) -> Response:
    """Mark a step done and go on to the next one (or to the completion page after the last). A drill step is
    done by mastery only, a "predict first" step once its guess is in: pressing on past either ("Skip for now")
    leaves it visited and not done (app.pages.steps.press_done)."""
    target = await press_done(db, learner, find_lesson(slug, lessons), number)
    return RedirectResponse(target, status_code=303)


