"""What an instructor sees of a class: who is where, who is stuck, how each drill goes. Built from the database."""

from __future__ import annotations

import json
import math
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from pydantic import BaseModel, Field
from sqlalchemy import ColumnElement, Select, Text, and_, case, cast, func, not_, select

from app.classroom.class_models import Classroom, Member, StepTime
from app.classroom.classes import aware, horizon, is_open
from app.classroom.db import Database
from app.classroom.models import DrillAttempt, StepProgress, utcnow
from app.classroom.outline import Outline
from app.classroom.progress import step_state

STUCK_WRONG = 3  # wrong attempts on one drill since the last right one
STUCK_P75_FACTOR = 2.0  # time on a step this many times the class's 75th percentile
STUCK_MIN_SECONDS = 120.0  # nobody is flagged for time on a step before two minutes
P75_MIN_SAMPLES = 3  # learners who finished a step before its percentile means anything
TOP_WRONG = 3


class ClassInfo(BaseModel):
    """The class itself, as every view shows it."""

    code: str
    title: str
    lesson: str
    lesson_title: str
    open: bool
    created_at: datetime
    ends_at: datetime | None
    closed_at: datetime | None
    ends_in_seconds: float | None = Field(description="Seconds until the end time, while open")
    pace_mode: str
    pace_step: int | None
    pace_move: bool
    idle_minutes: int
    revealed: list[str]


class Counts(BaseModel):
    joined: int = 0
    active: int = 0
    finished: int = 0
    stuck: int = 0
    attempts: int = 0
    correct_share: float | None = None


class StepColumn(BaseModel):
    """One step of the lesson and where the class stands on it."""

    number: int
    title: str
    on_step: int = Field(default=0, description="Learners whose current step this is")
    done: int = 0
    done_width: float = Field(default=0.0, description="done / joined, 0 to 100, for a bar")
    on_width: float = 0.0
    p75_seconds: float | None = None


class LearnerRow(BaseModel):
    member_id: int
    name: str
    cells: list[str] = Field(description="Per step: done, current, seen or todo")
    step: int | None
    done: int
    on_step_seconds: float | None = Field(description="Time on the current step")
    idle_seconds: float = Field(description="Since the last page view, widget move or answer")
    on_step_text: str = Field(default="", description="on_step_seconds as a person says it")
    idle_text: str = Field(default="", description="idle_seconds as a person says it")
    attempts: int = 0
    correct: int = 0
    reasons: list[str] = Field(default_factory=list, description="Why the learner is flagged as stuck")
    finished: bool = False

    @property
    def stuck(self) -> bool:
        return bool(self.reasons)


class WrongAnswer(BaseModel):
    text: str = Field(description="Exactly as typed (wrong parts only)")
    count: int
    width: float = Field(description="count / attempts, 0 to 100")


class DrillStats(BaseModel):
    key: str = Field(description="'step:drill'")
    step: int
    drill: str
    step_title: str
    attempts: int = 0
    learners: int = 0
    correct: int = 0
    correct_share: float | None = None
    correct_width: float = 0.0
    wrong: list[WrongAnswer] = Field(default_factory=list)
    other_wrong: int = 0
    other_width: float = 0.0
    revealed: bool = False


class Dashboard(BaseModel):
    info: ClassInfo
    counts: Counts
    steps: list[StepColumn]
    rows: list[LearnerRow]
    drills: list[DrillStats]
    stuck: list[LearnerRow]
    generated_at: datetime


def outline_of(klass: Classroom) -> Outline:
    return Outline.from_json(klass.lesson, klass.outline)


def class_info(klass: Classroom, now: datetime | None = None) -> ClassInfo:
    now = now or utcnow()
    outline = outline_of(klass)
    open_ = is_open(klass, now)
    ends = aware(klass.ends_at)
    return ClassInfo(
        code=klass.code, title=klass.title, lesson=klass.lesson, lesson_title=outline.title, open=open_,
        created_at=aware(klass.created_at) or now, ends_at=ends, closed_at=aware(klass.closed_at),
        ends_in_seconds=(ends - now).total_seconds() if ends and open_ else None,
        pace_mode=klass.pace_mode if open_ else "free", pace_step=klass.pace_step, pace_move=klass.pace_move,
        idle_minutes=klass.idle_minutes, revealed=list(klass.revealed or []),
    )


