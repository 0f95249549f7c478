"""Predict, then observe: a widget's question before the reveal, the guess beside the engine's answer after it,
and committing a guess (POST /predictions calls `commit`, then app.pages.steps.page_after)."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

from fastapi import HTTPException

from app.classroom import predictions
from app.classroom.db import Database
from app.classroom.ratelimit import RateLimited, hit
from app.drills.answers import parse_size, read_quantity
from app.engine.text import ratio
from app.lessons.model import Block, Lesson, Step
from app.pages.contexts import AnyWidgetView, PredictView
from app.pages.lessons import find_lesson, widget_blocks
from app.widgets.base import P, ParamErrors, Prediction, R, Widget, parse_params

# Guesses a learner may commit a minute (they are also one per question).
GUESSES_PER_MINUTE = 30
BARE_BYTES = 1e6  # a bare number this large in a GB box was most likely counted in bytes
MOST = 1e15  # no question here has an answer near a million billion of its unit
NUMBER = re.compile(r"^\s*([-+]?[0-9][0-9,_]*\.?[0-9]*(?:[eE][-+]?[0-9]+)?)\s*[^\d]*$")


def question(widget: Widget[P, R], block: Block) -> Prediction | None:
    """The widget's question and answer for the lesson's own parameters, or None if it asks none."""
    if widget.predict is None or not block.params.get("predict"):
        return None
    try:
        params = parse_params(widget, block.params)
    except ParamErrors:
        return None
    return widget.predict(params, widget.compute(params))


def parse_guess(text: str, unit: str = "") -> float:
    """A guess as typed ('19', '19.5 GB', '1,200', '3e2'), in the question's unit; ValueError with a sentence.

    A size goes through the drills' own reader, so '19 GiB' means what it says and '19 GB/s' is refused; a bare
    number is already in the box's unit."""
    match = NUMBER.match(text or "")
    if not match:
        raise ValueError(f"Enter a number, such as 19 or 19.5{' ' + unit if unit else ''}.")
    value = float(match.group(1).replace(",", "").replace("_", ""))
    if not math.isfinite(value) or value <= 0:
        raise ValueError("Enter a number above zero.")
    if value > MOST:
        raise ValueError("That is more than any plan here; enter a smaller number.")
    if unit == "GB" and read_quantity(text).unit:
        value = parse_size(text, "GB") / 1e9
    elif unit == "GB" and value >= BARE_BYTES:
        raise ValueError(f"{_number(value)} GB is far more than any plan here. If you counted bytes, write "
                         f"“{_number(value)} bytes”; otherwise give the size in GB.")
    if value > MOST:
        raise ValueError("That is more than any plan here; enter a smaller number.")
    return value


def _number(value: float) -> str:
    return f"{value:,.4g}" if value < 1e6 else f"{value:,.0f}"


def _verdict(spec: Prediction, value: float | None, choice: str) -> str:
    """How the guess compares with the engine's answer."""
    parts = []
    if spec.choices:
        right = choice == spec.answer_choice
        parts.append(
            "You called it." if right else f"Not quite: {spec.choice_text(spec.answer_choice)}."
        )
    if value:
        r = spec.answer / value
        if 0.9 <= r <= 1.1:
            parts.append("Your number is within 10 % of the engine's.")
        elif r > 1:
            parts.append(f"The engine's number is {ratio(r)} yours.")
        else:
            parts.append(f"Your number is {ratio(1 / r)} the engine's.")
    return " ".join(parts)


def revealed(spec: Prediction, stored: predictions.StoredGuess) -> PredictView:
    """The guess beside the engine's answer (the answer as the engine gives it today)."""
    choice, _, typed = stored.guess.partition(": ") if spec.choices else ("", "", stored.guess)
    guess = f"{spec.choice_text(choice)}, {typed}" if spec.choices else typed
    actual = spec.answer_text
    if spec.choices:
        actual = f"{spec.choice_text(spec.answer_choice)}, {actual}"
    return PredictView(
        key=spec.key,
        question=spec.question,
        unit=spec.unit,
        pending=False,
        guess=guess,
        actual=actual,
        verdict=_verdict(spec, stored.guess_value, choice),
    )


def pending(spec: Prediction, **typed: str) -> PredictView:
    """The question, not yet answered."""
    return PredictView(
        key=spec.key,
        question=spec.question,
        unit=spec.unit,
        choice_label=spec.choice_label,
        choices=spec.choices,
        pending=True,
        **typed,
    )


async def attach(db: Database, learner: str, lesson: str, step: Step, views: dict[int, AnyWidgetView]) -> None:
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
        guess = stored.get(spec.key)
        view.predict = revealed(spec, guess) if guess else pending(spec)
        if guess is None:
            view.node = None


async def guesses_missing(db: Database, learner: str, lesson: str, step: Step) -> bool:
    """Whether a "predict first" widget of the step still waits for the learner's guess (its content unseen)."""
    keys = [spec.key for _, block, widget in widget_blocks(step) if (spec := question(widget, block)) is not None]
    if not keys:
        return False
    stored = await predictions.for_step(db, learner, lesson, step.number)
    return any(key not in stored for key in keys)


@dataclass(frozen=True)
class Guess:
    """A guess as the form sent it: which widget of which step, the number and choice typed, and the inputs of
    the link the learner opened (`w2.gpus=4` keys), which the widgets show once the question is answered."""

    lesson: str
    step: int
    w: int
    guess: str = ""
    choice: str = ""
    shared: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Committed:
    """What became of a guess: stored (status 200), or refused with the reasons to show beside the form."""

    lesson: Lesson
    spec: Prediction
    status: int = 200
    refusal: dict[str, str] = field(default_factory=dict)
    retry_after: int | None = None

    @property
    def stored(self) -> bool:
        return self.status == 200


def find_question(lessons: list[Lesson], g: Guess) -> tuple[Lesson, Prediction]:
    """The lesson a guess belongs to and the widget's question; 404 when there is none."""
    lesson = find_lesson(g.lesson, lessons)
    step = lesson.step(g.step)
    match = next(((b, wd) for i, b, wd in widget_blocks(step) if i == g.w), None) if step else None
    spec = question(match[1], match[0]) if match else None
    if spec is None:
        raise HTTPException(status_code=404, detail="There is no question to answer there.")
    return lesson, spec


async def commit(db: Database, learner: str, lessons: list[Lesson], g: Guess) -> Committed:
    """Store the learner's guess; refuse one that is not a number, lacks its choice, or comes too fast."""
    lesson, spec = find_question(lessons, g)
    try:
        await hit(db, f"predict:{learner}", GUESSES_PER_MINUTE, 60)
    except RateLimited as exc:
        return Committed(lesson, spec, 429, _refusal(g, error=str(exc)), retry_after=exc.retry_after)
    errors: dict[str, str] = {}
    try:
        value = parse_guess(g.guess, spec.unit)
    except ValueError as exc:
        errors["error"] = str(exc)
    if spec.choices and g.choice not in [v for v, _ in spec.choices]:
        errors["choice_error"] = "Choose one."
    if errors:
        return Committed(lesson, spec, 422, _refusal(g, **errors))
    text = f"{_number(value)} {spec.unit}"
    guess = f"{g.choice}: {text}" if spec.choices else text
    await predictions.commit(db, learner, lesson.slug, g.step, spec.key, guess, value, spec.answer_text)
    return Committed(lesson, spec)


def _refusal(g: Guess, error: str = "", choice_error: str = "") -> dict[str, str]:
    """The form again: what was typed, the reason beside it."""
    return {"typed": g.guess, "choice": g.choice, "error": error, "choice_error": choice_error}
