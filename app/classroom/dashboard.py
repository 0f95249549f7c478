"""What an instructor sees of a class: who is where, who is stuck, how each drill goes. Built from the database."""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Collection, Iterable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from pydantic import BaseModel, Field
from sqlalchemy import ColumnElement, and_, case, func, select

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
    percentile,
    step_columns,
    wrong_text,
)
from app.classroom.models import DrillAttempt, StepProgress, utcnow
from app.classroom.outline import Outline
from app.classroom.progress import step_state
from app.classroom.seat import IDLE_CAP, aware, horizon

# The stuck list names the worst 50 with their reasons and counts the rest: an instructor acts on the top of it,
# and a class of 600 where half sat idle would otherwise send 40 kB of it with every 2-second poll.
STUCK_SHOWN = 50
STUCK_WRONG = 3  # wrong attempts on one drill since the last right one
STUCK_P75_FACTOR = 2.0  # time on a step this many times the class's 75th percentile
STUCK_MIN_SECONDS = 120.0  # nobody is flagged for time on a step before two minutes
P75_MIN_SAMPLES = 3  # learners who finished a step before its percentile means anything
P75_REFRESH = timedelta(seconds=30)  # a poll recomputes the percentiles at most this often


class Counts(BaseModel):
    joined: int = 0
    active: int = 0
    finished: int = 0
    stuck: int = 0
    attempts: int = 0
    correct_share: float | None = None


class LearnerRow(BaseModel):
    member_id: int
    name: str
    name_key: str = Field(default="", description="The name case-folded: the rows' order")
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
    last_at: datetime | None = Field(default=None, description="Last activity: the page says 'N min ago' from it")
    on_base: float = Field(default=0.0, description="Seconds on the current step counted before counted_at")
    counted_at: datetime | None = Field(default=None, description="From when time on the step keeps counting")

    @property
    def stuck(self) -> bool:
        return bool(self.reasons)


@dataclass(frozen=True)
class Flagged:
    """A learner who may be stuck, for the stuck list: who, why, and how long quiet."""

    member_id: int
    name: str
    reasons: list[str]
    idle_seconds: float


class Dashboard(BaseModel):
    info: ClassInfo
    counts: Counts
    steps: list[StepColumn]
    rows: list[LearnerRow]
    drills: list[DrillStats]
    stuck: list[Flagged]
    generated_at: datetime
    stamp: str = Field(default="", description="The poll sends it back: rows changed since then come next")
    partial: bool = Field(default=False, description="rows holds only the rows changed since the poll's stamp")

    @property
    def stuck_shown(self) -> list[Flagged]:
        """The stuck list as the page writes it out: the worst STUCK_SHOWN, reasons and all."""
        return self.stuck[:STUCK_SHOWN]

    @property
    def stuck_ids(self) -> str:
        """Every flagged member's id, for the grid's marks (a few bytes each, where a line with reasons is ~70)."""
        return " ".join(str(f.member_id) for f in self.stuck)


@dataclass
class ClassFacts:
    """Rows read for one class (or, by a poll, for the members changed since a time), keyed for lookups."""

    members: list[Any]
    done: dict[str, set[int]] = field(default_factory=lambda: defaultdict(set))
    seen: dict[str, set[int]] = field(default_factory=lambda: defaultdict(set))
    seconds: dict[int, dict[int, float]] = field(default_factory=lambda: defaultdict(dict))
    # per learner, in order: (step, drill, right, answers as typed, right per part)
    attempts: dict[str, list[Any]] = field(default_factory=lambda: defaultdict(list))
    last_answer: dict[str, datetime] = field(default_factory=dict)


MEMBER_COLUMNS = (Member.id, Member.learner_id, Member.name, Member.name_key, Member.joined_at, Member.step,
                  Member.arrived_at, Member.counted_at, Member.last_active)


