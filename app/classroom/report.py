"""One learner's steps and answers in a class: for the instructor, for that learner, for the exports."""

from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel, Field
from sqlalchemy import select

from app.classroom.attempts import DrillState
from app.classroom.class_models import Classroom, Member, StepTime
from app.classroom.db import Database
from app.classroom.figures import ClassInfo, class_info, outline_of
from app.classroom.models import DrillAttempt, StepProgress, utcnow
from app.classroom.outline import Outline, StepOutline
from app.classroom.progress import step_state
from app.classroom.seat import aware, horizon


class StepLine(BaseModel):
    number: int
    title: str
    state: str = Field(description="done, mastered, passed, skipped, current, seen or todo (progress.step_state)")
    seconds: float = Field(description="Active time on the step in the class")
    done_at: datetime | None
    here: bool = Field(default=False, description="The learner's current step")


class AttemptLine(BaseModel):
    at: datetime
    step: int
    drill: str
    question: int
    seed: int = Field(default=0, description="Seed of the question, to show its text")
    answers: dict[str, str] = Field(description="Each part as typed")
    parsed: dict[str, float | str | None] = Field(default_factory=dict, description="Each part as read, in its unit")
    correct_parts: dict[str, bool]
    correct: bool
    score: float
    mistake: str | None


class DrillLine(BaseModel):
    """One drill of the lesson for one learner: what a gradebook needs."""

    step: int
    drill: str
    attempts: int
    correct: int
    questions: int = Field(description="Questions answered")
    first_try: int = Field(description="Questions right at the first try")
    best_score: float | None = Field(description="Best share of parts right, 0 to 1; None before any answer")
    mastered: bool

    @property
    def first_try_share(self) -> float | None:
        return self.first_try / self.questions if self.questions else None


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
    passed: int = Field(default=0, description="Steps the class moved them past, not done: not held against them")
    drills: list[DrillLine] = Field(default_factory=list)
    finished: bool = Field(default=False,
                           description="Every step is done (or passed with the class): the lesson is finished")

    @property
    def counted_steps(self) -> int:
        """The steps they are measured against: all but those the class moved them past."""
        return len(self.steps) - self.passed

    @property
    def seconds(self) -> float:
        return sum(s.seconds for s in self.steps)

    @property
    def mastered(self) -> int:
        return sum(1 for d in self.drills if d.mastered)

    def question_number(self, a: AttemptLine) -> int:
        """A question's number as the learner's page said it, from 1 (questions moved in by a merge, numbered
        before the learner's own, count on from the first)."""
        low = min((x.question for x in self.attempts if x.drill == a.drill), default=0)
        return a.question - min(low, 0) + 1


async def learner_report(db: Database, klass: Classroom, member: Member) -> LearnerReport:
    """A member's steps (state, time on task) and every attempt as typed, up to the class's end."""
    outline = outline_of(klass)
    end = horizon(klass)
    drill_names = sorted({d for s_ in outline.steps for d in s_.drills})
    async with db.session() as s:
        progress = {r.step: r for r in (await s.execute(select(StepProgress).where(
            StepProgress.learner_id == member.learner_id, StepProgress.lesson == klass.lesson))).scalars()}
        times = await s.execute(select(StepTime.step, StepTime.seconds, StepTime.passed)
                                .where(StepTime.member_id == member.id))
        seconds, passed = {}, set()
        for step, secs, was_passed in times:
            seconds[step] = secs
            if was_passed:
                passed.add(step)
        q = select(DrillAttempt).where(DrillAttempt.learner_id == member.learner_id,
                                       DrillAttempt.lesson == klass.lesson).order_by(DrillAttempt.id)
        if end is not None:
            q = q.where(DrillAttempt.created_at <= end)
        attempts = list((await s.execute(q)).scalars())
        mastered = {d: aware(at) for d, at in await s.execute(select(DrillState.drill, DrillState.mastered_at).where(
            DrillState.learner_id == member.learner_id, DrillState.drill.in_(drill_names),
            DrillState.mastered_at.is_not(None)))}
    steps = [_step_line(s_, progress.get(s_.number), seconds, passed, member.step, end) for s_ in outline.steps]
    lines = [AttemptLine(at=aware(a.created_at) or utcnow(), step=a.step, drill=a.drill, question=a.question,
                         seed=a.seed, answers={k: str(v) for k, v in (a.answers or {}).items()},
                         parsed=dict(a.parsed or {}),
                         correct_parts={k: bool(v) for k, v in (a.correct_parts or {}).items()},
                         correct=a.correct, score=a.score, mistake=a.mistake) for a in attempts]
    kept = {d: at for d, at in mastered.items() if at is not None and (end is None or at <= end)}
    total = len(steps)
    return LearnerReport(info=class_info(klass), member_id=member.id, name=member.name,
                         joined_at=aware(member.joined_at) or utcnow(), step=member.step, steps=steps,
                         attempts=lines, done=sum(1 for s_ in steps if s_.done_at),
                         passed=sum(1 for s_ in steps if s_.state == "passed"),
                         drills=_drill_lines(outline, lines, kept),
                         finished=bool(total) and all(s_.done_at or s_.state == "passed" for s_ in steps))


def _step_line(s_: StepOutline, row: StepProgress | None, seconds: dict[int, float], passed: set[int],
               here: int | None, end: datetime | None) -> StepLine:
    done_at = aware(row.completed_at) if row else None
    if done_at is not None and end is not None and done_at > end:
        done_at = None
    # a finished learner's last step reads done, not "here now"
    current = s_.number == here and done_at is None
    state = step_state(done=done_at is not None, seen=row is not None, drill=bool(s_.drills), current=current,
                       passed=s_.number in passed)
    return StepLine(number=s_.number, title=s_.title, state=state, seconds=seconds.get(s_.number, 0.0),
                    done_at=done_at, here=s_.number == here)


def _drill_lines(outline: Outline, attempts: list[AttemptLine], mastered: dict[str, datetime]) -> list[DrillLine]:
    """Per drill of the lesson (and any other the learner answered in it): attempts, first tries, best, mastery."""
    keys = sorted({(s_.number, d) for s_ in outline.steps for d in s_.drills} | {(a.step, a.drill) for a in attempts})
    lines = []
    for step, drill in keys:
        mine = [a for a in attempts if a.step == step and a.drill == drill]
        first: dict[int, AttemptLine] = {}
        for a in mine:
            first.setdefault(a.question, a)
        lines.append(DrillLine(step=step, drill=drill, attempts=len(mine), correct=sum(a.correct for a in mine),
                               questions=len(first), first_try=sum(a.correct for a in first.values()),
                               best_score=max((a.score for a in mine), default=None), mastered=drill in mastered))
    return lines


async def member_by_id(db: Database, klass: Classroom, member_id: int) -> Member | None:
    """A member of this class (never of another class)."""
    async with db.session() as s:
        found: Member | None = (await s.execute(select(Member).where(
            Member.id == member_id, Member.class_id == klass.id))).scalar_one_or_none()
        return found
