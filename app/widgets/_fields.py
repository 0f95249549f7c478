"""Inputs that several widgets share: the model, the precision, the predict switch, a typed count."""

from __future__ import annotations

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


def _count(value: object) -> object:
    """A count as people type it: 7,000,000,000 or 7 000 000 000 as well as 7e9 (the drills accept these too)."""
    if isinstance(value, str):
        return value.replace(",", "").replace("_", "").replace(" ", "").strip()
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
