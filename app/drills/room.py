"""A drill's answers summed up for a room: what it asks, right and wrong per part, the commonest mistakes.

Every learner gets their own numbers, so typed answers to different questions mean nothing side by side
("bytes_per_parameter: 4; total: 3 GiB"); what a room can read is which part people got wrong and which
classic mistake their answers show."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from app.drills.base import AnswerErrors, Drill, write

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
class Expected:
    """One part of the question on screen and its right answer, as the drill's feedback writes it."""

    prompt: str
    answer: str


@dataclass(frozen=True)
class RoomSummary:
    """What a projector shows of one drill's answers."""

    title: str
    description: str
    example: str = ""  # the question on screen in full, to read out: the latest learner's, or the one pinned
    example_seed: int | None = None  # its seed: "show the answer" pins this question
    parts: list[PartTally] = field(default_factory=list)
    mistakes: list[MistakeTally] = field(default_factory=list)
    other_wrong: int = 0  # wrong parts that match no classic mistake
    answers: int = 0
    expected: list[Expected] = field(default_factory=list)  # the right answer of the question on screen, once shown
    solution: list[str] = field(default_factory=list)  # the engine's worked solution of it, once shown

    @property
    def answer_shown(self) -> bool:
        return bool(self.expected)

    def top(self, n: int) -> tuple[list[MistakeTally], int]:
        """The n commonest mistakes, and how many wrong parts the rest of the answers have (the mistakes left out
        included), for a screen with room for n."""
        shown = self.mistakes[:n]
        return shown, self.other_wrong + sum(m.count for m in self.mistakes[n:])


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


def summarise(drill: Drill, answers: Sequence[Answer], pinned: int | None = None, description: str | None = None
              ) -> RoomSummary:
    """Right and wrong per part and the commonest mistakes over answers to (possibly) different questions; with
    `pinned` (a question's seed), that question stays on screen with its right answer and worked solution.
    `description`: what the drill asks, when the caller knows better than the drill (None: the drill's own)."""
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
    seed = pinned if pinned is not None else (answers[0].seed if answers else None)  # answers come newest first
    question = drill.question(seed) if seed is not None else None
    expected, solution = [], []
    if question is not None and pinned is not None:
        worked = drill.solve(question)
        expected = [Expected(prompt=p.prompt, answer=write(p, worked.expected[p.id])) for p in question.parts
                    if p.graded and p.id in worked.expected]  # a free-text part has no right answer to show
        solution = list(worked.solution)
    return RoomSummary(
        title=drill.title, description=drill.description if description is None else description,
        example=question.prompt if question else "", example_seed=seed, answers=len(answers),
        expected=expected, solution=solution,
        parts=[PartTally(id=p, prompt=text, right=right[p], wrong=wrong[p]) for p, text in prompts.items()],
        mistakes=[MistakeTally(part=prompts[p], name=n, count=c, width=100 * c / len(answers)) for (p, n), c in top],
        other_wrong=sum(wrong.values()) - sum(c for _, c in top),
    )
