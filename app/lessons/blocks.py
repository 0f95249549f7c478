"""A lesson's widget and drill blocks checked against the widgets and drills the app has.

`load_lessons(roots, validate_lesson_block)` reports each problem with its file and line; `gpu-classroom check`,
the app's start-up and author mode all check lessons with this one function.
"""

from __future__ import annotations

from functools import cache

from app.drills import declarative, declared_check
from app.drills import registry as drills
from app.lessons.expressions import Evaluator
from app.widgets.base import validate_block
from app.widgets.registry import get_widget


@cache
def evaluator() -> Evaluator:
    """The one evaluator of declared drills' expressions (it caches compiled expressions)."""
    return Evaluator()


def validate_lesson_block(kind: str, name: str, params: dict[str, object], source: str = "",
                          seeds: int | None = None) -> list[str]:
    """Problems with one block: an unknown widget or drill, or parameters it does not take; a drill the block
    declares itself (app/drills/declarative.py) is self-checked over `seeds` draws."""
    if kind == "drill" and "kind" in params:
        seeds = declarative.SELF_CHECK_SEEDS if seeds is None else seeds
        return list(declared_check.check(params, source, evaluator(), seeds=seeds, name=name))
    if kind == "widget":
        widget = get_widget(name)
        return [f"unknown widget '{name}'"] if widget is None else validate_block(widget, params)
    return drills.validate_block(name, params)
