"""Builds a step page: the lesson's blocks, each widget computed, the dgx-1 panel, the learner's progress."""

from __future__ import annotations

from collections.abc import Mapping

from fastapi import HTTPException

from app.classroom import progress, seat, sheets
from app.classroom.db import Database
from app.lessons.model import Lesson, Step
from app.pages import predictions
from app.pages.contexts import AnyWidgetView, StepPage, panel_view, widget_query, widget_view
from app.pages.drills import drill_views
from app.pages.predictions import Committed, Guess, pending
from app.widgets.registry import get_widget

SHEET_WIDGETS = ("workload-sheet", "profile")  # the widgets that show the learner's own workload sheet


async def build_step_page(
    db: Database, learner: str, lesson: Lesson, number: int, query: Mapping[str, str], record: bool = True
) -> StepPage:
    """The step's page; `w2.gpus=4` in the query is input `gpus` of widget 2, and plain keys apply to widget
    number `w` (default the first), as old links and forms sent without JavaScript have them. `record=False`
    (a visitor without a cookie yet) stores nothing: their next visit, with the cookie, is recorded."""
    step = lesson.step(number)
    if step is None:
        detail = f"'{lesson.title}' has {len(lesson.steps)} steps; there is no step {number}."
        raise HTTPException(status_code=404, detail=detail)
    klass = await seat.note_step(db, learner, lesson.slug, number) if record else None  # records the visit
    minutes_left = round(lesson.minutes_after(number))
    if klass is not None and klass.locked:  # held back by the class: say so, record nothing
        return StepPage(lesson=lesson, step=step, widgets={}, panel=panel_view(None), done=set(),
                        minutes_left=minutes_left, classroom=klass)
    views = widget_views(lesson, step, query)
    await predictions.attach(db, learner, lesson.slug, step, views)  # closed until the learner's guess is in
    await attach_sheet(db, learner, views)  # the learner's own workload sheet, where a step shows it
    revealed = next((v.node for v in views.values() if v.node is not None and v.predict is not None), None)
    node = revealed or next((v.node for v in views.values() if v.node is not None), None)
    done = (await progress.progress_by_lesson(db, learner)).get(lesson.slug, progress.LessonProgress()).done
    cheats = lesson.steps if any(b.kind == "cheatsheet" for b in step.blocks) else []
    drills = await drill_views(db, learner, lesson, number, query, [lesson])
    node = node or next((d.node for d in drills.values() if d.node is not None), None)
    return StepPage(lesson=lesson, step=step, widgets=views, panel=panel_view(node), done=done,
                    minutes_left=minutes_left, cheatsheet=cheats, classroom=klass, drills=drills)


async def press_done(db: Database, learner: str, lesson: Lesson, number: int) -> str:
    """The learner pressed "Done, next" (or "Skip for now", "Finish lesson") on step `number`: the step is done,
    unless its core was never opened (a drill not mastered, whose mastery marks it done; a "predict first" widget
    whose guess is not in, so its result and explanation stayed closed), which leaves it visited only. Returns
    where to go: the next step, or the completion page after the last."""
    step = lesson.step(number)
    if step is None:
        raise HTTPException(status_code=404, detail=f"'{lesson.title}' has no step {number}.")
    if step.has_drill or await predictions.guesses_missing(db, learner, lesson.slug, step):
        await progress.record_visit(db, learner, lesson.slug, number)
    else:
        await progress.mark_done(db, learner, lesson.slug, number)
    return f"/lessons/{lesson.slug}/{number + 1}" if number < len(lesson.steps) else f"/lessons/{lesson.slug}/complete"


def widget_views(lesson: Lesson, step: Step, query: Mapping[str, str]) -> dict[int, AnyWidgetView]:
    """Every widget of a step by block position, computed from the step's address; each widget's forms and links
    carry the other widgets' changed inputs along."""
    views, index = {}, 0
    for i, block in enumerate(step.blocks):
        widget = get_widget(block.name) if block.kind == "widget" else None
        if widget is None:
            continue
        index += 1
        typed = widget_query(query, index)
        views[i] = widget_view(widget, block.params, typed, index=index, lesson=lesson.slug, step=step.number)
    changed = {k: v for view in views.values() for k, v in view.link_keys().items()}
    for view in views.values():
        view.carry = {k: v for k, v in changed.items() if not k.startswith(f"{view.wid}.")}
    return views


async def attach_sheet(db: Database, learner: str, views: Mapping[int, AnyWidgetView]) -> None:
    """Give the sheet and profile widgets of a step the learner's own sheet."""
    wanting = [v for v in views.values() if v.name in SHEET_WIDGETS]
    if wanting:
        sheet = await sheets.get_sheet(db, learner)
        for view in wanting:
            view.sheet = sheet
async def page_after(
    db: Database, learner: str, done: Committed, g: Guess, *, fragment: bool
) -> tuple[StepPage, AnyWidgetView]:
    """The step page (with the link's inputs) and the guessing widget on it, after a guess stored or refused.

    A refused guess shows the question again with what was typed; in a fragment it keeps the state the widget had.
    """
    page = await build_step_page(db, learner, done.lesson, g.step, g.shared)
    view = next(v for v in page.widgets.values() if v.index == g.w)
    if done.refusal and fragment and view.predict is not None:
        view.predict = view.predict.model_copy(update=done.refusal)
    elif done.refusal:
        view.predict = pending(done.spec, **done.refusal)
    return page, view
