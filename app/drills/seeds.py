"""Seeds of a learner's questions: the same learner, drill and question number always give the same seed,
and a learner never meets the same question twice in a row."""

from __future__ import annotations

import hashlib
from typing import Protocol

from app.drills.base import Question

MAX_SEED = 2**63 - 1  # fits a signed 64-bit column
REDRAWS = 24  # candidates an odd-numbered question tries before it gives up on differing from its neighbours


class Asks(Protocol):
    """Anything that turns a seed into a question (a drill)."""

    @property
    def name(self) -> str: ...

    def question(self, seed: int) -> Question: ...


def learner_seed(learner_id: str, drill: str, number: int, redraw: int = 0) -> int:
    """A seed from sha256 of the learner, the drill and the question number (0, 1, ...); `redraw` k > 0 gives
    the k-th alternative for the same number."""
    key = f"{learner_id}\x1f{drill}\x1f{number}" + (f"\x1f{redraw}" if redraw else "")
    digest = hashlib.sha256(key.encode()).digest()
    return int.from_bytes(digest[:8], "big") & MAX_SEED


def _same(a: Question, b: Question) -> bool:
    return a.model_dump(exclude={"seed"}) == b.model_dump(exclude={"seed"})


def learner_question(drill: Asks, learner_id: str, number: int) -> Question:
    """The learner's question number `number` in a drill, never the same as the one before or after it.

    Even numbers take their first seed as drawn; an odd number redraws until it differs from both even
    neighbours. So no number depends on the ones before it, and two in a row never repeat."""
    first = drill.question(learner_seed(learner_id, drill.name, number))
    if number % 2 == 0:
        return first
    neighbours = [drill.question(learner_seed(learner_id, drill.name, n)) for n in (number - 1, number + 1)]
    for redraw in range(REDRAWS + 1):
        candidate = first if redraw == 0 else drill.question(learner_seed(learner_id, drill.name, number, redraw))
        if not any(_same(candidate, n) for n in neighbours):
            return candidate
    return first
