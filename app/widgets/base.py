"""What a widget is: a Params model, a compute function over the engine, and one template."""

from __future__ import annotations

import math
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import cache
from typing import Any, Generic, TypeVar, get_args

from pydantic import AfterValidator, BaseModel, Field, ValidationError

from app.engine.placement import NodeLoad
from app.widgets._fields import counts_things, read_number


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


def readable(err: Mapping[str, object], spec: FieldSpec | None = None) -> str:
    """One pydantic error as a sentence for a learner; with the field's `spec`, a number out of range or not a
    number is told the field's range and an example that suits it."""
    found = err.get("ctx")
    ctx: Mapping[str, object] = found if isinstance(found, Mapping) else {}
    kind = err.get("type", "")
    span = f" ({spec.span()})" if spec is not None and spec.span() else ""
    if kind in ("greater_than_equal", "greater_than"):
        return f"Must be at least {plain(ctx.get('ge', ctx.get('gt')))}{span}."
    if kind in ("less_than_equal", "less_than"):
        return f"Must be at most {plain(ctx.get('le', ctx.get('lt')))}{span}."
    if kind in ("float_parsing", "int_parsing", "float_type", "int_type", "int_from_float", "finite_number"):
        return spec.asked() if spec is not None else "Enter a number, such as 8 or 2.5."
    if kind in ("literal_error", "enum"):
        return f"Choose one of: {ctx.get('expected', 'the listed values')}."
    if kind == "extra_forbidden":
        return "This widget has no such setting."
    msg = str(err.get("msg", "Invalid value."))
    return msg.removeprefix("Value error, ")


def plain(value: object) -> str:
    """A number as people write it: 1,000,000 not 1e+06, 0.000001 not 1e-06, 0 not 0.0, 0.5 stays 0.5."""
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, int) and not isinstance(value, bool):
        return f"{value:,}"
    if isinstance(value, float):
        digits = max(0, 6 - math.floor(math.log10(abs(value)))) if value else 0  # six significant digits
        return f"{value:,.{digits}f}".rstrip("0").rstrip(".")
    return str(value)



@dataclass(frozen=True)
class FieldSpec:
    """A number field of a widget as its messages describe it: whole or not, its bounds, an example."""

    whole: bool
    low: float | None = None
    high: float | None = None
    example: float | None = None
    counts: bool = False
    above: bool = False  # the low bound itself is refused (gt)

    def span(self) -> str:
        """'any whole number from 1 to 1,024', or '' when the field has no bound."""
        kind = "any whole number" if self.whole else "any number"
        if self.low is not None and self.above:
            top = f" up to {plain(self.high)}" if self.high is not None else ""
            return f"{kind} above {plain(self.low)}{top}"
        if self.low is not None and self.high is not None:
            return f"{kind} from {plain(self.low)} to {plain(self.high)}"
        if self.low is not None:
            return f"{kind} from {plain(self.low)} up"
        if self.high is not None:
            return f"{kind} up to {plain(self.high)}"
        return ""

    def asked(self) -> str:
        """What to type instead of text that is no number: the range and an example in this field's terms."""
        kind = "a whole number" if self.whole else "a number"
        where = self.span().removeprefix("any whole number ").removeprefix("any number ")
        example = self.example if self.example is not None else self.low
        such = f", such as {plain(example)}" if example is not None else ""
        if self.counts and example is not None and example >= 1e9:
            scale, letter = (1e12, "T") if example >= 1e12 else (1e9, "B")
            such += f" or {plain(example / scale)}{letter}"
        return f"Enter {kind}{' ' + where if where else ''}{such}."


def _number_type(annotation: object) -> type | None:
    """int or float when a field holds a number (also an optional one), else None."""
    if annotation in (int, float):
        return annotation
    numbers = [a for a in get_args(annotation) if a in (int, float)]
    rest = [a for a in get_args(annotation) if a not in (int, float, type(None))]
    return numbers[0] if numbers and not rest else None


def field_specs(params: type[BaseModel]) -> dict[str, FieldSpec]:
    """Every number field of a Params model, with its bounds and its default as the example."""
    return _specs(params)


@cache
def _specs(params: Any) -> dict[str, FieldSpec]:
    specs = {}
    for name, info in params.model_fields.items():
        kind = _number_type(info.annotation)
        if kind is None or kind is bool:
            continue
        bounds: dict[str, float] = {}
        for item in info.metadata:
            for key in ("ge", "gt", "le", "lt"):
                value = getattr(item, key, None)
                if isinstance(value, int | float):
                    bounds[key] = value
        default = info.default if isinstance(info.default, int | float) and not isinstance(info.default, bool) else None
        specs[name] = FieldSpec(whole=kind is int, low=bounds.get("ge", bounds.get("gt")),
                                high=bounds.get("le", bounds.get("lt")), example=default,
                                counts=counts_things(name), above="ge" not in bounds and "gt" in bounds)
    return specs


def read_typed(params: type[BaseModel], values: Mapping[str, object]) -> dict[str, object]:
    """Number fields' text read as people type it ("1e6" GPUs, "70B" parameters): a whole number for a whole
    field, a number past the largest float as the largest (so it meets the range check, not a parse error).
    Text that is no number stays as it is, for the number check to refuse with the field's range."""
    specs = field_specs(params)
    out = dict(values)
    for name, value in values.items():
        spec = specs.get(name)
        if spec is None or not isinstance(value, str):
            continue
        read = read_number(value, magnitudes=spec.counts)
        if read is None or math.isnan(read):
            continue
        if math.isinf(read):
            read = math.copysign(sys.float_info.max, read)
        out[name] = int(read) if spec.whole and read.is_integer() else read
    return out


def parse_params(widget: Widget[P, R], *layers: Mapping[str, object]) -> P:
    """Validate widget params from layered sources (lesson YAML, then query); ParamErrors when bad."""
    merged: dict[str, object] = {}
    fields = widget.params.model_fields
    for layer in layers:
        merged.update({k: v for k, v in layer.items() if k in fields and v != ""})
    try:
        return widget.params.model_validate(read_typed(widget.params, merged))
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
        # an engine rule's message ("training needs ...") opens a sentence beside a field
        message = readable(dict(e), field_specs(widget.params).get(key))
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
