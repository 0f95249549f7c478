"""The workload sheet as a lesson block: five headings, each with the numbers under it marked known or to measure
one by one, saved as the learner types.

The widget only describes the form; the learner's saved sheet comes from the classroom service through the
web layer (app/web/companion.py), and saving goes to POST /companion/sheet.
"""

from __future__ import annotations

import re
from typing import Literal

from pydantic import BaseModel, Field, field_validator

from app.engine.worksheet import FIELD_KEYS, FIELDS, FieldSpec
from app.widgets.base import Widget

EXPORTS = ("markdown", "json")


def _names(value: object, allowed: tuple[str, ...], what: str) -> str:
    """A YAML list, a comma-separated string or a list's text form, checked against `allowed`."""
    if isinstance(value, list | tuple):
        value = ",".join(str(v) for v in value)
    names = [n for n in re.split(r"[\s,\[\]'\"]+", str(value)) if n]
    unknown = [n for n in names if n not in allowed]
    if unknown or not names:
        raise ValueError(f"{what} are some of: {', '.join(allowed)}.")
    return ",".join(dict.fromkeys(names))


class Params(BaseModel):
    """Which headings to show, whether to show the classifier's example text, which exports to offer."""

    fields: str = Field(default=",".join(FIELD_KEYS), description="Headings shown, comma-separated")
    example: Literal["classifier", "none"] = Field(default="classifier", description="Greyed example text")
    export: str = Field(default="markdown,json", description="Exports offered: markdown, json")

    @field_validator("fields", mode="before")
    @classmethod
    def _fields(cls, value: object) -> str:
        return _names(value, FIELD_KEYS, "Fields")

    @field_validator("export", mode="before")
    @classmethod
    def _export(cls, value: object) -> str:
        return _names(value, EXPORTS, "Exports")


class SheetSpec(BaseModel):
    """The headings to draw, in order, and the exports to link."""

    specs: list[FieldSpec]
    exports: list[str]


def compute(params: Params) -> SheetSpec:
    """The headings of the sheet; example text only as a placeholder, never as a value."""
    shown = params.fields.split(",")
    specs = [f if params.example == "classifier" else f.model_copy(update={"example": ""}) for f in FIELDS]
    return SheetSpec(specs=[f for f in specs if f.key in shown], exports=params.export.split(","))


WIDGET = Widget(
    name="workload-sheet",
    title="Your workload sheet",
    params=Params,
    compute=compute,
    template="widgets/workload-sheet.html",
    description="Input, preparation, computation, outputs and dependencies, each number known or to measure; "
    "autosaved, exported as Markdown and JSON.",
)
