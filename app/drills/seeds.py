"""Seeds of a learner's questions: the same learner, drill and question number always give the same seed,
a learner never meets the same question twice in a row, and neighbours in a class get different questions.

Most drills have so many questions that seeds drawn per learner rarely meet. A drill with a small choice space
(a declared drill with 3 models × 3 batch sizes × 3 contexts has 27) would give neighbours the same question
often, so in a class its questions are dealt instead: the drill's distinct questions, shuffled per class, go round
the seats (join order), so learners who joined one after the other never share a question while the space has
two or more."""

from __future__ import annotations

import hashlib
import random
from dataclasses import dataclass
from typing import Protocol

from app.drills.base import Question

MAX_SEED = 2**63 - 1  # fits a signed 64-bit column
REDRAWS = 24  # candidates an odd-numbered question tries before it gives up on differing from its neighbours
SMALL_SPACE = 128  # a drill with at most this many distinct questions is dealt round a class's seats
SPACE_MISSES = 64  # draws without a new question (at least; twice the questions found) before the space is known
KEPT_SPACES = 64  # drills whose space a process remembers


class Asks(Protocol):
    """Anything that turns a seed into a question (a drill)."""

    @property
    def name(self) -> str: ...

    def question(self, seed: int) -> Question: ...


@dataclass(frozen=True)
class Room:
    """Where a learner sits in a class: its code and their seat (join order, from 0)."""

    code: str
    seat: int


def learner_seed(learner_id: str, drill: str, number: int, redraw: int = 0) -> int:
    """A seed from sha256 of the learner, the drill and the question number (0, 1, ...); `redraw` k > 0 gives
    the k-th alternative for the same number."""
    key = f"{learner_id}\x1f{drill}\x1f{number}" + (f"\x1f{redraw}" if redraw else "")
    return _seed(key)


def _seed(key: str) -> int:
    digest = hashlib.sha256(key.encode()).digest()
    return int.from_bytes(digest[:8], "big") & MAX_SEED


def _same(a: Question, b: Question) -> bool:
    return _face(a) == _face(b)


def _face(q: Question) -> str:
    """What a learner sees of a question (everything but its seed)."""
    return q.model_dump_json(exclude={"seed"})


def learner_question(drill: Asks, learner_id: str, number: int, room: Room | None = None,
                     seen: int | None = None) -> Question:
    """The learner's question number `number` in a drill, never the same as the one before or after it.

    `seen`: the seed of the question they already answered under this number, which stays theirs (joining a class
    mid-question does not change it). In a class (`room`), a drill with a small choice space is dealt round the
    seats (see the module's docstring). Otherwise even numbers take their first seed as drawn and an odd number
    redraws until it differs from both even neighbours, so no number depends on the ones before it."""
    if seen is not None:
        return drill.question(seen)
    space = question_space(drill) if room is not None else None
    if room is not None and space:
        return drill.question(dealt(space, drill.name, room, number))
    first = drill.question(learner_seed(learner_id, drill.name, number))
    if number % 2 == 0:
        return first
    neighbours = [drill.question(learner_seed(learner_id, drill.name, n)) for n in (number - 1, number + 1)]
    for redraw in range(REDRAWS + 1):
        candidate = first if redraw == 0 else drill.question(learner_seed(learner_id, drill.name, number, redraw))
        if not any(_same(candidate, n) for n in neighbours):
            return candidate
    return first


def dealt(space: tuple[int, ...], drill: str, room: Room, number: int) -> int:
    """The seed dealt to a seat for question `number`: the space in the class's own order, seat k taking place
    k + number × stride. Neighbouring seats differ by one place, a seat's next question by `stride`, and a
    neighbour one question behind by stride ± 1: all different places once the space has 4 or more questions."""
    order = list(space)
    random.Random(_seed(f"{room.code}\x1f{drill}")).shuffle(order)
    size = len(order)
    stride = max(1, size // 2)
    return order[(room.seat + number * stride) % size]


_spaces: dict[tuple[str, int], tuple[object, tuple[int, ...] | None]] = {}


def question_space(drill: Asks) -> tuple[int, ...] | None:
    """One seed for each distinct question of a drill whose choice space is small (at most SMALL_SPACE questions),
    in a fixed order; None for a larger one. Found by drawing fixed seeds until SPACE_MISSES (or twice as many as
    found) bring nothing new, so every process finds the same; remembered per drill (a drill rebuilt from a changed
    lesson is another object, and is looked at again)."""
    key = (drill.name, id(drill))
    if key in _spaces:
        return _spaces[key][1]
    faces: dict[str, int] = {}
    misses, draw = 0, 0
    while misses < max(SPACE_MISSES, 2 * len(faces)) and len(faces) <= SMALL_SPACE:
        seed = _seed(f"space\x1f{drill.name}\x1f{draw}")
        draw += 1
        face = _face(drill.question(seed))
        if face in faces:
            misses += 1
        else:
            faces[face], misses = seed, 0
    space = tuple(faces.values()) if len(faces) <= SMALL_SPACE else None
    if len(_spaces) >= KEPT_SPACES:
        _spaces.clear()
    _spaces[key] = (drill, space)  # the drill is kept with its entry, so its id is not reused meanwhile
    return space


def space_size(drill: Asks) -> int | None:
    """How many distinct questions a drill has, when at most SMALL_SPACE; None for more (for an author's check)."""
    space = question_space(drill)
    return len(space) if space is not None else None
