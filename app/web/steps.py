"""Builds a step page: the lesson's blocks, each widget computed, the dgx-1 panel, the learner's progress."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from fastapi import HTTPException

from app.classroom import classes, progress
from app.classroom.db import Database
from app.lessons.model import Lesson
from app.web import companion, drills, predictions
from app.web.contexts import StepPage, panel_view, widget_query, widget_view
from app.widgets.registry import get_widget


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
    klass = await classes.note_step(db, learner, lesson.slug, number) if record else None  # records the visit
    if klass is not None and klass.locked:  # held back by the class: say so, record nothing
        return StepPage(lesson=lesson, step=step, widgets={}, panel=panel_view(None), done=set(),
                        minutes_left=round(lesson.minutes_after(number)), classroom=klass)
    views = {}
    index = 0
    for i, block in enumerate(step.blocks):
        if block.kind != "widget":
            continue
        widget = get_widget(block.name)
        if widget is None:
            continue
        index += 1
        typed = widget_query(query, index)
        views[i] = widget_view(widget, block.params, typed, index=index, lesson=lesson.slug, step=number)
    changed = {k: v for view in views.values() for k, v in view.link_keys().items()}
    for view in views.values():  # each widget's forms and links carry the others' inputs along
        view.carry = {k: v for k, v in changed.items() if not k.startswith(f"{view.wid}.")}
    await predictions.attach(db, learner, lesson.slug, step, views)  # closed until the learner's guess is in
    await companion.attach(db, learner, views)  # the learner's own workload sheet, where a step shows it
    revealed = next((v.node for v in views.values() if v.node is not None and "predict" in v.extra), None)
    node = revealed or next((v.node for v in views.values() if v.node is not None), None)
    done = (await progress.progress_by_lesson(db, learner)).get(lesson.slug, progress.LessonProgress()).done
    cheats = lesson.steps if any(b.kind == "cheatsheet" for b in step.blocks) else []
    drill_views = await drills.drill_views(db, learner, lesson, number, query, [lesson])
    node = node or next((d.node for d in drill_views.values() if d.node is not None), None)
    return StepPage(lesson=lesson, step=step, widgets=views, panel=panel_view(node), done=done,
                    minutes_left=round(lesson.minutes_after(number)), cheatsheet=cheats, classroom=klass,
                    drills=drill_views)


def lesson_defaults(lessons: list[Lesson], slug: str, number: int, index: int, name: str) -> dict[str, Any]:
    """The lesson's own parameters of widget `index` on a step, when that widget is `name`; else none."""
    lesson = next((le for le in lessons if le.slug == slug), None)
    step = lesson.step(number) if lesson else None
    found = next((b for i, b, w in predictions.widget_blocks(step) if i == index), None) if step else None
    return dict(found.params) if found is not None and found.name == name else {}