@dataclass
class ClassFacts:
    """Rows read for one class, keyed for quick lookups."""

    members: list[Any]
    done: dict[str, set[int]] = field(default_factory=lambda: defaultdict(set))
    seen: dict[str, set[int]] = field(default_factory=lambda: defaultdict(set))
    seconds: dict[int, dict[int, float]] = field(default_factory=lambda: defaultdict(dict))
    attempts: list[Any] = field(default_factory=list)  # (learner_id, step, drill, correct) in order
    last_answer: dict[str, datetime] = field(default_factory=dict)
    wrong: list[Any] = field(default_factory=list)  # (step, drill, answers JSON, parts JSON, count)


@dataclass(frozen=True)
class ClassFilter:
    """What counts for a class, shared by the dashboard's read and the projector's counts: its members, its
    lesson, nothing after it ended."""

    end: datetime | None
    in_class: ColumnElement[bool]
    answered: tuple[ColumnElement[bool], ...]
    by_member: ColumnElement[bool]

    @classmethod
    def of(cls, klass: Classroom) -> ClassFilter:
        end = horizon(klass)
        in_class = Member.class_id == klass.id
        answered: list[ColumnElement[bool]] = [in_class, DrillAttempt.lesson == klass.lesson]
        if end is not None:
            answered.append(DrillAttempt.created_at <= end)
        return cls(end, in_class, tuple(answered), Member.learner_id == DrillAttempt.learner_id)

    def wrong_answers(self) -> Select[int, str, str, str, int]:
        """(step, drill, answers JSON, parts JSON, count) for each wrong answer as typed."""
        typed, parts = cast(DrillAttempt.answers, Text), cast(DrillAttempt.correct_parts, Text)
        return (select(DrillAttempt.step, DrillAttempt.drill, typed, parts, func.count())
                .join(Member, self.by_member).where(*self.answered, not_(DrillAttempt.correct))
                .group_by(DrillAttempt.step, DrillAttempt.drill, typed, parts))


async def read_class(db: Database, klass: Classroom) -> ClassFacts:
    """Six queries whatever the class size; the database does the filtering and the counting it can."""
    f = ClassFilter.of(klass)
    end, in_class, answered, by_member = f.end, f.in_class, f.answered, f.by_member
    done: ColumnElement[bool] = StepProgress.completed_at.is_not(None)
    if end is not None:
        done = and_(done, StepProgress.completed_at <= end)
    progress = (select(StepProgress.learner_id, StepProgress.step, case((done, 1), else_=0))
                .join(Member, Member.learner_id == StepProgress.learner_id)
                .where(in_class, StepProgress.lesson == klass.lesson))
    if end is not None:
        progress = progress.where(StepProgress.first_seen <= end)
    async with db.session() as session:
        s = await session.connection()  # Core rows: no ORM loading step for ~15,000 rows at 600 learners
        members = (await s.execute(select(
            Member.id, Member.learner_id, Member.name, Member.joined_at, Member.step, Member.arrived_at,
            Member.counted_at, Member.last_active).where(in_class).order_by(Member.name_key))).all()
        facts = ClassFacts(members=list(members))
        for learner_id, step, is_done in await s.execute(progress):
            facts.seen[learner_id].add(step)
            if is_done:
                facts.done[learner_id].add(step)
        times = await s.execute(select(StepTime.member_id, StepTime.step, StepTime.seconds)
                                .join(Member, Member.id == StepTime.member_id).where(in_class))
        for member_id, step, secs in times:
            facts.seconds[member_id][step] = secs
        facts.attempts = list((await s.execute(
            select(DrillAttempt.learner_id, DrillAttempt.step, DrillAttempt.drill, DrillAttempt.correct)
            .join(Member, by_member).where(*answered).order_by(DrillAttempt.id))).all())
        last = await s.execute(select(DrillAttempt.learner_id, func.max(DrillAttempt.created_at))
                               .join(Member, by_member).where(*answered).group_by(DrillAttempt.learner_id))
        facts.last_answer = {learner_id: at for learner_id, at in last if at is not None}
        facts.wrong = list((await s.execute(f.wrong_answers())).all())
    return facts


