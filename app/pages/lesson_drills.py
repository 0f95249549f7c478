"""The drill of a lesson's drill block: a built-in one by its name, or the one the block declares itself.

A drill declared in a lesson (`kind: numeric` or `kind: choice` in the block's YAML, see
app/drills/declarative.py) is named `lesson-slug/drill-id`, so its pages and API live at
`/drills/lesson-slug/drill-id/answer` and `/api/drills/lesson-slug/drill-id/question?seed=N`. It is built from
the lesson the app serves now, so a lesson reloaded in author mode serves its new drill at once.
"""

from __future__ import annotations

from pydantic import ValidationError

from app.drills import declarative
from app.drills.base import Drill
from app.drills.registry import all_drills, get_drill
from app.lessons.blocks import evaluator
from app.lessons.model import Block, Lesson

_built: dict[tuple[str, str], Drill] = {}
MAX_BUILT = 256  # drills kept built; an author saving many versions of one block does not grow memory for ever


def drill_for(block: Block) -> Drill | None:
    """The drill a block shows: its own when declared (None when its YAML is not a drill), else the built-in."""
    if not block.declared:
        return get_drill(block.name)
    key = (block.name, block.source)
    if key not in _built:
        try:
            spec = declarative.parse(block.params)
        except ValidationError:
            return None
        if len(_built) >= MAX_BUILT:
            _built.clear()
        _built[key] = declarative.build(block.name, spec, evaluator())
    return _built[key]


def lesson_drills(lessons: list[Lesson]) -> dict[str, Drill]:
    """Every drill declared in these lessons, by name."""
    found: dict[str, Drill] = {}
    for lesson in lessons:
        for step in lesson.steps:
            for block in step.blocks:
                drill = drill_for(block) if block.declared else None
                if drill is not None:
                    found.setdefault(drill.name, drill)
    return found


def every_drill(lessons: list[Lesson]) -> dict[str, Drill]:
    """The built-in drills and those the lessons declare, by name."""
    return {**all_drills(), **dict(sorted(lesson_drills(lessons).items()))}


def find_drill(lessons: list[Lesson], name: str) -> Drill | None:
    """The drill called `name`: a built-in one, or one a lesson declares (`lesson-slug/drill-id`)."""
    return get_drill(name) or (lesson_drills(lessons).get(name) if "/" in name else None)
