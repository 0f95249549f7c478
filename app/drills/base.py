"""What a drill is: a question generated from a seed, parts that read answers as typed, and feedback.

A drill module writes `generate(rng) -> Question` and `solve(question) -> Solution` (the expected value of
each part, the classic wrong answers with their messages, the hints and the worked solution, all from the
engine), and gets `grade(question, answers) -> Feedback` from here; the worked part (`Worked`) is the same
fields in both. The expected values live only in the
Solution, which the server computes when it grades; a Question carries none of them.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from app.drills import answers as read
from app.engine.placement import NodeLoad
from app.engine.text import gb, gib

# How a size may be typed, without a number that could be close to an answer.
SIZE_EXAMPLE = "a size: a bare number means GB; GiB, TB or bytes work too"
PartKind = Literal["size", "per_parameter", "count", "yes_no", "choice", "text"]
MAX_TEXT = 2000  # characters of a free-text ("explain why") answer
Value = float | str


class Choice(BaseModel):
    """One option of a choice part; `names` are other ways to type it."""

    value: str = Field(description="What the form sends and the API accepts")
    label: str = Field(description="What the learner reads")
    names: list[str] = Field(default_factory=list, description="Other accepted spellings")


class Part(BaseModel):
    """One thing a question asks, with how its answer is read and how close it must be."""

    id: str = Field(description="Key of this part's answer in `answers`")
    prompt: str = Field(description="What to answer")
    kind: PartKind = Field(description="size, per_parameter, count, yes_no, choice, or text (free text, not graded)")
    unit: str = Field(
        default="", description="Unit of the expected value, e.g. GB; a bare number means this unit"
    )
    tolerance: float = Field(default=0.0, ge=0, description="Relative tolerance: 0.02 accepts within 2 %")
    example: str = Field(default="", description="An example of how to type an answer")
    choices: list[Choice] = Field(default_factory=list, description="Options of a choice or yes/no part")
    weight: float = Field(default=1.0, gt=0, description="The part's share of the score, against the other parts'")

    @property
    def graded(self) -> bool:
        """A free-text part is read by the instructor, never graded."""
        return self.kind != "text"

    @property
    def scale(self) -> float:
        """Base units (bytes for a size) in one unit of the part."""
        return read.SIZE_UNITS[self.unit.lower()] if self.kind == "size" else 1.0

    @property
    def tolerance_text(self) -> str:
        """The tolerance as the learner is told it."""
        if self.kind in ("yes_no", "choice", "text"):
            return ""
        return f"within {self.tolerance * 100:g} %" if self.tolerance else "exact"


class Given(BaseModel):
    """A fact the question states, such as a model's KV heads."""

    label: str
    text: str


class Question(BaseModel):
    """A generated question without its answer: safe to show, to send to tools and to log."""

    model_config = ConfigDict(frozen=True)

    drill: str = Field(description="Drill name")
    seed: int = Field(default=0, description="Seed the question was generated from")
    title: str = Field(description="The question in a few words")
    prompt: str = Field(description="The situation and what is asked")
    givens: list[Given] = Field(default_factory=list, description="Facts the learner may use")
    parameters: dict[str, Any] = Field(description="The generated values the question is built from")
    parts: list[Part] = Field(description="What to answer, each graded on its own")

    def part(self, part_id: str) -> Part:
        return next(p for p in self.parts if p.id == part_id)


class Variant(BaseModel):
    """A classic wrong answer for one part, computed for this question, and what to say about it."""

    part: str
    id: str = Field(description="Which mistake, e.g. weights-only")
    value: Value = Field(description="The wrong value in base units (bytes for a size)")
    message: str


class Row(BaseModel):
    """One line of a memory breakdown."""

    component: str
    label: str
    bytes: int


class Worked(BaseModel):
    """What a learner reads once a question is graded: the worked solution and what goes with it."""

    solution: list[str] = Field(description="The worked solution, one step a line")
    rows: list[Row] = Field(default_factory=list, description="Per-GPU breakdown (will-it-fit)")
    total: int | None = Field(default=None, description="Sum of the rows")
    capacity: int | None = Field(default=None, description="Memory of one GPU, bytes (will-it-fit)")
    fixes: list[str] = Field(default_factory=list, description="Smallest changes that make it fit (will-it-fit)")
    principle: str | None = Field(default=None, description="The principle behind the answer (spot-the-mistake)")
    link: str | None = Field(default=None, description="The step that teaches it")
    link_text: str | None = Field(default=None, description="The words of that link")


class Solution(Worked):
    """Everything the server knows about a question's answer: never sent before a graded attempt."""

    expected: dict[str, Value] = Field(description="Each part's expected value in base units")
    variants: list[Variant] = Field(default_factory=list)
    hints: list[str] = Field(
        default_factory=list, description="Hints, mildest first; none gives a value away"
    )


