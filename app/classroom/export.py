"""A class's data as CSV (learners, attempts) and JSON, safe to open in a spreadsheet (the instructor's export
pages and `gpu-classroom export`)."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import AsyncIterator, Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from app.classroom.class_models import Classroom, Member
from app.classroom.db import Database
from app.classroom.figures import class_info, outline_of
from app.classroom.outline import Outline
from app.classroom.report import AttemptLine, LearnerReport, learner_report

FORMULA_START = ("=", "+", "-", "@", "\t", "\r", "\n", "＝", "＋", "－", "＠")
FORMATS = ("learners", "attempts", "json")  # and "report", the Markdown class report (app/pages/class_report.py)


def cell(value: Any) -> Any:
    """A CSV cell that a spreadsheet shows as text: a leading = + - @ (or tab, CR) is defused with a quote."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int | float):
        return value
    if isinstance(value, datetime):
        return value.isoformat(timespec="seconds")
    text = str(value)
    return "'" + text if text.lstrip(" ").startswith(FORMULA_START) else text


def _csv(header: list[str], rows: list[list[Any]]) -> str:
    return _csv_rows([header, *rows])


def _csv_rows(rows: list[list[Any]]) -> str:
    out = io.StringIO()
    csv.writer(out, lineterminator="\r\n").writerows([[cell(v) for v in row] for row in rows])
    return out.getvalue()


async def members_of(db: Database, klass: Classroom) -> list[Member]:
    """Every member, in name order."""
    from sqlalchemy import select

    async with db.session() as s:
        return list((await s.execute(select(Member).where(Member.class_id == klass.id)
                                     .order_by(Member.name_key))).scalars())


async def reports(db: Database, klass: Classroom) -> list[LearnerReport]:
    """Every member's report, in name order."""
    return [await learner_report(db, klass, m) for m in await members_of(db, klass)]


ATTEMPT_HEADER = ["name", "at", "step", "drill", "question", "question_text", "part", "part_prompt", "unit", "typed",
                  "value", "expected", "part_correct", "attempt_correct", "score_pct", "mistake", "mistake_name"]


@dataclass(frozen=True)
class PartText:
    """One part of an attempt in words and figures: what it asked, in which unit, the learner's answer as read and
    the expected value (both in that unit), and the mistake this part's answer shows."""

    prompt: str = ""
    unit: str = ""
    value: float | str | None = None
    expected: float | str | None = None
    mistake: str = ""
    mistake_name: str = ""


@dataclass(frozen=True)
class AttemptText:
    """An attempt in words: the question it answered and each of its parts."""

    question: str = ""
    parts: Mapping[str, PartText] = field(default_factory=dict)


# Puts an attempt into words (the drills know their questions; this layer does not): given by the web layer.
Describe = Callable[[AttemptLine], AttemptText]


def no_words(_: AttemptLine) -> AttemptText:
    """Ids only, for a caller without the lessons."""
    return AttemptText()


async def stream(db: Database, klass: Classroom, what: str, describe: Describe = no_words) -> AsyncIterator[str]:
    """attempts.csv and class.json learner by learner, so the first bytes leave before the last learner is
    read and no export holds a whole class in memory; learners.csv at once (its header names every drill any
    learner tried)."""
    if what == "learners":
        yield render(klass, what, await reports(db, klass))
        return
    members = await members_of(db, klass)
    if what == "attempts":
        yield _csv(ATTEMPT_HEADER, [])
        for m in members:
            yield _csv_rows(_attempt_rows(await learner_report(db, klass, m), describe))
        return
    outline = outline_of(klass)
    head = json.dumps({"class": class_info(klass).model_dump(mode="json"), "steps": _steps(outline)},
                      ensure_ascii=False, indent=1)
    yield head[:-2] + ',\n "learners": ['
    for n, m in enumerate(members):
        person = (await learner_report(db, klass, m)).model_dump(mode="json", exclude={"info"})
        yield ("," if n else "") + "\n  " + json.dumps(person, ensure_ascii=False)
    yield "\n ]\n}"


def pct(share: float | None) -> int | str:
    """A share as the pages show it: a whole percentage (0.333 -> 33), blank for none."""
    return "" if share is None else round(100 * share)


