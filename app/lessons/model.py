"""Lessons as data: a lesson has sections, a section has steps, a step has front matter and blocks."""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal
from urllib.parse import urlencode

from pydantic import BaseModel, ConfigDict, Field

STEP_NUMBER = re.compile(r"^\d+-")  # a step file's number prefix: 13-number-one-compute.md


class Problem(BaseModel):
    """One thing wrong with a lesson file, with where it is; a warning is worth knowing but breaks nothing."""

    file: str
    line: int
    message: str
    warning: bool = False

    def __str__(self) -> str:
        return f"{self.file}:{self.line}: {'warning: ' if self.warning else ''}{self.message}"


class LessonProblems(Exception):
    """Lessons that cannot be served; each problem names its file and line."""

    def __init__(self, problems: list[Problem]) -> None:
        self.problems = problems
        super().__init__("\n".join(str(p) for p in problems))


class StepMeta(BaseModel):
    """A step's front matter."""

    model_config = ConfigDict(extra="forbid")

    title: str = Field(min_length=1)
    summary: str = Field(min_length=1, description="The one-line takeaway the cheat sheet collects.")
    minutes: float = Field(default=1.0, gt=0, le=60)
    formula: str | None = None
    notes: str | None = Field(default=None, description="Speaker notes for presenting mode.")
    instructor_note: str | None = Field(default=None, description="A note for the instructor alone, shown on the "
                                        "class dashboard beside the step; never shown to learners.")


class Block(BaseModel):
    """A piece of a rendered step: HTML prose, or a widget, drill or cheat sheet to render in place."""

    kind: Literal["html", "widget", "drill", "cheatsheet", "reveal"]
    html: str = ""
    name: str = ""
    params: dict[str, Any] = Field(default_factory=dict)
    line: int = 0
    source: str = Field(default="", description="The block's YAML as written (the line of each key)")
    bad_yaml: bool = Field(default=False, description="The YAML did not parse: its one problem is reported already")

    @property
    def declared(self) -> bool:
        """A drill declared in the lesson file (its YAML says `kind:`), named `lesson-slug/drill-id`."""
        return self.kind == "drill" and "kind" in self.params


class Step(BaseModel):
    """One step of a lesson, counted from 1."""

    number: int
    file: Path
    section: str
    meta: StepMeta
    blocks: list[Block] = Field(default_factory=list)
    words: int = 0

    @property
    def title(self) -> str:
        return self.meta.title

    @property
    def has_drill(self) -> bool:
        """The step holds a drill: it is done by mastering the drill, never by pressing on."""
        return any(b.kind == "drill" for b in self.blocks)

    def widgets(self) -> list[Block]:
        """The widget blocks of this step, in page order."""
        return [b for b in self.blocks if b.kind == "widget"]

    @property
    def slug(self) -> str:
        """The step's name in links that survive renumbering: its file's name without the number."""
        return STEP_NUMBER.sub("", self.file.stem)

    def widget_position(self, name: str) -> int | None:
        """Where the first widget called `name` sits among the step's widgets, from 1 as the page's #wN count."""
        return next((i for i, b in enumerate(self.widgets(), 1) if b.name == name), None)


class SectionInfo(BaseModel):
    """A section: a title and the numbers of its steps."""

    title: str
    steps: list[int]


class Lesson(BaseModel):
    """A lesson loaded from its folder."""

    slug: str
    title: str
    summary: str
    minutes: float
    order: int = 100
    presentable: bool = False
    path: Path
    sections: list[SectionInfo]
    steps: list[Step]

    def step(self, number: int) -> Step | None:
        """Step `number` counting from 1, or None."""
        return self.steps[number - 1] if 1 <= number <= len(self.steps) else None

    def step_link(self, name: str, widget: str = "", query: Mapping[str, str] | None = None) -> str | None:
        """The address of the step called `name` (see Step.slug), opening at its widget `widget` with `query` for
        that widget; None when the lesson has no such step or the step no such widget."""
        step = next((s for s in self.steps if s.slug == name), None)
        if step is None:
            return None
        url = f"/lessons/{self.slug}/{step.number}"
        if not widget:
            return url
        at = step.widget_position(widget)
        if at is None:
            return None
        return f"{url}?{urlencode({'w': at, **query})}#w{at}" if query else f"{url}#w{at}"

    def minutes_after(self, number: int) -> float:
        """Minutes of the steps from `number` to the end."""
        return sum(s.meta.minutes for s in self.steps[number - 1 :])
