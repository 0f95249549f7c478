"""What an instructor sees of a class: who is where, who is stuck, how each drill goes. Built from the database."""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Collection, Iterable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from pydantic import BaseModel, Field
from sqlalchemy import ColumnElement, and_, case, func, select

from app.classroom.class_models import Classroom, FlagMark, Member, StepTime
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
    part_labels,
    percentile,
    step_columns,
    wrong_text,
)
from app.classroom.models import DrillAttempt, StepProgress, utcnow
from app.classroom.outline import Outline
from app.classroom.progress import step_state
from app.classroom.seat import active_seconds, aware, horizon

# The stuck list names the worst 50 with their reasons and counts the rest: an instructor acts on the top of it,
# and a class of 600 where half sat idle would otherwise send 40 kB of it with every 2-second poll.
STUCK_SHOWN = 50
STUCK_WRONG = 3  # wrong attempts on one drill since the last right one
STUCK_FACTOR = 2.0  # active time on a step this many times what the step should take
STUCK_MIN_SECONDS = 120.0  # nobody is flagged for time on a step before two minutes
P75_MIN_SAMPLES = 3  # active learners who finished a step (not in a rush) before their pace counts
P75_REFRESH = timedelta(seconds=30)  # a poll recomputes the percentiles at most this often
LEFT_FACTOR = 3  # quiet for this many times the idle minutes: they left; no flag, not counted active
RUSH_SECONDS = 1.0  # a step marked done within this long of opening it was not read
RUSH_STEPS = 3  # steps done that fast before a learner is flagged as rushing
FLAG_KINDS = ("long", "wrong", "idle", "rushing")


class Counts(BaseModel):
    joined: int = 0
    active: int = 0
    finished: int = 0
    stuck: int = Field(default=0, description="Learners with a flag other than rushing")
    rushing: int = Field(default=0, description="Learners clicking Done through steps without reading them")
    left: int = Field(default=0, description="Quiet for LEFT_FACTOR times the idle minutes: gone, not counted")
    attempts: int = 0
    correct_share: float | None = None
    reached: int = Field(default=0, description="Learners who reached the step of the current bring")


class Flag(BaseModel):
    """One reason to look at a learner, with the key an instructor's "helped" or "dismiss" names it by."""

    key: str = Field(description="'long:12', 'wrong:7:drill', 'idle' or 'rushing'")
    kind: str = Field(description="long | wrong | idle | rushing")
    text: str = Field(description="The reason in words an instructor can act on")
    since: datetime = Field(description="Its latest evidence: a mark made after it hides it until newer evidence")


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
    flags: list[Flag] = Field(default_factory=list, description="Why the learner may need the instructor")
    finished: bool = Field(default=False, description="Every step done or passed with the class: here on none")
    left: bool = Field(default=False, description="Quiet so long they left the room: never flagged")
    passed: int = Field(default=0, description="Steps the class moved them past (not done, not held against them)")
    last_at: datetime | None = Field(default=None, description="Last activity: the page says 'N min ago' from it")
    on_base: float = Field(default=0.0, description="Seconds on the current step counted before counted_at")
    counted_at: datetime | None = Field(default=None, description="From when time on the step keeps counting")

    @property
    def reasons(self) -> list[str]:
        return [f.text for f in self.flags]

    @property
    def stuck(self) -> bool:
        return bool(self.flags)


@dataclass(frozen=True)
class Flagged:
    """A learner who may need the instructor, for the list: who, why, and how long quiet."""

    member_id: int
    name: str
    flags: list[Flag]
    idle_seconds: float

    @property
    def reasons(self) -> list[str]:
        return [f.text for f in self.flags]

    @property
    def stuck(self) -> bool:
        """Flagged for something other than rushing."""
        return any(f.kind != "rushing" for f in self.flags)


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

    gone: list[int] = Field(default_factory=list, description="Rows removed or merged since the poll's stamp")
    left_ids: list[int] = Field(default_factory=list, description="Learners who left the room, for the grid")

    @property
    def stuck_ids(self) -> str:
        """Every flagged member's id, for the grid's marks (a few bytes each, where a line with reasons is ~70)."""
        return " ".join(str(f.member_id) for f in self.stuck)

    @property
    def gone_ids(self) -> str:
        return " ".join(str(i) for i in self.gone)

    @property
    def left_text(self) -> str:
        return " ".join(str(i) for i in self.left_ids)


