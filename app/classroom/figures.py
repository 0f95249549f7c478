"""What every instructor view of a class shares: the class itself, which rows count for it, the step columns and
the drill statistics (the dashboard and the projector compute them alike)."""

from __future__ import annotations

import json
import math
from collections import Counter, defaultdict
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from pydantic import BaseModel, Field
from sqlalchemy import ColumnElement, Select, Text, cast, func, not_, select

from app.classroom.class_models import Classroom, Member
from app.classroom.models import DrillAttempt, utcnow
from app.classroom.outline import Outline
from app.classroom.seat import aware, horizon, is_open

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
    pace_hold: bool = Field(default=False, description="A bring that also holds at its step")
    idle_minutes: int
    revealed: list[str]
    answers_shown: dict[str, int] = Field(default_factory=dict, description="Drill key: seed of the answer on show")
    message: str = Field(default="", description="The message to the room, while the class is open")
    message_at: datetime | None = None
    timer_key: str | None = Field(default=None, description="The drill with a countdown on the projector")
    timer_ends_at: datetime | None = None
    ended_by_time: bool = Field(default=False, description="Closed because its end time passed, not by a click")


class StepColumn(BaseModel):
    """One step of the lesson and where the class stands on it."""

    number: int
    title: str
    on_step: int = Field(default=0, description="Learners whose current step this is")
    done: int = 0
    done_width: float = Field(default=0.0, description="done / joined, 0 to 100, for a bar")
    on_width: float = 0.0
    p75_seconds: float | None = None
    note: str = Field(default="", description="The lesson's note for the instructor on this step")


class WrongAnswer(BaseModel):
    text: str = Field(description="Exactly as typed (wrong parts only)")
    count: int
    width: float = Field(description="count / attempts, 0 to 100")


class DrillStats(BaseModel):
    key: str = Field(description="'step:drill'")
    step: int
    drill: str
    step_title: str
    description: str = Field(default="", description="What the drill asks, in a line (its lesson says)")
    attempts: int = 0
    learners: int = 0
    correct: int = 0
    correct_share: float | None = None
    correct_width: float = 0.0
    wrong: list[WrongAnswer] = Field(default_factory=list)
    other_wrong: int = 0
    other_width: float = 0.0
    revealed: bool = False


def outline_of(klass: Classroom) -> Outline:
    return Outline.from_json(klass.lesson, klass.outline)


def class_info(klass: Classroom, now: datetime | None = None) -> ClassInfo:
    now = now or utcnow()
    outline = outline_of(klass)
    open_ = is_open(klass, now)
    ends = aware(klass.ends_at)
    timer_ends = aware(klass.timer_ends_at)
    return ClassInfo(
        code=klass.code, title=klass.title, lesson=klass.lesson, lesson_title=outline.title, open=open_,
        created_at=aware(klass.created_at) or now, ends_at=ends, closed_at=aware(klass.closed_at),
        ends_in_seconds=(ends - now).total_seconds() if ends and open_ else None,
        pace_mode=klass.pace_mode if open_ else "free", pace_step=klass.pace_step, pace_move=klass.pace_move,
        pace_hold=bool(klass.pace_hold), idle_minutes=klass.idle_minutes, revealed=list(klass.revealed or []),
        answers_shown={str(k): int(v) for k, v in (klass.answers_shown or {}).items()},
        message=(klass.message or "") if open_ else "", message_at=aware(klass.message_at),
        timer_key=klass.timer_key if open_ and timer_ends and timer_ends > now else None,
        timer_ends_at=timer_ends if open_ and timer_ends and timer_ends > now else None,
        ended_by_time=not open_ and klass.closed_at is None,
    )


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


def wrong_text(answers: dict[str, Any], correct_parts: dict[str, Any], labels: dict[str, str] | None = None) -> str:
    """The wrong parts of an answer, as typed, each named by what it asks: '14' or 'Bytes per parameter: 14;
    Fewest GPUs: 2' (a class made before parts had labels names them by id, 'bytes per parameter')."""
    parts = [p for p, ok in (correct_parts or {}).items() if not ok] or list(answers or {})
    typed = [(p, str((answers or {}).get(p, "")).strip()) for p in parts]
    if len(typed) == 1:
        return typed[0][1] or "(blank)"
    named = labels or {}
    return "; ".join(f"{named.get(p) or p.replace('_', ' ')}: {v or '(blank)'}" for p, v in typed) or "(blank)"


def part_labels(outline: Outline) -> dict[str, dict[str, str]]:
    """Per drill, each part's words, as the class keeps them."""
    return outline.labels


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


def wrong_counts(rows: list[Any], labels: dict[str, dict[str, str]] | None = None) -> dict[str, Counter[str]]:
    """Per drill key, the wrong answers as typed and how often, from ClassFilter.wrong_answers's rows."""
    wrong: dict[str, Counter[str]] = defaultdict(Counter)
    for step, drill, answers, parts, count in rows:
        text = wrong_text(json.loads(answers or "{}"), json.loads(parts or "{}"), (labels or {}).get(drill))
        wrong[f"{step}:{drill}"][text] += count
    return wrong


def drill_stats(outline: Outline, tallies: dict[str, DrillTally], wrong: dict[str, Counter[str]],
                 revealed: list[str]) -> list[DrillStats]:
    """Per drill: answers, right share, the commonest wrong answers as typed (`wrong`: per drill key, each text
    and how often)."""
    titles = {s.number: s.title for s in outline.steps}
    about = {(s.number, d): text for s in outline.steps for d, text in s.about}
    stats: dict[str, DrillStats] = {}

    def stat(step: int, drill: str) -> DrillStats:
        key = f"{step}:{drill}"
        if key not in stats:
            stats[key] = DrillStats(key=key, step=step, drill=drill, step_title=titles.get(step, ""),
                                    description=about.get((step, drill), ""), revealed=key in revealed)
        return stats[key]

    for s in outline.steps:
        for d in s.drills:
            stat(s.number, d)
    for key, t in tallies.items():
        step, drill = key.split(":", 1)
        st = stat(int(step), drill)
        st.attempts, st.correct, st.learners = t.attempts, t.correct, t.learners
    for key, st in stats.items():
        if st.attempts:
            st.correct_share = st.correct / st.attempts
            st.correct_width = 100 * st.correct / st.attempts
            # the commonest first, ties in the order of the text (the same however the counts were gathered)
            top = sorted(wrong.get(key, Counter()).items(), key=lambda tc: (-tc[1], tc[0]))[:TOP_WRONG]
            st.wrong = [WrongAnswer(text=t, count=c, width=100 * c / st.attempts) for t, c in top]
            st.other_wrong = st.attempts - st.correct - sum(c for _, c in top)
            st.other_width = 100 * st.other_wrong / st.attempts
    return sorted(stats.values(), key=lambda d: (d.step, d.drill))


def step_columns(outline: Outline, done: dict[int, int], here: dict[int, int], joined: int,
                 p75: dict[int, float | None] | None = None) -> list[StepColumn]:
    """Per step: how many are done and here now, as counts and as bar widths of the class."""
    def width(n: int) -> float:
        return 100 * n / joined if joined else 0.0

    return [StepColumn.model_construct(
        number=s.number, title=s.title, on_step=here.get(s.number, 0), done=done.get(s.number, 0),
        done_width=width(done.get(s.number, 0)), on_width=width(here.get(s.number, 0)),
        p75_seconds=(p75 or {}).get(s.number), note=s.note) for s in outline.steps]