class PartResult(BaseModel):
    """How one part was graded."""

    id: str
    prompt: str
    kind: PartKind
    unit: str
    typed: str = Field(description="The answer exactly as typed")
    value: Value = Field(description="The answer as read, in the part's unit")
    value_text: str = Field(description="The answer as read, written out")
    expected: Value = Field(description="The expected value in the part's unit")
    expected_text: str
    correct: bool
    mistake: str | None = Field(default=None, description="The classic mistake recognised, if any")
    message: str = Field(default="", description="What to say about this answer")
    graded: bool = Field(default=True, description="False for a free-text part: read by the instructor, not graded")


class Feedback(Worked):
    """The result of one graded submission, with the worked solution: the page and the API both show it."""

    drill: str
    seed: int
    parts: list[PartResult] = Field(description="Per part: correct, expected value, the message")
    score: float = Field(description="Share of parts right, 0 to 1, each part counted at its weight")
    correct: bool = Field(description="Every graded part right")
    mistake: str | None = Field(default=None, description="The first classic mistake recognised, if any")

    @property
    def right_parts(self) -> int:
        return sum(p.correct for p in self.parts if p.graded)

    @property
    def graded_parts(self) -> int:
        """Parts that are graded (a free-text part is not)."""
        return sum(p.graded for p in self.parts)


class AnswerErrors(Exception):
    """Answers that could not be read, a message per part: not graded, not an attempt."""

    def __init__(self, errors: dict[str, str]) -> None:
        self.errors = errors
        super().__init__("; ".join(f"{k}: {v}" for k, v in errors.items()))


class BlockSettings(BaseModel):
    """What a lesson's ```drill NAME``` block may set."""

    model_config = ConfigDict(extra="forbid")

    mastery: int = Field(
        default=3, ge=1, le=10, description="Questions right at the first try, in a row, to master it"
    )


@dataclass(frozen=True)
class Topic:
    """One of the things a drill asks about (a mistake of spot-the-mistake), with the step that teaches it."""

    id: str
    title: str
    link: str


@dataclass(frozen=True)
class Coverage:
    """Which of a drill's topics a learner has met, and which they got right at the first try."""

    topics: tuple[Topic, ...]
    met: frozenset[str]
    right: frozenset[str]
    needed: int

    def spread_met_with(self, topic: str) -> bool:
        """Whether one more right first try, at `topic`, completes the spread mastery needs."""
        return len(self.right | {topic}) >= self.needed


@dataclass(frozen=True)
class Drill:
    """A registered drill."""

    name: str
    title: str
    description: str
    generate: Callable[[random.Random], Question]
    solve: Callable[[Question], Solution]
    settings: type[BlockSettings] = BlockSettings
    node_load: Callable[[Question], NodeLoad] | None = None
    malformed: tuple[dict[str, str], ...] = ()
    # A drill whose mastery needs a spread: what each question is about, every topic (id, title, link) in order,
    # and how many distinct topics must be answered right at the first try (on top of the streak).
    topic: Callable[[Question], str] | None = None
    topics: tuple[Topic, ...] = ()
    spread: int = 0

    def coverage(self, first_tries: Sequence[tuple[int, bool]]) -> Coverage:
        """The topics met and got right at the first try, from each answered question's (seed, first try right)."""
        met: set[str] = set()
        right: set[str] = set()
        if self.topic is not None:
            for seed, correct in first_tries:
                topic = self.topic(self.question(seed))
                met.add(topic)
                if correct:
                    right.add(topic)
        return Coverage(topics=self.topics, met=frozenset(met), right=frozenset(right), needed=self.spread)

    def question(self, seed: int) -> Question:
        """The question this seed generates: the same seed, the same question."""
        return self.generate(random.Random(seed)).model_copy(update={"seed": seed})

    def grade(self, question: Question, answers: Mapping[str, str]) -> Feedback:
        """Grade answers as typed; AnswerErrors when one cannot be read."""
        return grade(question, self.solve(question), answers)


def read_answer(part: Part, text: str) -> Value:
    """One answer in base units (bytes for a size); AnswerError when it cannot be read."""
    if part.kind == "size":
        return read.parse_size(text, part.unit)
    if part.kind == "per_parameter":
        return read.parse_per_parameter(text)
    if part.kind == "count":
        return read.parse_count(text, ("gpu", "gpus", "h100", "h100s", part.unit.lower()))
    if part.kind == "yes_no":
        return read.parse_yes_no(text)
    if part.kind == "text":
        if len(text) > MAX_TEXT:
            raise read.AnswerError(f"Keep it under {MAX_TEXT:,} characters.")
        return text.strip()
    return read.parse_choice(text, [(c.value, [c.label, *c.names]) for c in part.choices])


