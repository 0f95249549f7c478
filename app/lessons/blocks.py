"""A lesson's widget and drill blocks checked against the widgets and drills the app has.

`load_lessons(roots, validate_lesson_block)` reports each problem with its file and line; `gpu-classroom check`,
the app's start-up and author mode all check lessons with this one function. Messages are for the lesson's author:
the key as written, at its own line, the names there are and the closest one to a misspelt name.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache
from typing import Any

from pydantic import BaseModel, ValidationError

from app.drills import declarative, declared_check
from app.drills import registry as drills
from app.drills.author_errors import messages, suggest
from app.drills.declared_check import Located, line_of, yaml_lines
from app.lessons.expressions import Evaluator
from app.widgets.base import AnyWidget
from app.widgets.registry import all_widgets, get_widget


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
        if widget is None:
            names = sorted(all_widgets())
            return [f"unknown widget '{name}'{suggest(name, names)}; the widgets: {', '.join(names)}"]
        return widget_problems(widget, params, source)
    drill = drills.get_drill(name)
    if drill is None:
        names = sorted(drills.all_drills())
        return [f"unknown drill '{name}'{suggest(name, names)}; the built-in drills: {', '.join(names)}. A drill "
                "of your own starts its block with kind: numeric or kind: choice"]
    return settings_problems(f"drill {name}", drill.settings, params, source)


def widget_problems(widget: AnyWidget, params: Mapping[str, Any], source: str) -> list[str]:
    """A widget block's settings the widget does not have, and values its inputs refuse, each at its key's line."""
    lines = yaml_lines(source)
    fields = list(widget.params.model_fields)
    out: list[str] = [Located(f"widget {widget.name}: unknown setting '{k}'{suggest(str(k), fields)}; "
                              f"its settings: {', '.join(fields)}", line_of(lines, (str(k),)))
                      for k in params if k not in fields]
    given = {k: v for k, v in params.items() if k in fields and v != ""}  # as parse_params reads a block
    return out + settings_problems(f"widget {widget.name}", widget.params, given, source, lines)


def settings_problems(what: str, model: type[BaseModel], params: Mapping[str, Any], source: str,
                      lines: Mapping[tuple[str | int, ...], int] | None = None) -> list[str]:
    """The values `model` refuses, as an author reads them, each at its key's line."""
    try:
        model.model_validate(dict(params))
    except ValidationError as exc:
        lines = yaml_lines(source) if lines is None else lines
        return [Located(f"{what}: {msg}", line_of(lines, loc)) for loc, msg in messages(exc, model)]
    return []
