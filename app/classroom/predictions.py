"""Predict, then observe: a learner's guesses, kept with their progress; the first guess stays."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import select

from app.classroom.db import Database
from app.classroom.models import Prediction, utcnow
from app.classroom.progress import _insert, touch_learner


@dataclass(frozen=True)
class StoredGuess:
    """A committed guess and the answer the engine gave when it was committed."""

    key: str
    guess: str
    guess_value: float | None
    actual: str
    created_at: datetime


def _stored(row: Prediction) -> StoredGuess:
    return StoredGuess(
        key=row.key,
        guess=row.guess,
        guess_value=row.guess_value,
        actual=row.actual,
        created_at=row.created_at,
    )


async def for_step(db: Database, learner_id: str, lesson: str, step: int) -> dict[str, StoredGuess]:
    """Every guess the learner committed on one step, by question key."""
    async with db.session() as s:
        rows = await s.execute(
            select(Prediction).where(
                Prediction.learner_id == learner_id, Prediction.lesson == lesson, Prediction.step == step
            )
        )
        return {row.key: _stored(row) for row in rows.scalars()}


async def commit(
    db: Database,
    learner_id: str,
    lesson: str,
    step: int,
    key: str,
    guess: str,
    guess_value: float | None,
    actual: str,
) -> StoredGuess:
    """Store a guess; a question already answered keeps its first guess: a prediction is not taken back."""
    async with db.session() as s:
        await touch_learner(s, learner_id)
        stmt = _insert(s, Prediction).values(
            learner_id=learner_id,
            lesson=lesson,
            step=step,
            key=key,
            guess=guess[:200],
            guess_value=guess_value,
            actual=actual[:200],
            created_at=utcnow(),
        )
        await s.execute(stmt.on_conflict_do_nothing(index_elements=["learner_id", "lesson", "step", "key"]))
    stored = (await for_step(db, learner_id, lesson, step)).get(key)
    assert stored is not None
    return stored
