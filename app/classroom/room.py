"""The answers behind a projector's revealed drills: each answer's question seed and its parts as typed."""

from __future__ import annotations

from collections import defaultdict

from sqlalchemy import select

from app.classroom.class_models import Classroom, Member
from app.classroom.db import Database
from app.classroom.figures import ClassFilter
from app.classroom.models import DrillAttempt

MAX_ANSWERS = 2_000  # the latest answers a revealed drill sums up: enough for any room, bounded work per poll


async def revealed_answers(db: Database, klass: Classroom) -> dict[str, list[tuple[int, dict[str, str]]]]:
    """For each revealed drill ('step:drill'), (seed, answers as typed) of its latest answers in this class."""
    return await answers_of(db, klass, list(klass.revealed or []))


async def answers_of(db: Database, klass: Classroom, keys: list[str], limit: int = MAX_ANSWERS
                     ) -> dict[str, list[tuple[int, dict[str, str]]]]:
    """For each drill key ('step:drill'), (seed, answers as typed) of its latest `limit` answers in this class,
    newest first."""
    out: dict[str, list[tuple[int, dict[str, str]]]] = defaultdict(list)
    f = ClassFilter.of(klass)
    async with db.session() as s:
        for key in keys:
            step, _, drill = key.partition(":")
            if not step.isdigit():
                continue
            rows = await s.execute(
                select(DrillAttempt.seed, DrillAttempt.answers).join(Member, f.by_member)
                .where(*f.answered, DrillAttempt.step == int(step), DrillAttempt.drill == drill)
                .order_by(DrillAttempt.id.desc()).limit(limit))
            out[key] = [(seed, {k: str(v) for k, v in (answers or {}).items()}) for seed, answers in rows]
    return dict(out)
