"""Drills declared in a lesson file: a ```drill ID``` block whose YAML body starts with `kind: numeric` (or
`kind: choice`), so an instructor writes a graded drill without Python.

The body names the parameters to draw (from a list or a range, per learner from the seed), the prompt, the
parts and their answers, the named wrong answers and the worked solution; every answer and every `{{ }}` in a
text is an engine expression over the parameters. `build` turns the block into the same `Drill` the Python
drills are, so it is graded, stored, mastered and self-checked by the same code (see docs/authoring.md).

Expressions are evaluated by the object passed in (the lessons' `Evaluator`): drills do not import lessons.
"""

from __future__ import annotations

import json
import math
import random
import re
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from app.drills import answers as read
from app.drills.base import (
    SIZE_EXAMPLE,
    BlockSettings,
    Choice,
    Drill,
    Given,
    Part,
    PartKind,
    Question,
    Solution,
    Value,
    Variant,
    distinct,
)

MAX_DRAWS = 100  # redraws allowed to meet `require` before the question is an error
MAX_SOLVED = 1024  # solutions kept, by parameters
SELF_CHECK_SEEDS = 50  # seeds the server checks when it loads a lesson; `gpu-classroom check --seeds` sets its own
IDENT = re.compile(r"^[a-z_][a-z0-9_]*$")
MISTAKE_ID = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")
PER_PARAMETER_UNITS = {"bytes per parameter", "bytes/parameter", "b/param"}
Path = tuple[str | int, ...]


class Expressions(Protocol):
    """What a declared drill needs of the lessons' expression evaluator."""

    def value(self, expression: str, names: Mapping[str, Any] | None = None) -> Any: ...

    def text(self, template: str, names: Mapping[str, Any] | None = None) -> str: ...

    def reserved(self) -> Collection[str]: ...


class Overrun(ValueError):
    """An expression stopped because it ran too long or built something too large: the evaluator raises a
    subclass of it, and a drill neither draws again nor checks another seed after one."""


class DeclaredDrillError(ValueError):
    """An expression of a declared drill that fails or gives a value of the wrong kind, with where it is."""

    def __init__(self, path: Path, message: str, overrun: bool = False) -> None:
        self.path = path
        self.overrun = overrun
        super().__init__(message)


# The block's YAML ---------------------------------------------------------------------------------------


class Draw(BaseModel):
    """How one parameter is drawn: from `choices`, or uniformly from `range: [low, high]` (whole numbers
    when both ends are whole and no `digits` is given; `log: true` draws evenly across magnitudes)."""

    model_config = ConfigDict(extra="forbid")

    choices: list[str | int | float | bool] | None = Field(default=None, min_length=1)
    range: list[int | float] | None = Field(default=None, min_length=2, max_length=2)
    log: bool = False
    digits: int | None = Field(default=None, ge=1, le=6, description="Significant digits of a drawn real number")

    @model_validator(mode="after")
    def _one_way(self) -> Draw:
        if (self.choices is None) == (self.range is None):
            raise ValueError("give either choices: [...] or range: [low, high]")
        if self.range is not None:
            low, high = self.range
            if low > high:
                raise ValueError("range: the low end is above the high end")
            if self.log and low <= 0:
                raise ValueError("range: log needs a low end above 0")
        return self

    @property
    def whole(self) -> bool:
        return self.range is not None and all(isinstance(v, int) for v in self.range) and not self.log and \
            self.digits is None

    def draw(self, rng: random.Random) -> Any:
        if self.choices is not None:
            return rng.choice(self.choices)
        assert self.range is not None
        low, high = self.range
        if self.whole:
            return rng.randint(int(low), int(high))
        x = 10 ** rng.uniform(math.log10(low), math.log10(high)) if self.log else rng.uniform(low, high)
        return float(f"{x:.{self.digits}g}") if self.digits else x

    def corners(self) -> list[Any]:
        """The values worth checking every combination of: each listed value, each end of a range."""
        if self.choices is not None:
            return list(self.choices)
        assert self.range is not None
        low, high = self.range
        if self.digits:
            return sorted({float(f"{low:.{self.digits}g}"), float(f"{high:.{self.digits}g}")})
        return [int(low), int(high)] if self.whole else [float(low), float(high)]


def _expression_text(v: Any) -> Any:
    """A bare YAML number or boolean written as an answer is the expression that gives it."""
    return str(v).lower() if isinstance(v, bool) else str(v) if isinstance(v, int | float) else v