def read_answers(question: Question, answers: Mapping[str, str]) -> dict[str, Value]:
    """Every part's answer read, or AnswerErrors naming each part that could not be."""
    values: dict[str, Value] = {}
    errors: dict[str, str] = {}
    for part in question.parts:
        text = answers.get(part.id)
        try:
            values[part.id] = read_answer(part, text if isinstance(text, str) else "")
        except read.AnswerError as exc:
            errors[part.id] = str(exc)
    if errors:
        raise AnswerErrors(errors)
    return values


def close(value: Value, target: Value, tolerance: float) -> bool:
    """value within a relative tolerance of target (strings: equal)."""
    if isinstance(value, str) or isinstance(target, str):
        return value == target
    return abs(value - target) <= max(tolerance * abs(target), 1e-9 * max(abs(target), 1.0))


def write(part: Part, value: Value) -> str:
    """A value in base units as the learner reads it."""
    if isinstance(value, str):
        return next((c.label for c in part.choices if c.value == value), value)
    if part.kind == "size":
        return (
            f"{gb(value)} ({gib(value)})" if part.unit == "GB" else f"{value / part.scale:,.4g} {part.unit}"
        )
    if part.kind == "per_parameter":
        return f"{value:g} bytes per parameter"
    noun = part.unit.removesuffix("s") if value == 1 and part.unit.endswith("s") else part.unit
    return f"{value:g} {noun}".strip()


def distinct(question: Question, expected: Mapping[str, Value], variants: list[Variant]) -> list[Variant]:
    """Variants a learner can tell apart: not within tolerance of the answer or of an earlier variant."""
    kept: list[Variant] = []
    for v in variants:
        tol = question.part(v.part).tolerance
        if close(v.value, expected[v.part], tol) or close(expected[v.part], v.value, tol):
            continue
        if isinstance(v.value, float | int) and (v.value <= 0 or not math.isfinite(v.value)):
            continue
        if any(
            k.part == v.part and (close(v.value, k.value, tol) or close(k.value, v.value, tol)) for k in kept
        ):
            continue
        kept.append(v)
    return kept


def grade(question: Question, solution: Solution, answers: Mapping[str, str]) -> Feedback:
    """Grade each part: right within its tolerance, else the first classic mistake it matches."""
    values = read_answers(question, answers)
    results = [_grade_part(p, values[p.id], str(answers.get(p.id, "")), solution) for p in question.parts]
    weights = {p.id: p.weight for p in question.parts if p.graded}
    right = sum(weights[r.id] for r in results if r.graded and r.correct)
    return Feedback(
        drill=question.drill,
        seed=question.seed,
        parts=results,
        score=right / sum(weights.values()) if weights else 1.0,
        correct=all(r.correct for r in results if r.graded),
        mistake=next((r.mistake for r in results if r.mistake), None),
        **{name: getattr(solution, name) for name in Worked.model_fields},
    )


def _grade_part(part: Part, value: Value, typed: str, solution: Solution) -> PartResult:
    if not part.graded:
        return PartResult(id=part.id, prompt=part.prompt, kind=part.kind, unit="", typed=typed, value=value,
                          value_text=str(value), expected="", expected_text="", correct=True, graded=False,
                          message="Not graded: your instructor reads it." if value else "Left empty (not graded).")
    expected = solution.expected[part.id]
    correct = close(value, expected, part.tolerance)
    mistake, message = None, ""
    if correct:
        message = "Right." if not part.tolerance else f"Right ({part.tolerance_text})."
    else:
        found = next(
            (v for v in solution.variants if v.part == part.id and close(value, v.value, part.tolerance)),
            None,
        )
        if found is not None:
            mistake, message = found.id, found.message
        elif part.kind == "count" and isinstance(value, float) and not value.is_integer():
            mistake, message = (
                "fraction",
                "GPUs come whole: a share of a GPU cannot hold its share of memory, so round up.",
            )
        else:
            message = "Not this one." + (
                f" The answer must be {part.tolerance_text} of the expected value." if part.tolerance else ""
            )
    return PartResult(
        id=part.id,
        prompt=part.prompt,
        kind=part.kind,
        unit=part.unit,
        typed=typed,
        value=value / part.scale if not isinstance(value, str) else value,
        value_text=write(part, value),
        expected=expected / part.scale if not isinstance(expected, str) else expected,
        expected_text=write(part, expected),
        correct=correct,
        mistake=mistake,
        message=message,
    )


def typed_form(part: Part, value: Value) -> str:
    """How a learner would type `value` (base units) into this part: used by the self-check and tests."""
    if isinstance(value, str):
        return value
    if part.kind == "size":
        return f"{value / part.scale!r} {part.unit}"
    return repr(float(value))
