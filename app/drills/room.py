"""A drill's answers summed up for a room: what it asks, right and wrong per part, the commonest mistakes.

Every learner gets their own numbers, so typed answers to different questions mean nothing side by side
("bytes_per_parameter: 4; total: 3 GiB"); what a room can read is which part people got wrong and which
classic mistake their answers show."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from app.drills.base import AnswerErrors, Drill

TOP_MISTAKES = 4
_FIGURE_FIRST = re.compile(r"^[^:]*\d[^:]*:\s+")  # "128.0 GB is 8B × 16 bytes: that forgets …" → "that forgets …"


@dataclass(frozen=True)
class Answer:
    """One stored answer: the seed of its question and the parts as typed."""

    seed: int
    answers: Mapping[str, str]


@dataclass(frozen=True)
class PartTally:
    """How many answers got one part right and wrong."""

    id: str
    prompt: str
    right: int
    wrong: int

    @property
    def answered(self) -> int:
        return self.right + self.wrong

    @property
    def right_width(self) -> float:
        return 100 * self.right / self.answered if self.answered else 0.0


@dataclass(frozen=True)
class MistakeTally:
    """A classic mistake, in words without any one question's numbers, and how many answers show it."""

    part: str
    name: str
    count: int
    width: float


@dataclass(frozen=True)
class RoomSummary:
    """What a projector shows of one drill's answers."""

    title: str
    description: str
    example: str = ""  # the latest learner's question in full, to read out
    parts: list[PartTally] = field(default_factory=list)
    mistakes: list[MistakeTally] = field(default_factory=list)
    other_wrong: int = 0  # wrong parts that match no classic mistake
    answers: int = 0


def mistake_name(message: str) -> str:
    """A mistake's message without the figures of one question: the part every learner's version shares."""
    text = _FIGURE_FIRST.sub("", message, count=1)
    return text[:1].upper() + text[1:]


Graded = tuple[tuple[str, str, bool, str | None], ...]  # per part: id, prompt, right, mistake in words
_graded: dict[tuple[str, int, tuple[tuple[str, str], ...]], Graded] = {}
MAX_GRADED = 50_000  # answers kept graded: a projector polling every 2 s grades each answer once, not each poll


def grade_for_room(drill: Drill, answer: Answer) -> Graded:
    """One answer graded per part (cached: the same drill, seed and answers always grade the same)."""
    key = (drill.name, answer.seed, tuple(sorted(answer.answers.items())))
    if key not in _graded:
        if len(_graded) >= MAX_GRADED:
            _graded.clear()
        try:
            parts = drill.grade(drill.question(answer.seed), answer.answers).parts
        except AnswerErrors:
            parts = []
        _graded[key] = tuple((r.id, r.prompt, r.correct, mistake_name(r.message) if r.mistake else None)
                             for r in parts if r.graded)  # a free-text part is for the instructor to read
    return _graded[key]


def summarise(drill: Drill, answers: Sequence[Answer]) -> RoomSummary:
    """Right and wrong per part and the commonest mistakes over answers to (possibly) different questions."""
    right: Counter[str] = Counter()
    wrong: Counter[str] = Counter()
    mistakes: Counter[tuple[str, str]] = Counter()
    prompts: dict[str, str] = {}
    for a in answers:
        for part, prompt, correct, mistake in grade_for_room(drill, a):
            prompts.setdefault(part, prompt)
            (right if correct else wrong)[part] += 1
            if mistake:
                mistakes[(part, mistake)] += 1
    top = mistakes.most_common(TOP_MISTAKES)
    example = drill.question(answers[0].seed).prompt if answers else ""  # answers come newest first
    return RoomSummary(
        title=drill.title, description=drill.description, example=example, answers=len(answers),
        parts=[PartTally(id=p, prompt=text, right=right[p], wrong=wrong[p]) for p, text in prompts.items()],
        mistakes=[MistakeTally(part=prompts[p], name=n, count=c, width=100 * c / len(answers)) for (p, n), c in top],
        other_wrong=sum(wrong.values()) - sum(c for _, c in top),
    )