async def read_class(db: Database, klass: Classroom, since: datetime | None = None) -> ClassFacts:
    """Five queries whatever the class size; with `since`, for the members whose change stamp (`last_active`) is
    at least that (indexed with the class), and only one when nobody changed."""
    f = ClassFilter.of(klass)
    in_class = f.in_class if since is None else and_(f.in_class, Member.last_active >= since)
    answered = (in_class, *f.answered[1:])
    async with db.session() as session:
        s = await session.connection()  # Core rows: no ORM loading step for ~15,000 rows at 600 learners
        facts = ClassFacts(members=list((await s.execute(
            select(*MEMBER_COLUMNS).where(in_class).order_by(Member.name_key))).all()))
        if since is not None and not facts.members:
            return facts  # nobody changed: nothing more to read
        for learner_id, step, is_done in await s.execute(_progress(klass, f.end, in_class)):
            facts.seen[learner_id].add(step)
            if is_done:
                facts.done[learner_id].add(step)
        for member_id, step, secs in await s.execute(select(StepTime.member_id, StepTime.step, StepTime.seconds)
                                                     .join(Member, Member.id == StepTime.member_id).where(in_class)):
            facts.seconds[member_id][step] = secs
        for learner_id, *attempt in await s.execute(
                select(DrillAttempt.learner_id, DrillAttempt.step, DrillAttempt.drill, DrillAttempt.correct,
                       DrillAttempt.answers, DrillAttempt.correct_parts)
                .join(Member, f.by_member).where(*answered).order_by(DrillAttempt.id)):
            facts.attempts[learner_id].append(attempt)
        last = await s.execute(select(DrillAttempt.learner_id, func.max(DrillAttempt.created_at))
                               .join(Member, f.by_member).where(*answered).group_by(DrillAttempt.learner_id))
        facts.last_answer = {learner_id: at for learner_id, at in last if at is not None}
    return facts


def _progress(klass: Classroom, end: datetime | None, in_class: ColumnElement[bool]) -> Any:
    """(learner, step, done 1/0) of the class's members in its lesson, up to its end."""
    done: ColumnElement[bool] = StepProgress.completed_at.is_not(None)
    if end is not None:
        done = and_(done, StepProgress.completed_at <= end)
    progress = (select(StepProgress.learner_id, StepProgress.step, case((done, 1), else_=0))
                .join(Member, Member.learner_id == StepProgress.learner_id)
                .where(in_class, StepProgress.lesson == klass.lesson))
    return progress.where(StepProgress.first_seen <= end) if end is not None else progress


@dataclass
class Learner:
    """One member's facts, derived once per change of theirs: what their row shows and what the stuck rule needs
    (everything but the clock)."""

    m: Any  # the member's MEMBER_COLUMNS
    done: frozenset[int]
    seen: frozenset[int]
    seconds: dict[int, float]
    drills: dict[str, tuple[int, int]]  # per drill key: answers, right ones
    struggles: dict[str, int]  # per drill key: wrong answers in all, where the latest is wrong
    wrong_texts: dict[tuple[str, str], int]  # per drill key and wrong answer as typed: how often
    last: datetime  # last page view, widget move or answer (or joining)
    counted: datetime | None
    attempts: int = 0
    correct: int = 0
    changed_at: datetime | None = field(default=None, compare=False)  # the board's read that found this version


def learner_of(m: Any, facts: ClassFacts) -> Learner:
    tally: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    wrong: Counter[str] = Counter()
    last_wrong: dict[str, bool] = {}
    texts: Counter[tuple[str, str]] = Counter()
    for step, drill, right, answers, parts in facts.attempts.get(m.learner_id, ()):
        key = f"{step}:{drill}"
        tally[key][0] += 1
        tally[key][1] += 1 if right else 0
        wrong[key] += 0 if right else 1
        last_wrong[key] = not right
        if not right:
            texts[key, wrong_text(answers or {}, parts or {})] += 1
    last = max(t for t in (aware(m.last_active), aware(facts.last_answer.get(m.learner_id)), aware(m.joined_at)) if t)
    return Learner(m=m, done=frozenset(facts.done.get(m.learner_id, ())),
                   seen=frozenset(facts.seen.get(m.learner_id, ())), seconds=dict(facts.seconds.get(m.id, {})),
                   drills={k: (n, r) for k, (n, r) in tally.items()},
                   struggles={k: n for k, n in wrong.items() if last_wrong[k]}, wrong_texts=dict(texts),
                   last=last, counted=aware(m.counted_at),
                   attempts=sum(n for n, _ in tally.values()), correct=sum(r for _, r in tally.values()))


