"""Inputs that several widgets share: the model, the precision, the predict switch, a typed count."""

from __future__ import annotations

import re
from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel, BeforeValidator, ConfigDict, field_validator

from app.engine.memory import bytes_per_parameter
from app.engine.models import CATALOG, check_model_id
from app.engine.units import PRECISIONS
from app.engine.workload import PlanRequest, checkpointing_value

MODEL_OPTIONS: list[tuple[str, str]] = [(m.id, m.name) for m in CATALOG.values()]
PRECISION_OPTIONS: list[tuple[str, str]] = [
    (p, f"{p} ({bytes_per_parameter(p):g} byte{'' if bytes_per_parameter(p) == 1 else 's'})")
    for p in PRECISIONS
]
GPU_OPTIONS: list[tuple[str, str]] = [
    ("a100", "A100 80GB"),
    ("h100", "H100 SXM 80GB"),
    ("h200", "H200 141GB"),
]


def _model(value: str) -> str:
    """A catalog id; an unknown one gets the list of known ids."""
    return check_model_id(value)


ModelId = Annotated[str, AfterValidator(_model)]


def _predict(value: object) -> str:
    """`predict: true` in a lesson means the widget's own question; false or empty means none."""
    if value is True or str(value).strip().lower() in ("true", "yes", "on", "1"):
        return "auto"
    if value is False or value is None or str(value).strip().lower() in ("", "false", "no", "off", "0"):
        return ""
    return str(value).strip()


PredictKey = Annotated[str, BeforeValidator(_predict)]


# A count's magnitude as people write it after the number: "70B", "8b", "1.5T", "405 billion", "12k".
MAGNITUDES: dict[str, float] = {
    "k": 1e3, "thousand": 1e3, "m": 1e6, "million": 1e6, "b": 1e9, "bn": 1e9, "billion": 1e9,
    "t": 1e12, "trillion": 1e12,
}
# Fields that count things (parameters, tokens, samples) read a magnitude after the number; other fields do not,
# since there "30m" or "8 GB" would mean minutes or a size, not millions or billions.
COUNT_NAMES = ("parameters", "tokens", "samples")
_SEPARATOR = re.compile(r"(?<=\d)[,_ \u00a0\u2009\u202f'](?=\d)")
_TYPED = re.compile(r"^([-+]?(?:\d+\.?\d*|\.\d+)(?:e[-+]?\d+)?)\s*([a-z]*)$", re.IGNORECASE)


def counts_things(name: str) -> bool:
    """Whether a field named so counts things, and so reads "70B" or "1.5 trillion"."""
    return name == "parameters" or any(word in name.split("_") for word in COUNT_NAMES)


def read_number(text: str, *, magnitudes: bool = False) -> float | None:
    """A number as people type it: 7,000,000,000, 7 000 000 000, 7e9 and, with `magnitudes`, 7B, 7b, 7 billion
    or 1.5T. None when the text is not a number (a float past the largest reads as an infinity)."""
    cleaned = _SEPARATOR.sub("", text.strip().replace("\u2212", "-"))
    match = _TYPED.match(cleaned)
    if match is None:
        return None
    value, word = float(match.group(1)), match.group(2).lower()
    if not word:
        return value
    if not magnitudes or word not in MAGNITUDES:
        return None
    return value * MAGNITUDES[word]


def _count(value: object) -> object:
    """A count as people type it (see read_number); text that is no number goes on to the number check."""
    if isinstance(value, str):
        read = read_number(value, magnitudes=True)
        return value if read is None else read
    return value


TypedCount = Annotated[float, BeforeValidator(_count)]


def check_key(value: str, keys: tuple[str, ...]) -> str:
    """A predict key this widget knows ('auto' picks its default)."""
    if value and value != "auto" and value not in keys:
        raise ValueError(f"Choose one of: auto, {', '.join(keys)}.")
    return value


def engine_range(model: type[BaseModel], name: str, unit: float = 1.0, le: float | None = None) -> dict[str, Any]:
    """The bounds of an engine model's field (ge, gt, le, lt) in a widget's own unit (engine value ÷ `unit`).

    A widget's input that feeds an engine field takes its range from here, so the widget accepts exactly what
    the engine does: the range is declared once, in the engine. `le` may only narrow the top of the range
    (a slider's sensible end), never widen it.
    """
    bounds: dict[str, Any] = {}
    for item in model.model_fields[name].metadata:
        for key in ("ge", "gt", "le", "lt"):
            value = getattr(item, key, None)
            if isinstance(value, int | float):
                bounds[key] = value / unit if unit != 1 else value
    if le is not None:
        top = bounds.get("le", bounds.get("lt", float("inf")))
        if le > top:
            raise ValueError(f"{model.__name__}.{name}: a widget may not accept more than the engine ({le} > {top})")
        bounds.pop("lt", None)
        bounds["le"] = le
    return bounds


class PlanFields(PlanRequest):
    """The engine's PlanRequest as a widget's Params start from it: every field, bound, validator and message
    declared once, in the engine (a field the engine adds comes along), read from a form's or a lesson's text."""

    model_config = ConfigDict(strict=False)  # a query string's "4" is the number 4

    @field_validator("activation_checkpointing", mode="before")
    @classmethod
    def _checkpointing(cls, value: object) -> object:
        """The engine's reading of the old boolean form, also as text ("true" is full)."""
        return checkpointing_value(value, text=True)

    def request(self) -> PlanRequest:
        """The engine's request for these fields: validated once already, by the engine's own validators."""
        fields = {k: getattr(self, k) for k in PlanRequest.model_fields}
        return PlanRequest.model_construct(_fields_set=self.model_fields_set & set(fields), **fields)