def wrong_text(answers: dict[str, Any], correct_parts: dict[str, Any]) -> str:
    """The wrong parts of an answer, as typed: '14' or 'bytes: 14; gpus: 2'."""
    parts = [p for p, ok in (correct_parts or {}).items() if not ok] or list(answers or {})
    typed = [(p, str((answers or {}).get(p, "")).strip()) for p in parts]
    if len(typed) == 1:
        return typed[0][1] or "(blank)"
    return "; ".join(f"{p}: {v or '(blank)'}" for p, v in typed) or "(blank)"


def percentile(values: list[float], q: float) -> float | None:
    """Nearest-rank percentile; None for no values."""
    if not values:
        return None
    ordered = sorted(values)
    return ordered[max(0, math.ceil(q * len(ordered)) - 1)]


@dataclass
class DrillTally:
    """One drill's answers in a class: how many, how many right, from how many learners."""

    attempts: int = 0
    correct: int = 0
    learners: int = 0


def _attempt_tallies(facts: ClassFacts) -> dict[str, DrillTally]:
    tallies: dict[str, DrillTally] = defaultdict(DrillTally)
    learners: dict[str, set[str]] = defaultdict(set)
    for learner_id, step, drill, correct in facts.attempts:
        t = tallies[f"{step}:{drill}"]
        t.attempts += 1
        t.correct += 1 if correct else 0
        learners[f"{step}:{drill}"].add(learner_id)
    for key, t in tallies.items():
        t.learners = len(learners[key])
    return tallies


def _drill_stats(outline: Outline, tallies: dict[str, DrillTally], wrong_rows: list[Any],
                 revealed: list[str]) -> list[DrillStats]:
    """Per drill: answers, right share, the commonest wrong answers as typed (wrong_rows: step, drill, answers
    JSON, parts JSON, count)."""
    titles = {s.number: s.title for s in outline.steps}
    stats: dict[str, DrillStats] = {}

    def stat(step: int, drill: str) -> DrillStats:
        key = f"{step}:{drill}"
        if key not in stats:
            stats[key] = DrillStats(key=key, step=step, drill=drill, step_title=titles.get(step, ""),
                                    revealed=key in revealed)
        return stats[key]

    for s in outline.steps:
        for d in s.drills:
            stat(s.number, d)
    for key, t in tallies.items():
        step, drill = key.split(":", 1)
        st = stat(int(step), drill)
        st.attempts, st.correct, st.learners = t.attempts, t.correct, t.learners
    wrong: dict[str, Counter[str]] = defaultdict(Counter)
    for step, drill, answers, parts, count in wrong_rows:
        wrong[f"{step}:{drill}"][wrong_text(json.loads(answers or "{}"), json.loads(parts or "{}"))] += count
    for key, st in stats.items():
        if st.attempts:
            st.correct_share = st.correct / st.attempts
            st.correct_width = 100 * st.correct / st.attempts
            top = wrong[key].most_common(TOP_WRONG)
            st.wrong = [WrongAnswer(text=t, count=c, width=100 * c / st.attempts) for t, c in top]
            st.other_wrong = st.attempts - st.correct - sum(c for _, c in top)
            st.other_width = 100 * st.other_wrong / st.attempts
    return sorted(stats.values(), key=lambda d: (d.step, d.drill))


def _struggles(facts: ClassFacts) -> dict[str, dict[str, int]]:
    """Per learner and drill: wrong attempts in all, where the latest attempt is wrong (a right one clears the
    flag, the next wrong one brings it back with the whole count: wrong, wrong, right, wrong, wrong is 4)."""
    wrong: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    last_wrong: dict[tuple[str, str], bool] = {}
    for learner_id, step, drill, correct in facts.attempts:
        key = f"{step}:{drill}"
        wrong[learner_id][key] += 0 if correct else 1
        last_wrong[learner_id, key] = not correct
    return {learner: {key: n for key, n in drills.items() if last_wrong[learner, key]}
            for learner, drills in wrong.items()}


