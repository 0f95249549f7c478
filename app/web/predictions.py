"""POST /predictions: store a learner's guess, then show the widget with the guess beside the engine's answer."""

from __future__ import annotations

from typing import Annotated
from urllib.parse import urlencode

from fastapi import APIRouter, Depends, Form, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from app.pages.contexts import AnyWidgetView, StepPage, link_keys
from app.pages.predictions import Guess, commit
from app.pages.steps import page_after
from app.pages.views import RevealBlock
from app.pages.widgets import W_MAX, W_MIN
from app.web.deps import DB, LearnerId, Lessons, Tpl, is_htmx
from app.web.panel import panel_update, shown_panel
from app.web.responses import retry_after, vary_html
from app.web.security import require_csrf
from app.web.templating import Templates, link_terms

router = APIRouter()


async def guess_form(
    request: Request,
    lesson: Annotated[str, Form(max_length=100)],
    step: Annotated[int, Form(ge=1, le=1000)],
    w: Annotated[int, Form(ge=W_MIN, le=W_MAX)],
    guess: Annotated[str, Form(max_length=60)] = "",
    choice: Annotated[str, Form(max_length=30)] = "",
) -> Guess:
    """The guess form; it carries the inputs of the link the learner opened as `w2.gpus=4` fields."""
    return Guess(lesson, step, w, guess, choice, link_keys(await request.form()))


GuessForm = Annotated[Guess, Depends(guess_form)]


@router.post("/predictions", dependencies=[Depends(require_csrf)], response_class=HTMLResponse)
async def commit_guess(
    request: Request, db: DB, tpl: Tpl, lessons: Lessons, learner: LearnerId, g: GuessForm
) -> Response:
    """Store the learner's guess, then show the widget with the guess beside the engine's answer. The question is
    about the lesson's own values; once it is answered the widgets show the link's."""
    done = await commit(db, learner, lessons, g)
    fragment = is_htmx(request)
    if done.stored and not fragment:
        query = f"?{urlencode(g.shared)}" if g.shared else ""
        return RedirectResponse(f"/lessons/{done.lesson.slug}/{g.step}{query}#w{g.w}", status_code=303)
    page, view = await page_after(db, learner, done, g, fragment=fragment)
    body = (_widget(tpl, request, page, view, await shown_panel(request)) if fragment
            else tpl.page("step.html", request=request, page=page))
    return vary_html(body, done.status, retry_after(done.retry_after))


def _widget(tpl: Templates, request: Request, page: StepPage, view: AnyWidgetView, shown: str | None) -> str:
    """The widget as the step page now shows it, its reveal blocks and the dgx-1 panel out of band."""
    body = str(link_terms(tpl.block(view.template, "widget", w=view, request=request, oob=False), request.app.state,
                          view.lesson, view.step, view.wid))  # terms marked as in the page and in an update
    for i, block in enumerate(page.step.blocks):
        if block.kind == "reveal":  # the explanation opens with the widget
            body += tpl.render(RevealBlock(block=block, i=i, revealed=page.revealed), blocks=["reveal"])
    if page.revealed:  # the step's button now says the step will be done ("Done, next"), not "Skip for now"
        body += tpl.block("step.html", "next_button", page=page, oob=True)
    if view.node is not None:  # only when it differs from the panel the page shows (app/web/panel.py)
        return body + panel_update(tpl, view.node, shown)
    return body + tpl.block("panel.html", "panel", panel=page.panel, oob=True)