@dataclass
class ClassFacts:
    """Rows read for one class (or, by a poll, for the members changed since a time), keyed for lookups."""

    members: list[Any]
    done: dict[str, set[int]] = field(default_factory=lambda: defaultdict(set))
    seen: dict[str, set[int]] = field(default_factory=lambda: defaultdict(set))
    seconds: dict[int, dict[int, float]] = field(default_factory=lambda: defaultdict(dict))
    passed: dict[int, set[int]] = field(default_factory=lambda: defaultdict(set))
    # per learner: (step, completed at) of each step done within RUSH_SECONDS of opening it
    rushed: dict[str, list[tuple[int, datetime]]] = field(default_factory=lambda: defaultdict(list))
    # per learner, in order: (step, drill, right, answers as typed, right per part, when)
    attempts: dict[str, list[Any]] = field(default_factory=lambda: defaultdict(list))
    last_answer: dict[str, datetime] = field(default_factory=dict)


MEMBER_COLUMNS = (Member.id, Member.learner_id, Member.name, Member.name_key, Member.joined_at, Member.step,
                  Member.arrived_at, Member.counted_at, Member.last_active, Member.moved_version)


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
        for learner_id, step, is_done, first, completed in await s.execute(_progress(klass, f.end, in_class)):
            facts.seen[learner_id].add(step)
            if is_done:
                facts.done[learner_id].add(step)
                if completed is not None and first is not None and _rushed(first, completed):
                    facts.rushed[learner_id].append((step, aware(completed) or completed))
        for member_id, step, secs, passed in await s.execute(
                select(StepTime.member_id, StepTime.step, StepTime.seconds, StepTime.passed)
                .join(Member, Member.id == StepTime.member_id).where(in_class)):
            facts.seconds[member_id][step] = secs
            if passed:
                facts.passed[member_id].add(step)
        for learner_id, *attempt in await s.execute(
                select(DrillAttempt.learner_id, DrillAttempt.step, DrillAttempt.drill, DrillAttempt.correct,
                       DrillAttempt.answers, DrillAttempt.correct_parts, DrillAttempt.created_at)
                .join(Member, f.by_member).where(*answered).order_by(DrillAttempt.id)):
            facts.attempts[learner_id].append(attempt)
        last = await s.execute(select(DrillAttempt.learner_id, func.max(DrillAttempt.created_at))
                               .join(Member, f.by_member).where(*answered).group_by(DrillAttempt.learner_id))
        facts.last_answer = {learner_id: at for learner_id, at in last if at is not None}
    return facts


def _progress(klass: Classroom, end: datetime | None, in_class: ColumnElement[bool]) -> Any:
    """(learner, step, done 1/0, first seen, completed at) of the class's members in its lesson, up to its end;
    the times only for steps done after joining (a rush is judged in the class)."""
    done: ColumnElement[bool] = StepProgress.completed_at.is_not(None)
    if end is not None:
        done = and_(done, StepProgress.completed_at <= end)
    in_class_done = and_(done, StepProgress.completed_at >= Member.joined_at)
    progress = (select(StepProgress.learner_id, StepProgress.step, case((done, 1), else_=0),
                       case((in_class_done, StepProgress.first_seen), else_=None),
                       case((in_class_done, StepProgress.completed_at), else_=None))
                .join(Member, Member.learner_id == StepProgress.learner_id)
                .where(in_class, StepProgress.lesson == klass.lesson))
    return progress.where(StepProgress.first_seen <= end) if end is not None else progress


def _rushed(first: datetime, completed: datetime) -> bool:
    return (completed - first).total_seconds() < RUSH_SECONDS


