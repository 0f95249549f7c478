"""One learner's steps and answers in a class: for the instructor, for that learner, for the exports."""

from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel, Field
from sqlalchemy import select

from app.classroom.class_models import Classroom, Member, StepTime
from app.classroom.db import Database
from app.classroom.figures import ClassInfo, class_info, outline_of
from app.classroom.models import DrillAttempt, StepProgress, utcnow
from app.classroom.progress import step_state
from app.classroom.seat import aware, horizon


class StepLine(BaseModel):
    number: int
    title: str
    state: str
    seconds: float
    done_at: datetime | None


class AttemptLine(BaseModel):
    at: datetime
    step: int
    drill: str
    question: int
    seed: int = Field(default=0, description="Seed of the question, to show its text")
    answers: dict[str, str] = Field(description="Each part as typed")
    correct_parts: dict[str, bool]
    correct: bool
    score: float
    mistake: str | None


class LearnerReport(BaseModel):
    """One member's progress and attempts in a class: for the instructor, or for that learner alone."""

    info: ClassInfo
    member_id: int
    name: str
    joined_at: datetime
    step: int | None
    steps: list[StepLine]
    attempts: list[AttemptLine]
    done: int


async def learner_report(db: Database, klass: Classroom, member: Member) -> LearnerReport:
    """A member's steps (state, time on task) and every attempt as typed, up to the class's end."""
    outline = outline_of(klass)
    end = horizon(klass)
    async with db.session() as s:
        progress = {r.step: r for r in (await s.execute(select(StepProgress).where(
            StepProgress.learner_id == member.learner_id, StepProgress.lesson == klass.lesson))).scalars()}
        times = await s.execute(select(StepTime.step, StepTime.seconds).where(StepTime.member_id == member.id))
        seconds = {step: secs for step, secs in times}
        q = select(DrillAttempt).where(DrillAttempt.learner_id == member.learner_id,
                                       DrillAttempt.lesson == klass.lesson).order_by(DrillAttempt.id)
        if end is not None:
            q = q.where(DrillAttempt.created_at <= end)
        attempts = list((await s.execute(q)).scalars())
    steps = []
    for s_ in outline.steps:
        row = progress.get(s_.number)
        done_at = aware(row.completed_at) if row else None
        if done_at is not None and end is not None and done_at > end:
            done_at = None
        state = step_state(done=done_at is not None, seen=row is not None, drill=bool(s_.drills),
                           current=s_.number == member.step)
        steps.append(StepLine(number=s_.number, title=s_.title, state=state, seconds=seconds.get(s_.number, 0.0),
                              done_at=done_at))
    lines = [AttemptLine(at=aware(a.created_at) or utcnow(), step=a.step, drill=a.drill, question=a.question,
                         seed=a.seed, answers={k: str(v) for k, v in (a.answers or {}).items()},
                         correct_parts={k: bool(v) for k, v in (a.correct_parts or {}).items()},
                         correct=a.correct, score=a.score, mistake=a.mistake) for a in attempts]
    return LearnerReport(info=class_info(klass), member_id=member.id, name=member.name,
                         joined_at=aware(member.joined_at) or utcnow(), step=member.step, steps=steps,
                         attempts=lines, done=sum(1 for s_ in steps if s_.done_at))


async def member_by_id(db: Database, klass: Classroom, member_id: int) -> Member | None:
    """A member of this class (never of another class)."""
    async with db.session() as s:
        found: Member | None = (await s.execute(select(Member).where(
            Member.id == member_id, Member.class_id == klass.id))).scalar_one_or_none()
        return found
