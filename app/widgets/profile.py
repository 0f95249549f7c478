"""The CPU-only profiling exercise as a lesson block: a Web Worker times read, parse and arithmetic.

The timing itself happens in the learner's browser (static/profile-worker.js) over the file that
GET /companion/profile-data.csv streams; this module only checks the block's settings and describes them.
"""

from __future__ import annotations

import re

from pydantic import BaseModel, Field, field_validator, model_validator

from app.companion.profiling import SAFETY, WEB_MAX_MB, WEB_SIZES_MB
from app.widgets.base import Widget

SIZES = WEB_SIZES_MB


def _sizes(value: object) -> str:
    if isinstance(value, list | tuple):
        value = ",".join(str(v) for v in value)
    parts = [p for p in re.split(r"[\s,\[\]'\"]+", str(value)) if p]
    if not parts or any(not p.isdigit() or int(p) not in SIZES for p in parts):
        raise ValueError(f"Sizes are some of: {', '.join(str(s) for s in SIZES)} (MB).")
    return ",".join(str(s) for s in sorted({int(p) for p in parts}))


class Params(BaseModel):
    """The sizes offered, the default size and repeats, and which ways of attaching to the sheet to offer."""

    size_mb: int = Field(default=16, ge=1, le=WEB_MAX_MB, description="Size chosen at first, MB")
    sizes_mb: str = Field(default="8,16,32,64", description="Sizes offered, MB, comma-separated")
    repeat: int = Field(default=5, ge=1, le=20, description="Times each phase runs")
    attach_to_sheet: bool = Field(
        default=True, description="Offer to attach the result to the workload sheet"
    )
    accept_terminal_json: bool = Field(
        default=True, description="Offer to paste `gpu-classroom profile --json`"
    )

    @field_validator("sizes_mb", mode="before")
    @classmethod
    def _check_sizes(cls, value: object) -> str:
        return _sizes(value)

    @model_validator(mode="after")
    def _size_offered(self) -> Params:
        if str(self.size_mb) not in self.sizes_mb.split(","):
            raise ValueError(f"size_mb must be one of the sizes offered: {self.sizes_mb}.")
        return self


class ProfileSpec(BaseModel):
    """What the widget offers."""

    sizes: list[tuple[str, str]]
    size_mb: int
    repeat: int
    attach: bool
    paste: bool
    safety: str
    command: str


def compute(params: Params) -> ProfileSpec:
    """The choices to draw; nothing is measured on the server."""
    sizes = [(s, f"{s} MB") for s in params.sizes_mb.split(",")]
    return ProfileSpec(
        sizes=sizes,
        size_mb=params.size_mb,
        repeat=params.repeat,
        attach=params.attach_to_sheet,
        paste=params.accept_terminal_json,
        safety=SAFETY,
        command=f"gpu-classroom profile --size {sizes[-1][0]}MB --repeat {params.repeat} --json",
    )


WIDGET = Widget(
    name="profile",
    title="Profile reading, parsing and arithmetic on this computer",
    params=Params,
    compute=compute,
    template="widgets/profile.html",
    description="A Web Worker times reading, parsing and arithmetic over a generated CSV file, on the "
    "learner's own CPU.",
)