@dataclass
class Board:
    """A class's learners and the counts kept from them (done and here per step, answers per drill). A member's
    change replaces their entry and adjusts the counts, so a poll costs the changes, not the class."""

    learners: dict[int, Learner] = field(default_factory=dict)
    done: Counter[int] = field(default_factory=Counter)
    here: Counter[int] = field(default_factory=Counter)
    drills: dict[str, DrillTally] = field(default_factory=lambda: defaultdict(DrillTally))
    wrong: dict[str, Counter[str]] = field(default_factory=lambda: defaultdict(Counter))
    p75: dict[int, float | None] = field(default_factory=dict)
    p75_at: datetime | None = None

    @classmethod
    def of(cls, facts: ClassFacts, at: datetime | None = None) -> Board:
        board = cls()
        board.merge(facts, at or utcnow())
        return board

    def merge(self, facts: ClassFacts, at: datetime) -> None:
        """Take in the members read (all of them, or those changed) at `at`; a member read again unchanged keeps
        their entry, and so the time it last changed."""
        for m in facts.members:
            learner, old = learner_of(m, facts), self.learners.get(m.id)
            if old == learner:
                continue
            if old is not None:
                self._count(old, -1)
            learner.changed_at = at
            self.learners[m.id] = learner
            self._count(learner, 1)

    def _count(self, learner: Learner, sign: int) -> None:
        self.done.update({n: sign for n in learner.done})
        if learner.m.step:
            self.here[learner.m.step] += sign
        for (key, text), n in learner.wrong_texts.items():
            self.wrong[key][text] += sign * n
        for key, (n, right) in learner.drills.items():
            t = self.drills[key]
            t.attempts, t.correct, t.learners = t.attempts + sign * n, t.correct + sign * right, t.learners + sign

    def percentiles(self, outline: Outline, now: datetime) -> dict[int, float | None]:
        """Per step, the 75th percentile of the time of those who finished it (kept for P75_REFRESH)."""
        if self.p75_at is None or now - self.p75_at >= P75_REFRESH:
            finished: dict[int, list[float]] = defaultdict(list)
            for learner in self.learners.values():
                for n in learner.done:
                    finished[n].append(learner.seconds.get(n, 0.0))
            self.p75 = {s.number: percentile(finished[s.number], 0.75)
                        if len(finished[s.number]) >= P75_MIN_SAMPLES else None for s in outline.steps}
            self.p75_at = now
        return self.p75


async def build_dashboard(db: Database, klass: Classroom, now: datetime | None = None) -> Dashboard:
    """Everything the dashboard and cockpit show, in one read of the class."""
    now = now or utcnow()
    return assemble(klass, Board.of(await read_class(db, klass)), now)


@dataclass(frozen=True)
class Rule:
    """Who may be stuck at a moment: the class's percentiles, idle limit, end, total and hold."""

    at: datetime
    p75: dict[int, float | None]
    idle_seconds: float
    open: bool
    total: int
    hold: int | None

    def idle(self, learner: Learner) -> float:
        return max((self.at - learner.last).total_seconds(), 0.0)

    def on_step(self, learner: Learner) -> float | None:
        step, counted = learner.m.step, learner.counted
        if not step:
            return None
        live = min(max((self.at - counted).total_seconds(), 0.0), IDLE_CAP.total_seconds()) if counted else 0.0
        return learner.seconds.get(step, 0.0) + live

    def reasons(self, learner: Learner, idle: float) -> list[str]:
        """Nobody in a closed class or who finished; a learner at or past a hold waits for the class, so their
        time on the step and their quiet are no sign of trouble (issue 13)."""
        if not self.open or self.total in learner.done:
            return []
        if self.hold is not None and (learner.m.step or 0) >= self.hold:
            return _reasons(learner.m.step, None, 0.0, self.p75, learner.struggles, self.idle_seconds)
        on = self.on_step(learner) if self.p75.get(learner.m.step or 0) is not None else None  # else never long
        return _reasons(learner.m.step, on, idle, self.p75, learner.struggles, self.idle_seconds)

    def flag(self, learners: Iterable[Learner]) -> tuple[list[Flagged], int]:
        """Who may be stuck, most reasons and longest quiet first, and how many are active: one pass."""
        flagged, active = [], 0
        for x in learners:
            idle = self.idle(x)
            active += idle < self.idle_seconds
            if reasons := self.reasons(x, idle):
                flagged.append(Flagged(member_id=x.m.id, name=x.m.name, reasons=reasons, idle_seconds=idle))
        flagged.sort(key=lambda f: (-len(f.reasons), -f.idle_seconds))
        return flagged, active


