"""Finding things in the lessons the app serves: a lesson by slug, a step's widget blocks and their own values."""

from __future__ import annotations

from app.lessons.model import Block, Lesson, Step
from app.pages.errors import NotFound
from app.widgets.base import AnyWidget
from app.widgets.registry import get_widget

# The lessons the app serves, as the routers hand them to the page services.
Lessons = list[Lesson]


def find_lesson(slug: str, lessons: list[Lesson]) -> Lesson:
    """The lesson with this slug, or a friendly 404."""
    for lesson in lessons:
        if lesson.slug == slug:
            return lesson
    if slug in getattr(lessons, "broken", {}):  # see app.lessons.loader.Served
        raise NotFound(f"The lesson '{slug}' is not served: its files have problems for its author to fix "
                       "(gpu-classroom check lists them).")
    raise NotFound(f"There is no lesson called '{slug}'.")


def widget_blocks(step: Step) -> list[tuple[int, Block, AnyWidget]]:
    """(position among the step's widgets, block, widget), counting as the step page does from 1."""
    found, index = [], 0
    for block in step.blocks:
        widget = get_widget(block.name) if block.kind == "widget" else None
        if widget is not None:
            index += 1
            found.append((index, block, widget))
    return found


def lesson_defaults(lessons: list[Lesson], slug: str, number: int, index: int, name: str) -> dict[str, object]:
    """The lesson's own parameters of widget `index` on a step, when that widget is `name`; else none."""
    lesson = next((le for le in lessons if le.slug == slug), None)
    step = lesson.step(number) if lesson else None
    found = next((b for i, b, w in widget_blocks(step) if i == index), None) if step else None
    return dict(found.params) if found is not None and found.name == name else {}