async def read_marks(db: Database, klass: Classroom) -> dict[int, dict[str, datetime]]:
    """Per member, the flags the instructor marked helped or dismissed, and when."""
    marks: dict[int, dict[str, datetime]] = defaultdict(dict)
    async with db.session() as session:
        s = await session.connection()
        for member_id, flag, at in await s.execute(
                select(FlagMark.member_id, FlagMark.flag, FlagMark.marked_at)
                .join(Member, Member.id == FlagMark.member_id).where(Member.class_id == klass.id)):
            marks[member_id][flag] = aware(at) or at
    return dict(marks)


@dataclass
class Learner:
    """One member's facts, derived once per change of theirs: what their row shows and what the stuck rule needs
    (everything but the clock)."""

    m: Any  # the member's MEMBER_COLUMNS
    done: frozenset[int]
    seen: frozenset[int]
    seconds: dict[int, float]
    drills: dict[str, tuple[int, int]]  # per drill key: answers, right ones
    struggles: dict[str, tuple[int, datetime]]  # per drill key: wrong answers in all and the latest, if wrong
    wrong_texts: dict[tuple[str, str], int]  # per drill key and wrong answer as typed: how often
    last: datetime  # last page view, widget move or answer (or joining)
    counted: datetime | None
    passed: frozenset[int] = frozenset()
    rushed: tuple[tuple[int, datetime], ...] = ()
    attempts: int = 0
    correct: int = 0
    changed_at: datetime | None = field(default=None, compare=False)  # the board's read that found this version

    def finished(self, steps: int) -> bool:
        """Every one of the lesson's `steps` steps is done or passed with the class (app/classroom/report.py's
        finished): they are through the lesson, no longer "here" on its last step."""
        return steps > 0 and all(n in self.done or n in self.passed for n in range(1, steps + 1))