async def build_dashboard(db: Database, klass: Classroom, now: datetime | None = None) -> Dashboard:
    """Everything the dashboard, projector and cockpit show, in one read of the class."""
    now = now or utcnow()
    facts = await read_class(db, klass)
    return assemble(klass, facts, now)


def assemble(klass: Classroom, facts: ClassFacts, now: datetime) -> Dashboard:
    """The dashboard from the rows read: one pass over the members, one over the attempts (no step × learner
    loops), rows built whole (no field set twice)."""
    info = class_info(klass, now)
    outline = outline_of(klass)
    end = horizon(klass)
    at = min(now, end) if end else now
    total = len(outline.steps)
    numbers = range(1, total + 1)
    no_steps: set[int] = set()
    finished_seconds: dict[int, list[float]] = defaultdict(list)  # per step, time of those who finished it
    for m in facts.members:
        seconds = facts.seconds.get(m.id, {})
        for n in facts.done.get(m.learner_id, no_steps):
            finished_seconds[n].append(seconds.get(n, 0.0))
    p75: dict[int, float | None] = {}
    for s in outline.steps:
        finished = finished_seconds.get(s.number, [])
        p75[s.number] = percentile(finished, 0.75) if len(finished) >= P75_MIN_SAMPLES else None
    struggles = _struggles(facts)
    answered = {k: aware(v) for k, v in facts.last_answer.items()}
    tally: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for learner_id, _step, _drill, correct in facts.attempts:
        counts_of = tally[learner_id]
        counts_of[0] += 1
        counts_of[1] += 1 if correct else 0
    on_step: dict[int, int] = defaultdict(int)
    drill_steps = {s.number for s in outline.steps if s.drills}
    rows = []
    for m in facts.members:
        done = facts.done.get(m.learner_id, no_steps)
        seen = facts.seen.get(m.learner_id, no_steps)
        cells = [step_state(done=n in done, seen=n in seen, drill=n in drill_steps, current=n == m.step)
                 for n in numbers]
        counted = aware(m.counted_at)
        live = min(max((at - counted).total_seconds(), 0.0), 1200.0) if counted and m.step else 0.0
        on = facts.seconds.get(m.id, {}).get(m.step, 0.0) + live if m.step else None
        last = max(t for t in (aware(m.last_active), answered.get(m.learner_id), aware(m.joined_at)) if t)
        idle = max((at - last).total_seconds(), 0.0)
        finished_all = total in done
        reasons = (_reasons(m.step, on, idle, p75, struggles.get(m.learner_id, {}), klass.idle_minutes)
                   if info.open and not finished_all else [])
        attempts, correct = tally.get(m.learner_id, (0, 0))
        rows.append(LearnerRow.model_construct(
            member_id=m.id, name=m.name, cells=cells, step=m.step, done=len(done), on_step_seconds=on,
            idle_seconds=idle, on_step_text=_minutes(on) if on is not None else "",
            idle_text="just now" if idle < 10 else f"{_minutes(idle)} ago", attempts=attempts, correct=correct,
            reasons=reasons, finished=finished_all))
        if m.step and 1 <= m.step <= total:
            on_step[m.step] += 1
    joined = len(rows)
    columns = []
    for s in outline.steps:
        done_count = len(finished_seconds.get(s.number, []))
        here = on_step.get(s.number, 0)
        columns.append(StepColumn.model_construct(
            number=s.number, title=s.title, on_step=here, done=done_count,
            done_width=100 * done_count / joined if joined else 0.0, on_width=100 * here / joined if joined else 0.0,
            p75_seconds=p75[s.number]))
    drills = _drill_stats(outline, _attempt_tallies(facts), facts.wrong, info.revealed)
    attempts_all = sum(d.attempts for d in drills)
    counts = Counts(
        joined=joined, active=sum(1 for r in rows if r.idle_seconds < klass.idle_minutes * 60),
        finished=sum(1 for r in rows if r.finished), stuck=sum(1 for r in rows if r.stuck), attempts=attempts_all,
        correct_share=sum(d.correct for d in drills) / attempts_all if attempts_all else None,
    )
    stuck = sorted((r for r in rows if r.stuck), key=lambda r: (-len(r.reasons), -r.idle_seconds))
    return Dashboard.model_construct(info=info, counts=counts, steps=columns, rows=rows, drills=drills, stuck=stuck,
                                     generated_at=now)


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


