"""The class report: a Markdown page an instructor pastes into a course page, per step (done, passed with the class,
median active time) and per drill (answers, share right, first tries, mastery, right by part, the commonest
mistakes in words). It names no learner. The dashboard's export and `gpu-classroom export --what report` both
write it from here."""

from __future__ import annotations

import asyncio
import statistics

from pydantic import BaseModel, Field

from app.classroom import export, room
from app.classroom.class_models import Classroom
from app.classroom.db import Database
from app.classroom.figures import ClassInfo, class_info, outline_of
from app.classroom.models import utcnow
from app.classroom.report import LearnerReport
from app.drills.room import RoomSummary
from app.lessons.model import Lesson
from app.pages.class_drills import room_summaries
from app.pages.class_pages import duration

REPORT_ANSWERS = 100_000  # answers a drill's summary reads: every answer of any real class


class StepLine(BaseModel):
    number: int
    title: str
    done: int
    passed: int
    median_text: str = Field(description="Median active time of those who spent any, as a person says it")


class DrillLine(BaseModel):
    key: str
    step: int
    title: str
    answers: int
    learners: int
    right_pct: int | None
    questions: int
    first_try_pct: int | None
    mastered: int
    summary: RoomSummary | None


class ClassReport(BaseModel):
    """Everything the Markdown report writes."""

    info: ClassInfo
    written_at: str
    joined: int
    finished: int
    active_text: str = Field(description="Median active time in the lesson of those who joined")
    steps: list[StepLine]
    drills: list[DrillLine]


async def class_report(db: Database, klass: Classroom, lessons: list[Lesson]) -> ClassReport:
    """The report's figures, from the same reports the CSV exports write (so the figures agree)."""
    people = await export.reports(db, klass)
    outline = outline_of(klass)
    keys = [f"{s.number}:{d}" for s in outline.steps for d in s.drills]
    answers = await room.answers_of(db, klass, keys, limit=REPORT_ANSWERS)
    summaries = await asyncio.to_thread(room_summaries, lessons, answers)
    steps = [StepLine(number=s.number, title=s.title, done=sum(1 for p in people if p.steps[i].done_at),
                      passed=sum(1 for p in people if p.steps[i].state == "passed"),
                      median_text=_median([p.steps[i].seconds for p in people]))
             for i, s in enumerate(outline.steps)]
    drills = [_drill_line(key, outline.steps[int(key.split(":")[0]) - 1].title, people, summaries.get(key))
              for key in keys if 0 < int(key.split(":")[0]) <= len(outline.steps)]
    return ClassReport(info=class_info(klass), written_at=utcnow().strftime("%Y-%m-%d %H:%M UTC"),
                       joined=len(people), finished=sum(1 for p in people if p.finished),
                       active_text=_median([p.seconds for p in people]), steps=steps, drills=drills)


def _median(seconds: list[float]) -> str:
    spent = [s for s in seconds if s > 0]
    return duration(statistics.median(spent)) if spent else "–"


def _drill_line(key: str, title: str, people: list[LearnerReport], summary: RoomSummary | None) -> DrillLine:
    step, _, drill = key.partition(":")
    lines = [d for p in people for d in p.drills if d.step == int(step) and d.drill == drill]
    answers = sum(d.attempts for d in lines)
    questions = sum(d.questions for d in lines)
    return DrillLine(key=key, step=int(step), title=summary.title if summary else title, answers=answers,
                     learners=sum(1 for d in lines if d.attempts),
                     right_pct=round(100 * sum(d.correct for d in lines) / answers) if answers else None,
                     questions=questions,
                     first_try_pct=round(100 * sum(d.first_try for d in lines) / questions) if questions else None,
                     mastered=sum(1 for d in lines if d.mastered), summary=summary)