def figure(value: float | str | None) -> float | str:
    """A value in its unit, to six significant digits (what the drill showed, without float noise)."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    return float(f"{value:.6g}")


def learners_csv(outline: Outline, people: list[LearnerReport]) -> str:
    """One row per learner: progress (steps done, passed with the class, finished), active time per step
    (seconds), and per drill the attempts, right answers, first-try and best scores (whole %) and mastery."""
    drills = sorted({(d.step, d.drill) for p in people for d in p.drills}
                    | {(s.number, d) for s in outline.steps for d in s.drills})
    header = ["name", "joined_at", "current_step", "steps_done", "steps_passed", "finished", "drills_mastered",
              "seconds_total"]
    header += [f"step_{s.number}_done" for s in outline.steps] + [f"step_{s.number}_seconds" for s in outline.steps]
    header += [f"step_{s.number}_state" for s in outline.steps]  # done mastered passed skipped current seen todo
    for step, drill in drills:
        header += [f"{drill}@{step}_{k}" for k in ("attempts", "correct", "first_try_pct", "best_score_pct",
                                                    "mastered")]
    rows = []
    for p in people:
        row: list[Any] = [p.name, p.joined_at, p.step, p.done, p.passed, p.finished, p.mastered, round(p.seconds, 1)]
        row += [bool(s.done_at) for s in p.steps] + [round(s.seconds, 1) for s in p.steps]
        row += [s.state for s in p.steps]
        mine = {(d.step, d.drill): d for d in p.drills}
        for key in drills:
            d = mine.get(key)
            row += [d.attempts, d.correct, pct(d.first_try_share), pct(d.best_score), d.mastered] if d else \
                [0, 0, "", "", False]
        rows.append(row)
    return _csv(header, rows)


def attempts_csv(people: list[LearnerReport], describe: Describe = no_words) -> str:
    """One row per part of every attempt, exactly as typed, with the question and the mistake in words."""
    return _csv(ATTEMPT_HEADER, [row for p in people for row in _attempt_rows(p, describe)])


def _attempt_rows(p: LearnerReport, describe: Describe) -> list[list[Any]]:
    """A row per part: the question numbered from 1 as the page said it, the answer as typed and as read, the
    expected value in the same unit, and the mistake of this part alone."""
    rows = []
    for a in p.attempts:
        words = describe(a)
        wrong = [part for part, ok in a.correct_parts.items() if not ok]
        for part, typed in (a.answers or {"": ""}).items():
            w = words.parts.get(part, PartText())
            # without the drill to grade it again, the attempt's mistake belongs to its only wrong part, if one
            mistake = w.mistake if words.parts else (a.mistake or "" if wrong == [part] else "")
            value = w.value if w.value is not None else a.parsed.get(part)
            rows.append([p.name, a.at, a.step, a.drill, p.question_number(a), words.question, part, w.prompt, w.unit,
                         typed, figure(value), figure(w.expected), a.correct_parts.get(part), a.correct,
                         pct(a.score), mistake, w.mistake_name])
    return rows


def _steps(outline: Outline) -> list[dict[str, Any]]:
    return [{"number": s.number, "title": s.title, "drills": list(s.drills)} for s in outline.steps]


def everything_json(klass: Classroom, outline: Outline, people: list[LearnerReport]) -> str:
    """Everything about the class (never its key or key hash) as JSON."""
    data = {
        "class": class_info(klass).model_dump(mode="json"),
        "steps": _steps(outline),
        "learners": [p.model_dump(mode="json", exclude={"info"}) for p in people],
    }
    return json.dumps(data, ensure_ascii=False, indent=1)


async def export(db: Database, klass: Classroom, what: str, describe: Describe = no_words) -> str:
    """One of FORMATS as text."""
    return render(klass, what, await reports(db, klass), describe)


def render(klass: Classroom, what: str, people: list[LearnerReport], describe: Describe = no_words) -> str:
    """One of FORMATS as text, from the reports already read (no database: a worker thread may run it)."""
    outline = outline_of(klass)
    if what == "learners":
        return learners_csv(outline, people)
    if what == "attempts":
        return attempts_csv(people, describe)
    return everything_json(klass, outline, people)
