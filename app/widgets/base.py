"""What a widget is: a Params model, a compute function over the engine, and one template."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from pydantic import AfterValidator, BaseModel, Field, ValidationError

from app.engine.placement import NodeLoad


class Prediction(BaseModel):
    """A "predict first" widget's question for the lesson's own values, and the engine's answer to it."""

    key: str = Field(description="Names the question; one stored guess per learner, step and key")
    question: str
    unit: str = Field(description="Unit of the number guessed, e.g. GB or tokens/s")
    answer: float = Field(description="The engine's answer, in `unit`")
    answer_text: str = Field(description="The engine's answer as the page shows it")
    choice_label: str = Field(default="", description="A second question with choices, e.g. 'Will the job start?'")
    choices: list[tuple[str, str]] = Field(default_factory=list, description="(value, label) of each choice")
    answer_choice: str = Field(default="", description="The right choice's value, when there are choices")

    def choice_text(self, value: str) -> str:
        """A choice's label in a sentence: 'it starts'."""
        return next((text for v, text in self.choices if v == value), value).lower()


P = TypeVar("P", bound=BaseModel)
R = TypeVar("R", bound=BaseModel)


@dataclass(frozen=True)
class Widget(Generic[P, R]):
    """A widget: its Params model `P`, `compute(params: P) -> R` over the engine, and one template. mypy checks
    compute, `node_load` and `predict` against the Params and the result. `node_load` is given when the widget
    places work on dgx-1 (a live widget's result says it itself: see app.widgets._live.LiveRun); `predict` when
    it can ask for a guess before it shows."""

    name: str
    title: str
    params: type[P]
    compute: Callable[[P], R]
    template: str
    node_load: Callable[[P, R], NodeLoad] | None = None
    description: str = ""
    predict: Callable[[P, R], Prediction] | None = None


# Any widget, whatever its Params and result: what the registry holds and the lifecycle takes.
AnyWidget = Widget[Any, Any]


def default(model: type[BaseModel], name: str, value: object) -> Any:
    """An engine request field with the widget's own starting value, declared with the engine's own type alias
    (which carries the constraints): `sharding: Sharding = default(PlanRequest, "sharding", "zero3")`. The
    description and validators stay the engine's; only the default differs."""
    return Field(default=value, description=model.model_fields[name].description)


def one_of(*allowed: int) -> AfterValidator:
    """A validator for a number that must be one of a few values (query strings arrive as text)."""

    def check(value: int) -> int:
        if value not in allowed:
            raise ValueError(f"Choose one of: {', '.join(str(a) for a in allowed)}.")
        return value

    return AfterValidator(check)


class ParamErrors(Exception):
    """Widget input that failed validation: a readable message per field."""

    def __init__(self, errors: dict[str, str]) -> None:
        self.errors = errors
        super().__init__("; ".join(f"{k}: {v}" for k, v in errors.items()))


def readable(err: Mapping[str, object]) -> str:
    """One pydantic error as a sentence for a learner."""
    found = err.get("ctx")
    ctx: Mapping[str, object] = found if isinstance(found, Mapping) else {}
    kind = err.get("type", "")
    if kind in ("greater_than_equal", "greater_than"):
        return f"Must be at least {_fmt(ctx.get('ge', ctx.get('gt')))}."
    if kind in ("less_than_equal", "less_than"):
        return f"Must be at most {_fmt(ctx.get('le', ctx.get('lt')))}."
    if kind in ("float_parsing", "int_parsing", "float_type", "int_type", "int_from_float"):
        return "Enter a number, such as 7e9 or 7000000000."
    if kind in ("literal_error", "enum"):
        return f"Choose one of: {ctx.get('expected', 'the listed values')}."
    if kind == "extra_forbidden":
        return "This widget has no such setting."
    msg = str(err.get("msg", "Invalid value."))
    return msg.removeprefix("Value error, ")


def _fmt(value: object) -> str:
    """A bound as people write it: 1,000,000 not 1e+06, 0 not 0.0, 0.5 stays 0.5."""
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, int) and not isinstance(value, bool):
        return f"{value:,}"
    return f"{value:,.6g}" if isinstance(value, float) else str(value)


def parse_params(widget: Widget[P, R], *layers: Mapping[str, object]) -> P:
    """Validate widget params from layered sources (lesson YAML, then query); ParamErrors when bad."""
    merged: dict[str, object] = {}
    fields = widget.params.model_fields
    for layer in layers:
        merged.update({k: v for k, v in layer.items() if k in fields and v != ""})
    try:
        return widget.params.model_validate(merged)
    except ValidationError as exc:
        raise ParamErrors(field_errors(widget, exc, layers[-1] if layers else {})) from exc


def field_errors(widget: AnyWidget, exc: ValidationError, typed: Mapping[str, object]) -> dict[str, str]:
    """A readable message per widget field. An error about no field of the widget (a rule across fields, or one
    an engine model raised) goes beside the first input (in the widget's order) the learner set, else its first."""
    fields = list(widget.params.model_fields)
    fallback = next((k for k in fields if k in typed), fields[0] if fields else "value")
    errors: dict[str, str] = {}
    for e in exc.errors():
        key = str(e["loc"][0]) if e["loc"] else ""
        message = readable(dict(e))  # an engine rule's message ("training needs ...") opens a sentence beside a field
        errors.setdefault(key if key in fields else fallback, message[:1].upper() + message[1:])
    return errors


def validate_block(widget: AnyWidget, params: Mapping[str, object]) -> list[str]:
    """Problems with a lesson's widget block: unknown settings and values the Params model refuses."""
    unknown = [k for k in params if k not in widget.params.model_fields]
    msgs = [f"widget {widget.name}: unknown setting '{k}'" for k in unknown]
    try:
        parse_params(widget, params)
    except ParamErrors as exc:
        msgs += [f"widget {widget.name}: {k}: {v}" for k, v in exc.errors.items()]
    return msgs
