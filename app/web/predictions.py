"""Predict, then observe: the guess form a widget shows first, and POST /predictions that stores the guess."""

from __future__ import annotations

import math
import re
from typing import Any
from urllib.parse import urlencode

from fastapi import APIRouter, Depends, Form, HTTPException, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from pydantic import BaseModel, Field

from app.classroom import predictions
from app.classroom.db import Database
from app.classroom.ratelimit import RateLimited, hit
from app.drills.answers import parse_size
from app.engine.text import ratio
from app.lessons.model import Block, Lesson, Step
from app.web.contexts import WidgetView, link_keys, panel_view
from app.web.deps import DB, LearnerId, Lessons, Tpl, find_lesson, is_htmx
from app.web.security import require_csrf
from app.widgets.base import ParamErrors, Widget, parse_params
from app.widgets.registry import get_widget

router = APIRouter()

# Guesses a learner may commit a minute (they are also one per question).
GUESSES_PER_MINUTE = 30
NUMBER = re.compile(r"^\s*([-+]?[0-9][0-9,_]*\.?[0-9]*(?:[eE][-+]?[0-9]+)?)\s*[^\d]*$")


class PredictView(BaseModel):
    """A widget's question before the reveal, or the guess beside the engine's answer after it."""

    key: str
    question: str
    unit: str
    choice_label: str = ""
    choices: list[tuple[str, str]] = Field(default_factory=list)
    pending: bool = Field(description="True until the learner commits a guess: the widget stays closed")
    guess: str = Field(default="", description="The committed guess, for display")
    actual: str = Field(default="", description="The engine's answer, for display")
    verdict: str = Field(default="", description="How close the guess came, in a sentence")
    typed: str = Field(default="", description="What was typed, kept when it was refused")
    choice: str = ""
    error: str = ""
    choice_error: str = ""


def question(widget: Widget, block: Block) -> dict[str, Any] | None:
    """The widget's question and answer for the lesson's own parameters, or None if it asks none."""
    ask = widget.extra.get("predict")
    if ask is None or not block.params.get("predict"):
        return None
    try:
        params = parse_params(widget, block.params)
    except ParamErrors:
        return None
    spec: dict[str, Any] = ask(params, widget.compute(params))
    return spec


def parse_guess(text: str, unit: str = "") -> float:
    """A guess as typed ('19', '19.5 GB', '1,200', '3e2'), in the question's unit; ValueError with a sentence.

    A size goes through the drills' own reader, so '19 GiB' means what it says and '19 GB/s' is refused."""
    match = NUMBER.match(text or "")
    if not match:
        raise ValueError("Enter a number, such as 19 or 19.5.")
    value = float(match.group(1).replace(",", "").replace("_", ""))
    if not math.isfinite(value) or value <= 0:
        raise ValueError("Enter a number above zero.")
    if unit == "GB":
        value = parse_size(text, "GB") / 1e9
    if value > 1e15:
        raise ValueError("That is more than any plan here; enter a smaller number.")
    return value


def _number(value: float) -> str:
    return f"{value:,.4g}" if value < 1e6 else f"{value:,.0f}"


def _choice_text(spec: dict[str, Any], value: str) -> str:
    return next((text for v, text in spec["choices"] if v == value), value).lower()


def _verdict(spec: dict[str, Any], value: float | None, choice: str) -> str:
    """How the guess compares with the engine's answer."""
    parts = []
    if spec["choices"]:
        right = choice == spec["answer_choice"]
        parts.append(
            "You called it." if right else f"Not quite: {_choice_text(spec, spec['answer_choice'])}."
        )
    if value:
        r = spec["answer"] / value
        if 0.9 <= r <= 1.1:
            parts.append("Your number is within 10 % of the engine's.")
        elif r > 1:
            parts.append(f"The engine's number is {ratio(r)} yours.")
        else:
            parts.append(f"Your number is {ratio(1 / r)} the engine's.")
    return " ".join(parts)


def revealed(spec: dict[str, Any], stored: predictions.StoredGuess) -> PredictView:
    """The guess beside the engine's answer (the answer as the engine gives it today)."""
    choice, _, typed = stored.guess.partition(": ") if spec["choices"] else ("", "", stored.guess)
    guess = f"{_choice_text(spec, choice)}, {typed}" if spec["choices"] else typed
    actual = spec["answer_text"]
    if spec["choices"]:
        actual = f"{_choice_text(spec, spec['answer_choice'])}, {actual}"
    return PredictView(
        key=spec["key"],
        question=spec["question"],
        unit=spec["unit"],
        pending=False,
        guess=guess,
        actual=actual,
        verdict=_verdict(spec, stored.guess_value, choice),
    )


def pending(spec: dict[str, Any], **typed: str) -> PredictView:
    """The question, not yet answered."""
    return PredictView(
        key=spec["key"],
        question=spec["question"],
        unit=spec["unit"],
        choice_label=spec["choice_label"],
        choices=spec["choices"],
        pending=True,
        **typed,
    )


def widget_blocks(step: Step) -> list[tuple[int, Block, Widget]]:
    """(position among the step's widgets, block, widget), counting as the step page does from 1."""
    found, index = [], 0
    for block in step.blocks:
        widget = get_widget(block.name) if block.kind == "widget" else None
        if widget is not None:
            index += 1
            found.append((index, block, widget))
    return found