async def build_projection(db: Database, klass: Classroom, now: datetime | None = None) -> Projection:
    """The projector's figures counted by the database (four GROUP BY queries answering O(steps + drills) rows
    whatever the class size), equal to the dashboard's: the same filters as read_class, the same arithmetic."""
    now = now or utcnow()
    info = class_info(klass, now)
    outline = outline_of(klass)
    total = len(outline.steps)
    f = ClassFilter.of(klass)
    in_class, answered, by_member = f.in_class, f.answered, f.by_member
    done_filter = [in_class, StepProgress.lesson == klass.lesson, StepProgress.completed_at.is_not(None)]
    if f.end is not None:
        done_filter += [StepProgress.completed_at <= f.end, StepProgress.first_seen <= f.end]
    async with db.session() as session:
        s = await session.connection()
        here = {step: n for step, n in await s.execute(
            select(Member.step, func.count()).where(in_class).group_by(Member.step))}
        done = {step: n for step, n in await s.execute(
            select(StepProgress.step, func.count())
            .join(Member, Member.learner_id == StepProgress.learner_id).where(*done_filter)
            .group_by(StepProgress.step))}
        tallies = {f"{step}:{drill}": DrillTally(attempts=n, correct=int(right or 0), learners=who)
                   for step, drill, n, right, who in await s.execute(
                       select(DrillAttempt.step, DrillAttempt.drill, func.count(),
                              func.sum(case((DrillAttempt.correct, 1), else_=0)),
                              func.count(DrillAttempt.learner_id.distinct()))
                       .join(Member, by_member).where(*answered).group_by(DrillAttempt.step, DrillAttempt.drill))}
        wrong = list((await s.execute(f.wrong_answers())).all())
    joined = sum(here.values())
    columns = []
    for st in outline.steps:
        done_count, on = done.get(st.number, 0), here.get(st.number, 0)
        columns.append(StepColumn.model_construct(
            number=st.number, title=st.title, on_step=on, done=done_count,
            done_width=100 * done_count / joined if joined else 0.0, on_width=100 * on / joined if joined else 0.0,
            p75_seconds=None))
    return Projection.model_construct(
        info=info, counts=RoomCounts(joined=joined, finished=done.get(total, 0) if total else 0), steps=columns,
        drills=_drill_stats(outline, tallies, wrong, info.revealed), generated_at=now)


def _reasons(step: int | None, on_step_seconds: float | None, idle_seconds: float, p75: dict[int, float | None],
             struggles: dict[str, int], idle_minutes: int) -> list[str]:
    """Why a learner may be stuck, in words an instructor can act on."""
    reasons = []
    limit = p75.get(step or 0)
    if on_step_seconds is not None and limit is not None:
        threshold = max(STUCK_MIN_SECONDS, STUCK_P75_FACTOR * limit)
        if on_step_seconds > threshold:
            reasons.append(f"long on step {step}: {_minutes(on_step_seconds)} "
                           f"(class 75th percentile {_minutes(limit)})")
    for key, wrong in sorted(struggles.items()):
        if wrong >= STUCK_WRONG:
            reasons.append(f"{wrong} wrong answers on the drill of step {key.split(':')[0]}, the latest too")
    if idle_seconds >= idle_minutes * 60:
        reasons.append(f"no activity for {_minutes(idle_seconds)}")
    return reasons


def _minutes(seconds: float) -> str:
    """42 s, 7 min, 2.5 h: the precision an instructor glancing at a screen needs."""
    if seconds >= 90 * 60:
        return f"{seconds / 3600:.1f} h"
    return f"{seconds / 60:.0f} min" if seconds >= 90 else f"{seconds:.0f} s"


# --- one learner ---------------------------------------------------------------------------------------


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
