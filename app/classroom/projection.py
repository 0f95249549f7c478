"""What the projector shows the room: counts the database makes, no names, no per-learner rows."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from pydantic import BaseModel, Field
from sqlalchemy import ColumnElement, Select, case, func, or_, select, union

from app.classroom.class_models import Classroom, Member, StepTime
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
    active: int = Field(default=0, description="Learners active in the last idle minutes (during a bring)")
    reached: int = Field(default=0, description="Of them, those on the bring's step or past it, or who reached it")

    @property
    def everyone_there(self) -> bool:
        """Every active learner reached the step of the bring: the projector stops asking."""
        return self.active > 0 and self.reached >= self.active


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

    members: dict[int | None, int]  # per step, members whose step it is
    here: dict[int, int]  # per step, members whose step it is and who have not finished the lesson
    done: dict[int, int]
    tallies: dict[str, DrillTally]
    wrong: list[Any]
    active: int = 0
    reached: int = 0

    @property
    def joined(self) -> int:
        return sum(self.members.values())


def _finished(klass: Classroom, done_filter: list[ColumnElement[bool]], steps: int) -> Select[int]:
    """The ids of the members through the lesson: each of its `steps` steps done or passed with the class (as
    dashboard.Learner.finished counts them)."""
    done = (select(Member.id.label("member"), StepProgress.step.label("step"))
            .join(Member, Member.learner_id == StepProgress.learner_id).where(*done_filter))
    passed = (select(StepTime.member_id.label("member"), StepTime.step.label("step"))
              .join(Member, Member.id == StepTime.member_id).where(Member.class_id == klass.id, StepTime.passed))
    through = union(done, passed).subquery()
    return (select(through.c.member).where(through.c.step.between(1, steps))
            .group_by(through.c.member).having(func.count() == steps))


def _bring(klass: Classroom, now: datetime) -> Select[int, int]:
    """During a bring: the active learners (as the late joiners' landing counts them) and how many are there: on
    the bring's step or past it, or back before it after reaching it (their banner no longer asks)."""
    there = or_(Member.moved_version >= klass.bring_version, Member.step >= (klass.pace_step or 1))
    reached = func.sum(case((there, 1), else_=0))
    return select(func.count(), reached).where(
        Member.class_id == klass.id, Member.last_active >= now - timedelta(minutes=klass.idle_minutes))


async def count_class(db: Database, klass: Classroom, steps: int, now: datetime) -> ClassCounts:
    """Five GROUP BY queries with the same filters as the dashboard's read (ClassFilter), so equal figures; a
    sixth during a bring."""
    f = ClassFilter.of(klass)
    done_filter = [f.in_class, StepProgress.lesson == klass.lesson, StepProgress.completed_at.is_not(None)]
    if f.end is not None:
        done_filter += [StepProgress.completed_at <= f.end, StepProgress.first_seen <= f.end]
    through = case((Member.id.in_(_finished(klass, done_filter, steps)), 0), else_=1)
    right = func.sum(case((DrillAttempt.correct, 1), else_=0))
    answers = (select(DrillAttempt.step, DrillAttempt.drill, func.count(), right,
                      func.count(DrillAttempt.learner_id.distinct()))
               .join(Member, f.by_member).where(*f.answered).group_by(DrillAttempt.step, DrillAttempt.drill))
    async with db.session() as session:
        s = await session.connection()
        rows = (await s.execute(select(Member.step, func.count(), func.sum(through))
                                .where(f.in_class).group_by(Member.step))).all()
        active, reached = (await s.execute(_bring(klass, now))).one() if klass.pace_mode == "bring" else (0, 0)
        done = {step: n for step, n in await s.execute(
            select(StepProgress.step, func.count()).join(Member, Member.learner_id == StepProgress.learner_id)
            .where(*done_filter).group_by(StepProgress.step))}
        tallies = {f"{step}:{drill}": DrillTally(attempts=n, correct=int(right or 0), learners=who)
                   for step, drill, n, right, who in await s.execute(answers)}
        wrong = list((await s.execute(f.wrong_answers())).all())
    return ClassCounts(members={step: n for step, n, _ in rows},
                       here={step: int(n or 0) for step, _, n in rows if step is not None},
                       done=done, tallies=tallies, wrong=wrong, active=active, reached=int(reached or 0))


async def build_projection(db: Database, klass: Classroom, now: datetime | None = None) -> Projection:
    """The projector's figures counted by the database, equal to the dashboard's: the same filters as
    read_class, the same arithmetic."""
    now = now or utcnow()
    info, outline = class_info(klass, now), outline_of(klass)
    total = len(outline.steps)
    c = await count_class(db, klass, total, now)
    counts = RoomCounts(joined=c.joined, finished=c.done.get(total, 0) if total else 0, active=c.active,
                        reached=c.reached)
    return Projection.model_construct(
        info=info, counts=counts, steps=step_columns(outline, c.done, c.here, c.joined),
        drills=drill_stats(outline, c.tallies, wrong_counts(c.wrong, outline.labels), info.revealed),
        generated_at=now)