async def attach(db: Database, learner: str, lesson: str, step: Step, views: dict[int, WidgetView]) -> None:
    """Close each predicting widget until its guess is in (no result, nothing on the panel); else reveal."""
    stored: dict[str, predictions.StoredGuess] | None = None
    by_index = {v.index: v for v in views.values()}
    for index, block, widget in widget_blocks(step):
        spec = question(widget, block)
        view = by_index.get(index)
        if spec is None or view is None:
            continue
        if stored is None:
            stored = await predictions.for_step(db, learner, lesson, step.number)
        guess = stored.get(spec["key"])
        view.extra["predict"] = revealed(spec, guess) if guess else pending(spec)
        if guess is None:
            view.node = None


def _find(
    lessons: list[Lesson], slug: str, number: int, w: int
) -> tuple[Lesson, Step, Block, Widget, dict[str, Any]]:
    """The lesson, step, block and widget a guess belongs to, and the widget's question; 404 otherwise."""
    lesson = find_lesson(slug, lessons)
    step = lesson.step(number)
    match = next(((b, wd) for i, b, wd in widget_blocks(step) if i == w), None) if step else None
    spec = question(match[1], match[0]) if match else None
    if step is None or match is None or spec is None:
        raise HTTPException(status_code=404, detail="There is no question to answer there.")
    return lesson, step, match[0], match[1], spec


@router.post("/predictions", dependencies=[Depends(require_csrf)], response_class=HTMLResponse)
async def commit_guess(
    request: Request,
    db: DB,
    tpl: Tpl,
    lessons: Lessons,
    learner: LearnerId,
    lesson: str = Form(max_length=100),
    step: int = Form(ge=1, le=1000),
    w: int = Form(ge=1, le=99),
    guess: str = Form(default="", max_length=60),
    choice: str = Form(default="", max_length=30),
) -> Response:
    """Store the learner's guess, then show the widget with the guess beside the engine's answer.

    The form carries the inputs of the link the learner opened (`w2.gpus=4` fields): the question is about the
    lesson's own values, and once it is answered the widgets show the shared ones."""
    found, _, _, widget, spec = _find(lessons, lesson, step, w)
    shared = link_keys(await request.form())
    try:
        await hit(db, f"predict:{learner}", GUESSES_PER_MINUTE, 60)
    except RateLimited as exc:
        response = await _refused(
            request, db, tpl, learner, found, step, w, widget, spec, guess, choice, {"error": str(exc)}, shared,
            status=429,
        )
        response.headers["Retry-After"] = str(exc.retry_after)
        return response
    errors = {}
    try:
        value = parse_guess(guess, spec["unit"])
    except ValueError as exc:
        errors["error"] = str(exc)
    if spec["choices"] and choice not in [v for v, _ in spec["choices"]]:
        errors["choice_error"] = "Choose one."
    if errors:
        return await _refused(request, db, tpl, learner, found, step, w, widget, spec, guess, choice, errors, shared)
    text = f"{_number(value)} {spec['unit']}"
    await predictions.commit(
        db,
        learner,
        found.slug,
        step,
        spec["key"],
        f"{choice}: {text}" if spec["choices"] else text,
        value,
        spec["answer_text"],
    )
    if not is_htmx(request):
        query = f"?{urlencode(shared)}" if shared else ""
        return RedirectResponse(f"/lessons/{found.slug}/{step}{query}#w{w}", status_code=303)
    return await _widget(request, db, tpl, learner, found, step, w, widget, shared)


async def _widget(
    request: Request,
    db: Database,
    tpl: Any,
    learner: str,
    lesson: Lesson,
    step: int,
    w: int,
    widget: Widget,
    shared: dict[str, str],
    status: int = 200,
    change: dict[str, str] | None = None,
) -> HTMLResponse:
    """The widget as the step page now shows it (with the link's inputs), with the dgx-1 panel out of band."""
    from app.web import steps as step_pages  # steps imports this module

    page = await step_pages.build_step_page(db, learner, lesson, step, shared)
    view = next(v for v in page.widgets.values() if v.index == w)
    if change:
        view.extra["predict"] = view.extra["predict"].model_copy(update=change)
    html = tpl.block(widget.template, "widget", w=view, request=request, oob=False)
    for i, block in enumerate(page.step.blocks):
        if block.kind == "reveal":  # the explanation opens with the widget
            html += tpl.block("reveal.html", "reveal", block=block, i=i, revealed=page.revealed, oob=True)
    html += tpl.block(
        "panel.html", "panel", panel=panel_view(view.node) if view.node else page.panel, oob=True
    )
    return HTMLResponse(html, status_code=status, headers={"Vary": "HX-Request"})


async def _refused(
    request: Request,
    db: Database,
    tpl: Any,
    learner: str,
    lesson: Lesson,
    step: int,
    w: int,
    widget: Widget,
    spec: dict[str, Any],
    guess: str,
    choice: str,
    errors: dict[str, str],
    shared: dict[str, str],
    status: int = 422,
) -> HTMLResponse:
    """A guess refused (not a number, or too many): the form again, what was typed, the reason beside it."""
    change = {
        "typed": guess,
        "choice": choice,
        "error": errors.get("error", ""),
        "choice_error": errors.get("choice_error", ""),
    }
    if is_htmx(request):
        return await _widget(request, db, tpl, learner, lesson, step, w, widget, shared, status=status, change=change)
    from app.web import steps as step_pages

    page = await step_pages.build_step_page(db, learner, lesson, step, shared)
    view = next(v for v in page.widgets.values() if v.index == w)
    view.extra["predict"] = pending(spec, **change)
    return HTMLResponse(tpl.page("step.html", request=request, page=page), status_code=status)