def learner_of(m: Any, facts: ClassFacts, labels: dict[str, dict[str, str]] | None = None) -> Learner:
    tally: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    wrong: Counter[str] = Counter()
    last_wrong: dict[str, datetime | None] = {}
    texts: Counter[tuple[str, str]] = Counter()
    for step, drill, right, answers, parts, at in facts.attempts.get(m.learner_id, ()):
        key = f"{step}:{drill}"
        tally[key][0] += 1
        tally[key][1] += 1 if right else 0
        wrong[key] += 0 if right else 1
        last_wrong[key] = None if right else aware(at)
        if not right:
            texts[key, wrong_text(answers or {}, parts or {}, (labels or {}).get(drill))] += 1
    last = max(t for t in (aware(m.last_active), aware(facts.last_answer.get(m.learner_id)), aware(m.joined_at)) if t)
    return Learner(m=m, done=frozenset(facts.done.get(m.learner_id, ())),
                   seen=frozenset(facts.seen.get(m.learner_id, ())), seconds=dict(facts.seconds.get(m.id, {})),
                   drills={k: (n, r) for k, (n, r) in tally.items()},
                   struggles={k: (n, at) for k, n in wrong.items() if (at := last_wrong[k]) is not None},
                   wrong_texts=dict(texts), last=last, counted=aware(m.counted_at),
                   passed=frozenset(facts.passed.get(m.id, ())), rushed=tuple(facts.rushed.get(m.learner_id, ())),
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
    labels: dict[str, dict[str, str]] = field(default_factory=dict)  # per drill: its parts in words
    marks: dict[int, dict[str, datetime]] = field(default_factory=dict)  # per member: flags marked, when
    gone: dict[int, datetime] = field(default_factory=dict)  # rows removed or merged, when the board saw it
    version: int = -1  # the class's pace_version when the board was read whole
    steps: int = 0  # the lesson's steps: a learner through all of them is counted here on none

    @classmethod
    def of(cls, facts: ClassFacts, at: datetime | None = None, labels: dict[str, dict[str, str]] | None = None,
           steps: int = 0) -> Board:
        board = cls(labels=labels or {}, steps=steps)
        board.merge(facts, at or utcnow())
        return board

    def merge(self, facts: ClassFacts, at: datetime) -> None:
        """Take in the members read (all of them, or those changed) at `at`; a member read again unchanged keeps
        their entry, and so the time it last changed."""
        for m in facts.members:
            learner, old = learner_of(m, facts, self.labels), self.learners.get(m.id)
            if old == learner:
                continue
            if old is not None:
                self._count(old, -1)
            learner.changed_at = at
            self.learners[m.id] = learner
            self._count(learner, 1)

    def board_gone_since(self, now: datetime, keep: timedelta = timedelta(minutes=10)) -> dict[int, datetime]:
        """The rows this board saw go in the last `keep` (a page polling every 2 s has long taken them off)."""
        return {i: t for i, t in self.gone.items() if now - t < keep}

    def remark(self, marks: dict[int, dict[str, datetime]], at: datetime) -> None:
        """New marks from the instructor: the rows whose flags they hide or show again are sent to the page."""
        for member_id in set(marks) | set(self.marks):
            if marks.get(member_id) != self.marks.get(member_id) and member_id in self.learners:
                self.learners[member_id].changed_at = at
        self.marks = marks

    def _count(self, learner: Learner, sign: int) -> None:
        self.done.update({n: sign for n in learner.done})
        if learner.m.step and not learner.finished(self.steps):
            self.here[learner.m.step] += sign
        for (key, text), n in learner.wrong_texts.items():
            self.wrong[key][text] += sign * n
        for key, (n, right) in learner.drills.items():
            t = self.drills[key]
            t.attempts, t.correct, t.learners = t.attempts + sign * n, t.correct + sign * right, t.learners + sign

    def percentiles(self, outline: Outline, now: datetime, idle_seconds: float) -> dict[int, float | None]:
        """Per step, the 75th percentile of the active time of the active learners who finished it without
        rushing (kept for P75_REFRESH): learners who left, and clicks straight through, say nothing of its pace."""
        if self.p75_at is None or now - self.p75_at >= P75_REFRESH:
            finished: dict[int, list[float]] = defaultdict(list)
            for learner in self.learners.values():
                if (now - learner.last).total_seconds() >= idle_seconds:
                    continue
                rushed = {n for n, _ in learner.rushed}
                for n in learner.done - rushed:
                    finished[n].append(learner.seconds.get(n, 0.0))
            self.p75 = {s.number: percentile(finished[s.number], 0.75)
                        if len(finished[s.number]) >= P75_MIN_SAMPLES else None for s in outline.steps}
            self.p75_at = now
        return self.p75


async def build_dashboard(db: Database, klass: Classroom, now: datetime | None = None) -> Dashboard:
    """Everything the dashboard and cockpit show, in one read of the class."""
    now = now or utcnow()
    outline = outline_of(klass)
    board = Board.of(await read_class(db, klass), now, part_labels(outline), len(outline.steps))
    board.marks = await read_marks(db, klass)
    return assemble(klass, board, now)


def step_limit(expected_minutes: float, p75: float | None) -> float:
    """How long a step may take before a learner on it may be stuck: twice what it should take (the lesson's own
    minutes, or the class's active pace when slower), never under two minutes."""
    expected = max(expected_minutes * 60, p75 or 0.0)
    return max(STUCK_MIN_SECONDS, STUCK_FACTOR * expected)


@dataclass(frozen=True)
class Rule:
    """Who may need the instructor at a moment: each step's time limit, the idle limit, the end, the total, the
    hold, and the instructor's marks."""

    at: datetime
    limits: dict[int, float]
    p75: dict[int, float | None]
    idle_seconds: float
    open: bool
    total: int
    hold: int | None
    marks: dict[int, dict[str, datetime]] = field(default_factory=dict)

    def idle(self, learner: Learner) -> float:
        return max((self.at - learner.last).total_seconds(), 0.0)

    def left(self, idle: float) -> bool:
        return idle >= LEFT_FACTOR * self.idle_seconds

    def on_step(self, learner: Learner) -> float | None:
        """Active time on the current step: what was counted, and the time since, while short enough to count."""
        step, counted = learner.m.step, learner.counted
        if not step:
            return None
        live = active_seconds((self.at - counted).total_seconds(), int(self.idle_seconds // 60)) if counted else 0.0
        return learner.seconds.get(step, 0.0) + live

    def flags(self, learner: Learner, idle: float) -> list[Flag]:
        """Nobody in a closed class, who finished, or who left the room; a learner at or past a hold waits for the
        class, so their time on the step and their quiet are no sign of trouble (issue 13). A flag the instructor
        marked stays hidden until newer evidence."""
        if not self.open or self.total in learner.done or self.left(idle):
            return []
        waiting = self.hold is not None and (learner.m.step or 0) >= self.hold
        found = [*_wrong_flags(learner.struggles), *_rush_flags(learner.rushed)]
        if not waiting:
            found = [*_long_flags(learner, self, idle), *found, *_idle_flags(learner, idle, self.idle_seconds)]
        marked = self.marks.get(learner.m.id, {})
        return [f for f in found if f.key not in marked or f.since > marked[f.key]]

    def flag(self, learners: Iterable[Learner]) -> tuple[list[Flagged], int, list[int]]:
        """Who may need the instructor, most reasons and longest quiet first, how many are active and who left:
        one pass."""
        flagged, active, left = [], 0, []
        for x in learners:
            idle = self.idle(x)
            active += idle < self.idle_seconds
            if self.left(idle) and self.open:
                left.append(x.m.id)
            if found := self.flags(x, idle):
                flagged.append(Flagged(member_id=x.m.id, name=x.m.name, flags=found, idle_seconds=idle))
        flagged.sort(key=lambda f: (-len(f.flags), -f.idle_seconds))
        return flagged, active, left


def _long_flags(learner: Learner, rule: Rule, idle: float) -> list[Flag]:
    """Long on this step: only while active (a quiet learner gets the idle flag instead)."""
    step = learner.m.step
    on = rule.on_step(learner)
    if not step or on is None or idle >= rule.idle_seconds or on <= rule.limits.get(step, float("inf")):
        return []
    arrived = aware(learner.m.arrived_at) or learner.last
    p75 = rule.p75.get(step)
    pace = f"; active classmates took {_minutes(p75)}" if p75 is not None else ""
    return [Flag(key=f"long:{step}", kind="long", since=arrived,
                 text=f"long on step {step}: {_minutes(on)} active, against about {_minutes(rule.limits[step] / 2)} "
                      f"expected{pace}")]


def _wrong_flags(struggles: dict[str, tuple[int, datetime]]) -> list[Flag]:
    return [Flag(key=f"wrong:{key}", kind="wrong", since=at,
                 text=f"{wrong} wrong answers on the drill of step {key.split(':')[0]}, the latest too")
            for key, (wrong, at) in sorted(struggles.items()) if wrong >= STUCK_WRONG]


def _idle_flags(learner: Learner, idle: float, limit: float) -> list[Flag]:
    if idle < limit:
        return []
    return [Flag(key="idle", kind="idle", since=learner.last, text=f"no activity for {_minutes(idle)}")]


def _rush_flags(rushed: tuple[tuple[int, datetime], ...]) -> list[Flag]:
    if len(rushed) < RUSH_STEPS:
        return []
    steps = sorted(n for n, _ in rushed)
    return [Flag(key="rushing", kind="rushing", since=max(at for _, at in rushed),
                 text=f"clicked Done on {len(steps)} steps within a second of opening each ({_steps_text(steps)})")]


def _steps_text(steps: list[int]) -> str:
    """[2, 3, 4, 5, 9] -> 'steps 2–5, 9'."""
    runs: list[list[int]] = []
    for n in steps:
        if runs and n == runs[-1][-1] + 1:
            runs[-1].append(n)
        else:
            runs.append([n])
    return "steps " + ", ".join(f"{r[0]}–{r[-1]}" if len(r) > 2 else ", ".join(map(str, r)) for r in runs)


def assemble(klass: Classroom, board: Board, now: datetime, rows_for: Collection[int] | None = None,
             stamp: str = "", since: datetime | None = None) -> Dashboard:
    """The dashboard at `now`: counts and the flags from every learner (a light pass), step columns and
    drills from the board's counts, and whole rows for `rows_for` (None: everyone, in name order)."""
    info, outline = class_info(klass, now), outline_of(klass)
    end = horizon(klass)
    at = min(now, end) if end else now
    idle_seconds = klass.idle_minutes * 60
    p75 = board.percentiles(outline, at, idle_seconds)
    hold = info.pace_step if info.pace_mode == "hold" or (info.pace_mode == "bring" and info.pace_hold) else None
    rule = Rule(at=at, limits={s.number: step_limit(s.minutes, p75.get(s.number)) for s in outline.steps}, p75=p75,
                idle_seconds=idle_seconds, open=info.open, total=len(outline.steps), hold=hold, marks=board.marks)
    flagged, active, left = rule.flag(board.learners.values())
    chosen = sorted(board.learners.values(), key=lambda x: x.m.name_key) if rows_for is None else [
        board.learners[i] for i in rows_for if i in board.learners]
    drills = drill_stats(outline, {k: t for k, t in board.drills.items() if t.attempts},
                         {k: +texts for k, texts in board.wrong.items()}, info.revealed)  # + drops zero counts
    joined = len(board.learners)
    answers = sum(d.attempts for d in drills)
    reached = sum(1 for x in board.learners.values() if x.m.moved_version >= klass.bring_version) \
        if info.pace_mode == "bring" else 0
    counts = Counts(joined=joined, active=active, finished=board.done.get(rule.total, 0),
                    stuck=sum(1 for f in flagged if f.stuck), rushing=sum(1 for f in flagged if not f.stuck),
                    left=len(left), attempts=answers, reached=reached,
                    correct_share=sum(d.correct for d in drills) / answers if answers else None)
    steps = step_columns(outline, board.done, board.here, joined, rule.p75)
    gone = [i for i, t in board.gone.items() if since is None or t > since] if rows_for is not None else []
    return Dashboard.model_construct(
        info=info, counts=counts, steps=steps, rows=[_row(x, rule, outline) for x in chosen], drills=drills,
        stuck=flagged, generated_at=now, stamp=stamp, partial=rows_for is not None, gone=gone, left_ids=left)


def _row(learner: Learner, rule: Rule, outline: Outline) -> LearnerRow:
    m = learner.m
    finished = learner.finished(rule.total)
    here = None if finished else m.step  # a finished learner's last step reads done, not "here now"
    cells = [step_state(done=s.number in learner.done, seen=s.number in learner.seen, drill=bool(s.drills),
                        current=s.number == here, passed=s.number in learner.passed) for s in outline.steps]
    on, idle = rule.on_step(learner), rule.idle(learner)
    return LearnerRow.model_construct(
        member_id=m.id, name=m.name, name_key=m.name_key, cells=cells, step=m.step, done=len(learner.done),
        on_step_seconds=on, idle_seconds=idle, on_step_text=_minutes(on) if on is not None else "",
        idle_text="just now" if idle < 10 else f"{_minutes(idle)} ago", attempts=learner.attempts,
        correct=learner.correct, flags=rule.flags(learner, idle),
        finished=finished, last_at=learner.last, on_base=learner.seconds.get(m.step or 0, 0.0),
        counted_at=learner.counted, left=rule.open and rule.left(idle),
        passed=len(learner.passed - learner.done))


def _minutes(seconds: float) -> str:
    """42 s, 7 min, 2.5 h: the precision an instructor glancing at a screen needs."""
    if seconds >= 90 * 60:
        return f"{seconds / 3600:.1f} h"
    return f"{seconds / 60:.0f} min" if seconds >= 90 else f"{seconds:.0f} s"