class MistakeSpec(BaseModel):
    """A named wrong answer: its value as an expression (`none` when it does not apply to a question) and what
    to tell a learner who gives it, naming the principle."""

    model_config = ConfigDict(extra="forbid")

    id: str = Field(pattern=MISTAKE_ID.pattern)
    answer: str = Field(min_length=1)
    message: str = Field(min_length=1)

    @field_validator("answer", mode="before")
    @classmethod
    def _answer_text(cls, v: Any) -> Any:
        return _expression_text(v)


class ChoiceSpec(BaseModel):
    """One option of a choice part; `message` is what a learner who picks it wrongly is told."""

    model_config = ConfigDict(extra="forbid")

    value: str = Field(min_length=1, pattern=MISTAKE_ID.pattern)
    label: str = Field(min_length=1)
    names: list[str] = Field(default_factory=list)
    message: str = ""


class PartSpec(BaseModel):
    """One thing asked: `answer` is an expression (bytes for a size, as the engine gives them); a `kind: text`
    part asks for a sentence or two, is never graded and has no answer."""

    model_config = ConfigDict(extra="forbid")

    id: str = Field(pattern=IDENT.pattern)
    prompt: str = Field(min_length=1)
    kind: PartKind | None = Field(default=None, description="Default: from the unit and the drill's kind")
    unit: str = ""
    tolerance: float = Field(default=0.0, ge=0, le=0.5)
    weight: float = Field(default=1.0, gt=0, le=100, description="The part's share of the score")
    example: str = ""
    answer: str = Field(default="")
    choices: list[ChoiceSpec] = Field(default_factory=list)
    mistakes: list[MistakeSpec] = Field(default_factory=list)

    @field_validator("answer", mode="before")
    @classmethod
    def _answer_text(cls, v: Any) -> Any:
        return _expression_text(v)

    @model_validator(mode="after")
    def _sound(self) -> PartSpec:
        if self.kind == "text":
            if self.answer or self.mistakes or self.choices or self.unit or self.tolerance:
                raise ValueError("a text part is not graded: it takes no answer, mistakes, choices, unit or tolerance")
            return self
        if not self.answer.strip():
            raise ValueError("the key 'answer' is missing: an expression for the expected value")
        if (self.kind == "choice" or self.choices) and len(self.choices) < 2:
            raise ValueError("a choice part needs at least two choices")
        if self.kind == "yes_no" and self.choices and sorted(c.value for c in self.choices) != ["no", "yes"]:
            raise ValueError("a yes/no part's choices are the values yes and no (with labels of your own)")
        if self.kind == "size" and self.unit.lower() not in read.SIZE_UNITS:
            raise ValueError(f"a size needs a unit such as GB, GiB or bytes, not '{self.unit}'")
        if len({m.id for m in self.mistakes}) != len(self.mistakes):
            raise ValueError("two mistakes share an id")
        return self


class GivenSpec(BaseModel):
    model_config = ConfigDict(extra="forbid")

    label: str = Field(min_length=1)
    text: str = Field(min_length=1)


class DrillSpec(BlockSettings):
    """The YAML body of a declared drill block (`mastery` as for any drill block)."""

    kind: Literal["numeric", "choice"] = Field(description="numeric: numbers with units; choice: pick one")
    title: str = Field(min_length=1)
    description: str = Field(default="", description="What the drill asks, in a line: the dashboard and projector")
    parameters: dict[str, Draw] = Field(default_factory=dict)
    let: dict[str, str] = Field(default_factory=dict, description="Named expressions over the parameters, in order")
    require: str | None = Field(default=None, description="Redraw until this expression is true")
    prompt: str = Field(min_length=1)
    givens: list[GivenSpec] = Field(default_factory=list)
    parts: list[PartSpec] = Field(min_length=1, max_length=10)
    solution: list[str] = Field(min_length=1)
    hints: list[str] = Field(min_length=1)

    @field_validator("let", mode="before")
    @classmethod
    def _let_texts(cls, v: Any) -> Any:
        return {k: _expression_text(e) for k, e in v.items()} if isinstance(v, dict) else v

    @model_validator(mode="after")
    def _parts_fit_the_drill(self) -> DrillSpec:
        ids = [p.id for p in self.parts]
        if len(set(ids)) != len(ids):
            raise ValueError(f"two parts share an id: {ids}")
        for p in self.parts:
            if part_kind(self.kind, p) == "choice" and len(p.choices) < 2:
                raise ValueError(f"part {p.id}: a choice part needs at least two choices")
        if all(part_kind(self.kind, p) == "text" for p in self.parts):
            raise ValueError("every part is a text part: a drill needs at least one graded part")
        return self