def assemble(klass: Classroom, board: Board, now: datetime, rows_for: Collection[int] | None = None,
             stamp: str = "") -> Dashboard:
    """The dashboard at `now`: counts and the stuck list from every learner (a light pass), step columns and
    drills from the board's counts, and whole rows for `rows_for` (None: everyone, in name order)."""
    info, outline = class_info(klass, now), outline_of(klass)
    end = horizon(klass)
    rule = Rule(at=min(now, end) if end else now, p75=board.percentiles(outline, now),
                idle_seconds=klass.idle_minutes * 60, open=info.open, total=len(outline.steps),
                hold=info.pace_step if info.pace_mode == "hold" else None)
    flagged, active = rule.flag(board.learners.values())
    chosen = sorted(board.learners.values(), key=lambda x: x.m.name_key) if rows_for is None else [
        board.learners[i] for i in rows_for if i in board.learners]
    drills = drill_stats(outline, {k: t for k, t in board.drills.items() if t.attempts},
                         {k: +texts for k, texts in board.wrong.items()}, info.revealed)  # + drops zero counts
    joined = len(board.learners)
    answers = sum(d.attempts for d in drills)
    counts = Counts(joined=joined, active=active, finished=board.done.get(rule.total, 0), stuck=len(flagged),
                    attempts=answers, correct_share=sum(d.correct for d in drills) / answers if answers else None)
    steps = step_columns(outline, board.done, board.here, joined, rule.p75)
    return Dashboard.model_construct(
        info=info, counts=counts, steps=steps, rows=[_row(x, rule, outline) for x in chosen], drills=drills,
        stuck=flagged, generated_at=now, stamp=stamp,
        partial=rows_for is not None)


def _row(learner: Learner, rule: Rule, outline: Outline) -> LearnerRow:
    m = learner.m
    cells = [step_state(done=s.number in learner.done, seen=s.number in learner.seen, drill=bool(s.drills),
                        current=s.number == m.step) for s in outline.steps]
    on, idle = rule.on_step(learner), rule.idle(learner)
    return LearnerRow.model_construct(
        member_id=m.id, name=m.name, name_key=m.name_key, cells=cells, step=m.step, done=len(learner.done),
        on_step_seconds=on, idle_seconds=idle, on_step_text=_minutes(on) if on is not None else "",
        idle_text="just now" if idle < 10 else f"{_minutes(idle)} ago", attempts=learner.attempts,
        correct=learner.correct, reasons=rule.reasons(learner, idle),
        finished=rule.total in learner.done, last_at=learner.last, on_base=learner.seconds.get(m.step or 0, 0.0),
        counted_at=learner.counted)


def _reasons(step: int | None, on_step_seconds: float | None, idle_seconds: float, p75: dict[int, float | None],
             struggles: dict[str, int], idle_limit: float) -> list[str]:
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
    if idle_seconds >= idle_limit:
        reasons.append(f"no activity for {_minutes(idle_seconds)}")
    return reasons


def _minutes(seconds: float) -> str:
    """42 s, 7 min, 2.5 h: the precision an instructor glancing at a screen needs."""
    if seconds >= 90 * 60:
        return f"{seconds / 3600:.1f} h"
    return f"{seconds / 60:.0f} min" if seconds >= 90 else f"{seconds:.0f} s"
