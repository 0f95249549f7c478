"""The widget lifecycle in one place: parse the lesson's values and the query, validate, compute, place the work
on dgx-1 and say what the form shows next. Routers and page services call `render`; nothing else computes a widget.

    render(widget: Widget[P, R], lesson_params, query) -> WidgetInstance[P, R]
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache
from typing import Generic, TypeGuard

from pydantic import BaseModel, Field, ValidationError

from app.engine.errors import EngineError
from app.engine.placement import NodeLoad
from app.widgets._live import LiveRun
from app.widgets.base import P, ParamErrors, R, Widget, field_errors, parse_params

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
        fields: dict[str, str] = {}
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


EMPTY = "Enter a value."
USED_PREFIX = "used."  # `used.gpus`: the value of `gpus` the page's result was computed from (a hidden field)


class WidgetInstance(BaseModel, Generic[P, R]):
    """One widget computed for one set of inputs.

    `values` is what the form shows (the lesson's values, then what was typed); `errors` a sentence per field
    that was refused; `used` the value of each field `result` was computed from, as text: a refused field's last
    valid value (the page's `used.<field>`, else the lesson's), every other field's typed value. The form sends
    `used` back in hidden fields, so the next refusal keeps the last valid value of that field, not the lesson's."""

    name: str = Field(description="The widget's name, as in a lesson's block and its address")
    title: str = Field(description="The widget's title")
    template: str = Field(description="The widget's template, whose `result` and `errors` blocks an update sends")
    values: dict[str, str] = Field(description="Each input as the form shows it")
    defaults: dict[str, str] = Field(description="The lesson's own values as text: a link names only what differs")
    errors: dict[str, str] = Field(default_factory=dict, description="A readable message per refused field")
    used: dict[str, str] = Field(default_factory=dict, description="Each input as the result used it, as text")
    params: P = Field(description="The validated inputs the result was computed from")
    result: R = Field(description="The widget's compute(params)")
    node: NodeLoad | None = Field(default=None, description="The work placed on dgx-1, if the widget places any")
    running: bool | None = Field(default=None, description="A live run: still running; None for other widgets")

    @property
    def stopped(self) -> bool:
        """A live run that has finished or is paused, with nothing refused: htmx may stop polling (286)."""
        return self.running is False and not self.errors

    @property
    def stale(self) -> bool:
        """The result is not the one for the form as shown: some field was refused and kept its last value."""
        return bool(self.errors)

    def used_changed(self) -> dict[str, str]:
        """The `used` values the form must carry: those that differ from the lesson's. A value it does not send
        falls back to the lesson's, the same one, so each update carries and swaps only what changed (a plan
        used to send 27 hidden fields back with every keystroke)."""
        return {k: v for k, v in self.used.items() if self.defaults.get(k) != v}


def render(
    widget: Widget[P, R], lesson_params: Mapping[str, object], query: Mapping[str, str]
) -> WidgetInstance[P, R]:
    """Validate, compute and place one widget, field by field: a refused field (by its Params or by the engine)
    keeps its last valid value and its message, and every other field is used as typed."""
    fields = widget.params.model_fields
    defaults = {k: as_text(v.default) for k, v in fields.items()}
    defaults.update({k: as_text(v) for k, v in lesson_params.items() if k in fields})
    typed = {k: str(v) for k, v in query.items() if k in fields}
    last = {k: str(query[USED_PREFIX + k]) for k in fields if USED_PREFIX + k in query}
    params, result, node, errors = _fallback(widget, lesson_params, {**defaults, **last}, last, typed)
    values = {**defaults, **typed}
    live = result if _live(result) else None
    used = {k: as_text(getattr(params, k, "")) for k in fields}
    if live is not None:
        values.update(live.form_values())  # a live run's start time travels with the page
        for key in live.form_values():
            used.pop(key, None)  # the run's clock is the form's own hidden fields
    return WidgetInstance(
        name=widget.name, title=widget.title, template=widget.template, values=values, defaults=defaults,
        errors=errors, used=used, params=params, result=result, node=node,
        running=live.is_running() if live is not None else None,
    )


def _fallback(
    widget: Widget[P, R], lesson: Mapping[str, object], shown: Mapping[str, str], last: Mapping[str, str],
    typed: Mapping[str, str],
) -> tuple[P, R, NodeLoad | None, dict[str, str]]:
    """Compute from the typed values; a refused field falls back to its last valid value, then to the lesson's,
    and keeps its message. A rule across fields refusing a field not changed now takes back one of the fields
    just changed (the first whose return is accepted). `shown` is each field's value before this change. Each
    round takes back at least one value, so this ends."""
    blank = [k for k, v in typed.items() if not v.strip() and shown.get(k)]  # an emptied field is refused too
    errors = dict.fromkeys(blank, EMPTY)
    chosen = _back(typed, blank, last)
    for _ in range(2 * len(widget.params.model_fields) + 1):
        done = _attempt(widget, lesson, chosen, shown)
        if not isinstance(done, dict):
            return *done, errors
        for key, message in done.items():
            errors.setdefault(key, message)
        changed = _changed(chosen, shown)
        keys = [k for k in done if k in changed]
        if not keys and changed:  # a rule across fields: which change broke it?
            keys = next(([k] for k in changed if not isinstance(_attempt(widget, lesson, _back(chosen, [k], last),
                                                                         shown), dict)), list(changed))
        keys = keys or [k for k in done if k in chosen]
        for key in keys:  # a field taken back says so, even when the rule that refused it named another
            errors.setdefault(key, next(iter(done.values())))
        if not keys:
            break
        chosen = _back(chosen, keys, last)
    params = parse_params(widget, lesson)  # nothing left to take back: the lesson's own values
    result, node = _computed(widget, params)
    return params, result, node, errors


def _attempt(
    widget: Widget[P, R], lesson: Mapping[str, object], chosen: Mapping[str, str], shown: Mapping[str, str]
) -> tuple[P, R, NodeLoad | None] | dict[str, str]:
    """The widget computed from these values, or a message per refused field."""
    try:
        params = parse_params(widget, lesson, chosen)
        return (params, *_computed(widget, params))
    except ParamErrors as exc:
        return exc.errors
    except (EngineError, ValidationError) as exc:  # the engine refuses what the Params let through
        return engine_errors(widget, exc, _changed(chosen, shown))


def _changed(chosen: Mapping[str, str], shown: Mapping[str, str]) -> dict[str, str]:
    """The fields whose value differs from the one the page's result used (else the lesson's)."""
    return {k: v for k, v in chosen.items() if shown.get(k) != v}


def _back(chosen: Mapping[str, str], keys: list[str], last: Mapping[str, str]) -> dict[str, str]:
    """These fields put back to their last valid value, or, when that is what they hold, to the lesson's."""
    back = dict(chosen)
    for key in keys:
        if key in last and back.get(key) != last[key]:
            back[key] = last[key]
        else:
            back.pop(key, None)
    return back


def _computed(widget: Widget[P, R], params: P) -> tuple[R, NodeLoad | None]:
    """The result and the work it places on dgx-1, named by the widget's title (the panel says which widget it
    shows)."""
    result = widget.compute(params)
    node = widget.node_load(params, result) if widget.node_load is not None else None
    if node is None and _live(result):
        node = result.placement()
    return result, None if node is None else node.model_copy(update={"shown_by": widget.title})


def _live(result: BaseModel) -> TypeGuard[LiveRun]:
    """A live run's result? Asked of its class once: a runtime-checkable Protocol's isinstance walks the protocol's
    members on every call (about 11 µs, twice on every update of every widget)."""
    return _live_class(type(result))


@cache
def _live_class(kind: type[BaseModel]) -> bool:
    return issubclass(kind, LiveRun)


def engine_errors(
    widget: Widget[P, R], exc: EngineError | ValidationError, changed: Mapping[str, str]
) -> dict[str, str]:
    """The engine's refusal as a message beside a field: the field it names when the widget has one, else the
    first input the learner changed."""
    if isinstance(exc, ValidationError):
        return field_errors(widget, exc, changed)
    fields = list(widget.params.model_fields)
    named = getattr(exc, "field", "")
    key = named if named in fields else next((k for k in fields if k in changed), fields[0])
    return {key: str(exc)}


def as_text(value: object) -> str:
    """A value as a form field holds it and a person types it."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer() and abs(value) >= 1e6:
        return f"{value:.6g}".replace("e+", "e")  # 1.56e13, as a person types it
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return "" if value is None else str(value)
