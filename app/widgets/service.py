"""The widget lifecycle in one place: parse the lesson's values and the query, validate, compute, place the work
on dgx-1 and say what the form shows next. Routers and page services call `render`; nothing else computes a widget.

    render(widget, lesson_params, query) -> WidgetInstance
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, Field, ValidationError

from app.engine.errors import EngineError
from app.engine.placement import NodeLoad
from app.widgets._live import LiveRun
from app.widgets.base import ParamErrors, Widget, field_errors, parse_params

# A widget's number on its step, counted from 1: `w=2` in an update, `w2.gpus=4` in a step's address.
W_MIN, W_MAX = 1, 99
LESSON_SLUG_MAX = 100
STEP_MAX = 10_000


class WidgetAddress(BaseModel):
    """Where a widget update comes from: widget `w` of step `step` of lesson `lesson`, or the widget's own page."""

    w: int = Field(default=W_MIN, ge=W_MIN, le=W_MAX, description="The widget's number on its step, from 1")
    lesson: str = Field(default="", max_length=LESSON_SLUG_MAX, pattern=r"^[A-Za-z0-9-]*$", description="Slug")
    step: int = Field(default=0, ge=0, le=STEP_MAX, description="Step number; 0 on the widget's own page")

    @classmethod
    def from_query(cls, query: Mapping[str, str]) -> WidgetAddress:
        """The envelope of an update's query string; a malformed part falls back to its default, on its own."""
        fields: dict[str, Any] = {}
        for name in cls.model_fields:
            if name not in query:
                continue
            try:
                cls.model_validate({name: query[name]})
            except ValidationError:
                continue
            fields[name] = query[name]
        return cls.model_validate(fields)

    @property
    def in_lesson(self) -> bool:
        """The update comes from a lesson's step (whose own values are the widget's defaults)."""
        return bool(self.lesson and self.step)


class WidgetInstance(BaseModel):
    """One widget computed for one set of inputs.

    `values` is what the form shows (the lesson's values, then what was typed); `params` the values actually used
    for `result`; `errors` a sentence per field that was refused. Today a refused input computes the lesson's own
    values; a field-by-field fallback (keep each field's last valid value) would change only `params` here."""

    name: str
    title: str
    values: dict[str, str] = Field(description="Each input as the form shows it")
    defaults: dict[str, str] = Field(description="The lesson's own values as text: a link names only what differs")
    errors: dict[str, str] = Field(default_factory=dict, description="A readable message per refused field")
    params: BaseModel = Field(description="The validated inputs the result was computed from")
    result: BaseModel = Field(description="The widget's compute(params)")
    node: NodeLoad | None = Field(default=None, description="The work placed on dgx-1, if the widget places any")
    running: bool | None = Field(default=None, description="A live run: still running; None for other widgets")

    @property
    def stopped(self) -> bool:
        """A live run that has finished or is paused, with nothing refused: htmx may stop polling (286)."""
        return self.running is False and not self.errors


def render(widget: Widget, lesson_params: Mapping[str, Any], query: Mapping[str, Any]) -> WidgetInstance:
    """Validate, compute and place one widget: the lesson's values under the query's; invalid input keeps the
    typed values and their messages beside the lesson's own result."""
    fields = widget.params.model_fields
    defaults = {k: as_text(v.default) for k, v in fields.items()}
    defaults.update({k: as_text(v) for k, v in lesson_params.items() if k in fields})
    typed = {k: str(v) for k, v in query.items() if k in fields}
    errors: dict[str, str] = {}
    try:
        params = parse_params(widget, lesson_params, typed)
        result, node = _computed(widget, params)
    except ParamErrors as exc:
        errors = exc.errors
    except (EngineError, ValidationError) as exc:  # the engine refuses what the Params let through
        errors = engine_errors(widget, exc, {k: v for k, v in typed.items() if defaults.get(k) != v})
    if errors:  # show the lesson's own result beside the messages
        params = parse_params(widget, lesson_params)
        result, node = _computed(widget, params)
    values = {**defaults, **typed}
    live = result if isinstance(result, LiveRun) else None
    if live is not None:
        values.update(live.form_values())  # a live run's start time travels with the page
    return WidgetInstance(
        name=widget.name, title=widget.title, values=values, defaults=defaults, errors=errors, params=params,
        result=result, node=node, running=live.is_running() if live is not None else None,
    )  # fmt: skip


def _computed(widget: Widget, params: BaseModel) -> tuple[BaseModel, NodeLoad | None]:
    result = widget.compute(params)
    if widget.node_load is not None:
        return result, widget.node_load(params, result)
    return result, result.placement() if isinstance(result, LiveRun) else None


def engine_errors(widget: Widget, exc: EngineError | ValidationError, changed: Mapping[str, str]) -> dict[str, str]:
    """The engine's refusal as a message beside a field: the field it names when the widget has one, else the
    first input the learner changed."""
    if isinstance(exc, ValidationError):
        return field_errors(widget, exc, changed)
    fields = list(widget.params.model_fields)
    named = getattr(exc, "field", "")
    key = named if named in fields else next((k for k in fields if k in changed), fields[0])
    return {key: str(exc)}


def as_text(value: Any) -> str:
    """A value as a form field holds it and a person types it."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer() and abs(value) >= 1e6:
        return f"{value:.6g}".replace("e+", "e")  # 1.56e13, as a person types it
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return "" if value is None else str(value)
