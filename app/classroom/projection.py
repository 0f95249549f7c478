"""What the projector shows the room: counts the database makes, no names, no per-learner rows."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from pydantic import BaseModel
from sqlalchemy import case, func, select

from app.classroom.class_models import Classroom, Member
from app.classroom.db import Database
from app.classroom.figures import (
    ClassFilter,
    ClassInfo,
    DrillStats,
    DrillTally,
    StepColumn,
    class_info,
    drill_stats,
    outline_of,
    step_columns,
    wrong_counts,
)
from app.classroom.models import DrillAttempt, StepProgress, utcnow


class RoomCounts(BaseModel):
    joined: int = 0
    finished: int = 0


class Projection(BaseModel):
    """What the projector shows the room: no names, no per-learner times, so no per-learner rows."""

    info: ClassInfo
    counts: RoomCounts
    steps: list[StepColumn]
    drills: list[DrillStats]
    generated_at: datetime


@dataclass
class ClassCounts:
    """A class counted by the database: members per step, done rows per step, answers per drill, wrong answers
    as typed. O(steps + drills) rows whatever the class size; the projector and the dashboard's poll share it."""

    here: dict[int | None, int]
    done: dict[int, int]
    tallies: dict[str, DrillTally]
    wrong: list[Any]

    @property
    def joined(self) -> int:
        return sum(self.here.values())


async def count_class(db: Database, klass: Classroom) -> ClassCounts:
    """Four GROUP BY queries with the same filters as the dashboard's read (ClassFilter), so equal figures."""
    f = ClassFilter.of(klass)
    done_filter = [f.in_class, StepProgress.lesson == klass.lesson, StepProgress.completed_at.is_not(None)]
    if f.end is not None:
        done_filter += [StepProgress.completed_at <= f.end, StepProgress.first_seen <= f.end]
    right = func.sum(case((DrillAttempt.correct, 1), else_=0))
    answers = (select(DrillAttempt.step, DrillAttempt.drill, func.count(), right,
                      func.count(DrillAttempt.learner_id.distinct()))
               .join(Member, f.by_member).where(*f.answered).group_by(DrillAttempt.step, DrillAttempt.drill))
    async with db.session() as session:
        s = await session.connection()
        here = {step: n for step, n in await s.execute(
            select(Member.step, func.count()).where(f.in_class).group_by(Member.step))}
        done = {step: n for step, n in await s.execute(
            select(StepProgress.step, func.count()).join(Member, Member.learner_id == StepProgress.learner_id)
            .where(*done_filter).group_by(StepProgress.step))}
        tallies = {f"{step}:{drill}": DrillTally(attempts=n, correct=int(right or 0), learners=who)
                   for step, drill, n, right, who in await s.execute(answers)}
        wrong = list((await s.execute(f.wrong_answers())).all())
    return ClassCounts(here=here, done=done, tallies=tallies, wrong=wrong)


async def build_projection(db: Database, klass: Classroom, now: datetime | None = None) -> Projection:
    """The projector's figures counted by the database, equal to the dashboard's: the same filters as
    read_class, the same arithmetic."""
    now = now or utcnow()
    info, outline = class_info(klass, now), outline_of(klass)
    c = await count_class(db, klass)
    total = len(outline.steps)
    here = {k: v for k, v in c.here.items() if k is not None}
    return Projection.model_construct(
        info=info, counts=RoomCounts(joined=c.joined, finished=c.done.get(total, 0) if total else 0),
        steps=step_columns(outline, c.done, here, c.joined),
        drills=drill_stats(outline, c.tallies, wrong_counts(c.wrong, outline.labels), info.revealed),
        generated_at=now)