def part_kind(drill_kind: str, p: PartSpec) -> PartKind:
    """A part's kind: as given, else a choice in a choice drill, else from its unit (GB: a size; bytes per
    parameter; anything else counts whole things, such as GPUs)."""
    if p.kind is not None:
        return p.kind
    if drill_kind == "choice" or p.choices:
        return "choice"
    if p.unit.lower() in read.SIZE_UNITS:
        return "size"
    if p.unit.lower() in PER_PARAMETER_UNITS:
        return "per_parameter"
    return "count"


YES_NO = [Choice(value="yes", label="Yes"), Choice(value="no", label="No")]  # a yes/no part's options
EXAMPLES: dict[str, str] = {
    "size": SIZE_EXAMPLE,
    "per_parameter": "a number of bytes",
    "count": "a whole number",
    "yes_no": "yes or no",
    "choice": "",
    "text": "a sentence or two; not graded, your instructor reads it",
}


# The drill ----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Declared:
    """A parsed declared drill and the evaluator its expressions run in."""

    name: str
    spec: DrillSpec
    ex: Expressions
    solved: dict[str, Solution] = field(default_factory=dict, compare=False, repr=False)
    named: dict[str, dict[str, Any]] = field(default_factory=dict, compare=False, repr=False)

    def draw(self, rng: random.Random) -> dict[str, Any]:
        """The parameters of one question (redrawn until `require` holds)."""
        for _ in range(MAX_DRAWS):
            values = {k: d.draw(rng) for k, d in self.spec.parameters.items()}
            if self.meets_require(values):
                return values
        raise DeclaredDrillError(("require",), f"no draw in {MAX_DRAWS} meets require: {self.spec.require}")

    def meets_require(self, values: Mapping[str, Any]) -> bool:
        if self.spec.require is None:
            return True
        return bool(self._value(("require",), self.spec.require, self.names(values)))

    def names(self, values: Mapping[str, Any]) -> dict[str, Any]:
        """The parameters and the author's `let` values, each let evaluated in order over those before it (kept for
        the last questions: every text of a question uses them)."""
        key = json.dumps(values, sort_keys=True, default=str)
        if key not in self.named:
            if len(self.named) >= MAX_SOLVED:
                self.named.clear()
            names = dict(values)
            for name, expression in self.spec.let.items():
                names[name] = self._value(("let", name), expression, names)
            self.named[key] = names
        return self.named[key]

    def _value(self, path: Path, expression: str, values: Mapping[str, Any]) -> Any:
        try:
            return self.ex.value(expression, values)
        except ValueError as exc:
            raise DeclaredDrillError(path, str(exc), overrun=isinstance(exc, Overrun)) from exc

    def _text(self, path: Path, template: str, values: Mapping[str, Any]) -> str:
        try:
            return self.ex.text(template, values)
        except ValueError as exc:
            raise DeclaredDrillError(path, str(exc), overrun=isinstance(exc, Overrun)) from exc

    def question(self, values: Mapping[str, Any]) -> Question:
        """The question these parameters make: texts evaluated, no answer in it."""
        s, names = self.spec, self.names(values)
        parts = [
            Part(id=p.id, prompt=self._text(("parts", i, "prompt"), p.prompt, names), kind=part_kind(s.kind, p),
                 unit=p.unit, tolerance=p.tolerance, weight=p.weight,
                 example=p.example or EXAMPLES[part_kind(s.kind, p)], choices=self._choices(i, p, names))
            for i, p in enumerate(s.parts)
        ]
        givens = [Given(label=g.label, text=self._text(("givens", i, "text"), g.text, names))
                  for i, g in enumerate(s.givens)]
        return Question(drill=self.name, title=self._text(("title",), s.title, names),
                        prompt=self._text(("prompt",), s.prompt, names), givens=givens, parameters=dict(values),
                        parts=parts)

    def _choices(self, i: int, p: PartSpec, names: Mapping[str, Any]) -> list[Choice]:
        """A part's options, labels evaluated; a yes/no part without its own labels offers Yes and No."""
        if not p.choices and part_kind(self.spec.kind, p) == "yes_no":
            return list(YES_NO)
        return [Choice(value=c.value, label=self._text(("parts", i, "choices", j, "label"), c.label, names),
                       names=c.names) for j, c in enumerate(p.choices)]

    def generate(self, rng: random.Random) -> Question:
        """A question whose texts and answers all evaluate: a draw the self-check never met that makes an
        expression fail is passed over for the next (`check` reports such draws where it finds them); an
        expression stopped by its budget is not tried again."""
        failure: DeclaredDrillError | None = None
        for _ in range(MAX_DRAWS):
            try:
                q = self.question(self.draw(rng))
                self.expected(q)
                return q
            except DeclaredDrillError as exc:
                if exc.overrun:
                    raise
                failure = exc
        assert failure is not None
        raise failure

    def expected(self, q: Question) -> dict[str, Value]:
        """Each part's expected value in base units (bytes for a size); '' for a text part."""
        names = self.names(q.parameters)
        return {p.id: "" if part_kind(self.spec.kind, p) == "text" else
                self._answer(("parts", i, "answer"), q.part(p.id), self._value(("parts", i, "answer"), p.answer, names))
                for i, p in enumerate(self.spec.parts)}

    def variants(self, q: Question) -> list[Variant]:
        """Every named wrong answer that applies to this question, before dropping those a learner cannot
        tell apart (the self-check reports those)."""
        out = []
        names = self.names(q.parameters)
        for i, p in enumerate(self.spec.parts):
            for j, c in enumerate(p.choices):
                if c.message:
                    message = self._text(("parts", i, "choices", j, "message"), c.message, names)
                    out.append(Variant(part=p.id, id=c.value, value=c.value, message=message))
            for j, m in enumerate(p.mistakes):
                path = ("parts", i, "mistakes", j, "answer")
                raw = self._value(path, m.answer, names)
                if raw is None:
                    continue
                message = self._text(("parts", i, "mistakes", j, "message"), m.message, names)
                out.append(Variant(part=p.id, id=m.id, value=self._answer(path, q.part(p.id), raw), message=message))
        return out

    def solve(self, q: Question) -> Solution:
        """The expected values, the mistakes a learner can tell apart, the worked solution and the hints (kept for
        the last questions: grading one answer and showing its hints would otherwise evaluate them all again)."""
        key = json.dumps(q.parameters, sort_keys=True)
        if key not in self.solved:
            if len(self.solved) >= MAX_SOLVED:
                self.solved.clear()
            self.solved[key] = self._solve(q)
        return self.solved[key]

    def _solve(self, q: Question) -> Solution:
        expected = self.expected(q)
        names = self.names(q.parameters)
        worked = {**names, "answer": dict(expected)}  # a solution may show `answer.part_id`; hints may not
        return Solution(
            expected=expected,
            variants=distinct(q, expected, self.variants(q)),
            solution=[self._text(("solution", i), line, worked) for i, line in enumerate(self.spec.solution)],
            hints=[self._text(("hints", i), line, names) for i, line in enumerate(self.spec.hints)],
        )

    @staticmethod
    def _answer(path: Path, part: Part, raw: Any) -> Value:
        """An expression's value as the part's expected value, or DeclaredDrillError saying what is wrong."""
        if part.kind == "yes_no":
            if isinstance(raw, bool) or raw in ("yes", "no"):
                return ("yes" if raw else "no") if isinstance(raw, bool) else str(raw)
            raise DeclaredDrillError(path, f"a yes/no answer must be true or false, not {raw!r}")
        if part.kind == "choice":
            values = [c.value for c in part.choices]
            if str(raw) in values and not isinstance(raw, bool):
                return str(raw)
            raise DeclaredDrillError(path, f"gives {raw!r}, which is not one of the choices {values}")
        if isinstance(raw, bool) or not isinstance(raw, int | float):
            raise DeclaredDrillError(path, f"gives {raw!r}, not a number")
        if not math.isfinite(raw) or raw < 0:
            raise DeclaredDrillError(path, f"gives {raw!r}: an answer is a finite number, 0 or more")
        return float(raw)


def malformed(spec: DrillSpec) -> tuple[dict[str, str], ...]:
    """Answers that must be refused rather than graded: each part left empty, and a size given as a rate."""
    out = [{p.id: ""} for p in spec.parts if part_kind(spec.kind, p) != "text"]
    out += [{p.id: "128 GB/s"} for p in spec.parts if part_kind(spec.kind, p) == "size"]
    return tuple(out)


def parse(params: Mapping[str, Any]) -> DrillSpec:
    """The block's YAML as a spec; ValidationError when it does not fit the format."""
    return DrillSpec.model_validate(dict(params))


def build(name: str, spec: DrillSpec, ex: Expressions) -> Drill:
    """The Drill a declared block makes, graded and stored like any other (its settings model is the spec)."""
    declared = Declared(name=name, spec=spec, ex=ex)
    return Drill(name=name, title=spec.title if "{{" not in spec.title else name.rpartition("/")[2],
                 description=spec.description, generate=declared.generate,
                 solve=declared.solve, settings=DrillSpec, malformed=malformed(spec))
