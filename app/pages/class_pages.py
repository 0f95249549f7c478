"""The class pages' typed contexts: one described pydantic model per page, built here from the classroom's services
and handed to its template as `page` (the routers in app/web/class_*.py parse, call one builder, render).

Times are UTC on the server; each is written as a <time> element that static/class-times.js shows in the
viewer's own time zone (with JavaScript off, the UTC text stays)."""

from __future__ import annotations

import asyncio
import math
from datetime import datetime
from typing import Any
from urllib.parse import urlencode

from pydantic import BaseModel, ConfigDict, Field

from app.classroom import classes, live, owners, projection, room
from app.classroom.class_models import Classroom, Instructor, Member
from app.classroom.dashboard import Dashboard
from app.classroom.db import Database
from app.classroom.figures import ClassInfo, DrillStats, class_info
from app.classroom.models import utcnow
from app.classroom.projection import Projection
from app.classroom.report import LearnerReport, learner_report
from app.classroom.seat import is_open
from app.drills.room import MistakeTally, RoomSummary
from app.lessons.model import Lesson
from app.pages.class_drills import room_summaries

ENDS = [("", "No end time"), ("1", "In 1 hour"), ("2", "In 2 hours"), ("3", "In 3 hours"), ("8", "In 8 hours"),
        ("24", "In 1 day"), ("168", "In 1 week")]
STATES = {"done": "done", "mastered": "drill mastered", "skipped": "drill skipped", "current": "here now",
          "seen": "opened", "todo": "not reached", "passed": "passed with the class"}


def duration(seconds: float | None) -> str:
    """A time on task as a person says it, one way everywhere: 45 s, 2 min 11 s, 1 h 05 min."""
    if seconds is None:
        return ""
    total = round(seconds)
    if total < 60:
        return f"{total} s"
    if total < 3600:
        minutes, secs = divmod(total, 60)
        return f"{minutes} min {secs:02d} s" if secs else f"{minutes} min"
    hours, minutes = divmod(round(total / 60), 60)
    return f"{hours} h {minutes:02d} min"


def until(moment: datetime | None, now: datetime | None = None) -> str:
    """How long until a moment, rounded down to what a clock shows: 'in 2 h 59 min', 'in 4 min'."""
    if moment is None:
        return ""
    left = max((moment - (now or utcnow())).total_seconds(), 0.0)
    minutes = math.floor(left / 60)
    if minutes < 1:
        return "in under a minute"
    hours, minutes = divmod(minutes, 60)
    return f"in {hours} h {minutes:02d} min" if hours else f"in {minutes} min"


class Page(BaseModel):
    model_config = ConfigDict(arbitrary_types_allowed=True)


# --- /teach -----------------------------------------------------------------------------------------------


class LessonChoice(BaseModel):
    slug: str
    title: str
    steps: int
    minutes: int

    @property
    def label(self) -> str:
        return f"{self.title} ({self.steps} steps, about {self.minutes} min)"


class ClassLine(BaseModel):
    """One of the instructor's classes, as /teach lists it."""

    code: str
    title: str
    lesson_title: str
    created_at: datetime
    open: bool
    learners: int
    state: str = Field(description="'open', 'open until …' or 'closed'")


class TeachPage(Page):
    """/teach: the form that creates a class, and the classes made with this browser's instructor key."""

    lessons: list[LessonChoice] = Field(description="The lessons a class can run, with steps and minutes")
    ends: list[tuple[str, str]] = Field(default=ENDS, description="The choices of when a new class ends (value, label)")
    values: dict[str, str] = Field(default_factory=dict, description="What a refused form had typed, by field")
    errors: dict[str, str] = Field(default_factory=dict, description="A refused form's messages, by field")
    admin: bool = Field(default=False, description="The server asks for its admin token")
    classes: list[ClassLine] = Field(default_factory=list, description="The classes this browser's key made")
    instructor: bool = Field(default=False, description="This browser holds an instructor key")
    link: str = Field(default="", description="The instructor link, only in the answer to asking for it")
    replaced: bool = Field(default=False, description="The link was just replaced: old ones stopped working")

    @property
    def lesson_options(self) -> list[tuple[str, str]]:
        return [(le.slug, le.label) for le in self.lessons]


def lesson_choices(lessons: list[Lesson]) -> list[LessonChoice]:
    return [LessonChoice(slug=le.slug, title=le.title, steps=len(le.steps), minutes=round(le.minutes))
            for le in lessons]


async def teach_page(db: Database, lessons: list[Lesson], instructor: Instructor | None, **extra: Any) -> TeachPage:
    """The /teach page: its form, and the instructor's classes (newest first) with how many joined each."""
    lines = []
    if instructor is not None:
        mine = await owners.classes_of(db, instructor)
        joined = await classes.member_counts(db, [k.id for k in mine])
        now = utcnow()
        for k in mine:
            info = class_info(k, now)
            state = "closed" if not info.open else (f"open, ends {until(info.ends_at, now)}" if info.ends_at
                                                    else "open")
            lines.append(ClassLine(code=k.code, title=k.title, lesson_title=info.lesson_title,
                                   created_at=info.created_at, open=info.open, learners=joined.get(k.id, 0),
                                   state=state))
    return TeachPage(lessons=lesson_choices(lessons), classes=lines, instructor=instructor is not None, **extra)


class OpenLinkPage(Page):
    """/teach/me?key=…: the classes an instructor link opens, before this browser keeps its key."""

    teach: TeachPage = Field(description="The /teach page the link's classes will be listed on")
    key: str = Field(description="The key the confirming form sends back")
    mine: bool = Field(description="This browser lists classes of its own, which will join this list")


class CreatedPage(Page):
    """A new class's code for the room and the instructor's private links."""

    info: ClassInfo = Field(description="The new class: code, title, lesson, settings")
    links: dict[str, str] = Field(description="dashboard, projector, cockpit (with the key) and join")
    cockpit_qr: str = Field(description="SVG of the cockpit link, for the instructor's phone")


# --- joining and a learner's own page ----------------------------------------------------------------------


class JoinPage(Page):
    """The join form; with a known open class's code, its title, so a learner knows they are in the right room."""

    values: dict[str, str] = Field(description="What the form holds: code, name, resume code")
    errors: dict[str, str] = Field(default_factory=dict, description="A refused join's messages, by field")
    class_title: str = Field(default="", description="The open class the code names, empty for none")
    resume_open: bool = Field(default=False, description="Show the resume code field open (a taken name, a link)")


async def join_page(db: Database, values: dict[str, str], errors: dict[str, str] | None = None) -> JoinPage:
    klass = await classes.get_class(db, values.get("code", "")) if values.get("code") else None
    title = klass.title if klass is not None and is_open(klass) else ""
    errors = errors or {}
    return JoinPage(values=values, errors=errors, class_title=title,
                    resume_open=bool(values.get("resume") or "resume" in errors or "already called" in
                                     errors.get("name", "")))


class StepRow(BaseModel):
    """A step of a learner's report, as the page writes it."""

    number: int
    title: str
    state: str
    state_text: str
    time_text: str
    done_at: datetime | None


class ReportView(Page):
    """A learner's report with its texts: steps, counts and attempts."""

    r: LearnerReport = Field(description="The learner's report: counts, time, attempts")
    steps: list[StepRow] = Field(description="Each step with its state and time, in words")

    @property
    def progress_text(self) -> str:
        """'18 of 20 steps done, 1 passed with the class'."""
        text = f"{self.r.done} of {self.r.counted_steps} steps done"
        return text + (f", {self.r.passed} passed with the class" if self.r.passed else "")

    @property
    def time_text(self) -> str:
        return duration(self.r.seconds)


def report_view(r: LearnerReport) -> ReportView:
    steps = [StepRow(number=s.number, title=s.title, state=s.state, state_text=STATES.get(s.state, s.state),
                     time_text=duration(s.seconds) if s.seconds else "", done_at=s.done_at) for s in r.steps]
    return ReportView(r=r, steps=steps)


class MyClassPage(Page):
    """/class/CODE: a learner's own steps and answers in their class, their resume code, and where to go on."""

    view: ReportView = Field(description="Their steps and answers, in words")
    welcome: bool = Field(description="They came back through the join page")
    resume_code: str = Field(description="The short code that brings them back on another device")
    resume_link: str = Field(description="The join address with their name and resume code filled in")
    continue_step: int | None = Field(description="The first step not done yet; None once every step is")


async def my_class_page(db: Database, klass: Classroom, member: Member, secret: str, base: str, welcome: bool
                        ) -> MyClassPage:
    r = await learner_report(db, klass, member)
    code = classes.resume_code(secret, member)
    return MyClassPage(view=report_view(r), welcome=welcome, resume_code=code,
                       resume_link=resume_link(base, klass, member, code),
                       continue_step=None if r.finished else next(
                           (s.number for s in r.steps if not s.done_at and s.state != "passed"), r.step or 1))


def resume_link(base: str, klass: Classroom, member: Member, code: str) -> str:
    return f"{base}/join/{klass.code}?" + urlencode({"name": member.name, "resume": code})


# --- the instructor's views --------------------------------------------------------------------------------


class ClassHead(Page):
    """What every instructor view says of the class itself, in words."""

    info: ClassInfo = Field(description="The class: code, title, lesson, pacing, open or closed")
    join_url: str = Field(description="The address learners join at (PUBLIC_URL's when set)")
    ends_text: str = Field(default="", description="'in 2 h 59 min' while an end time is ahead")
    timer_text: str = Field(default="", description="'Step 7: 1 min 40 s left' while a drill timer runs")
    timer_label: str = Field(default="", description="'Step 7:', what the page's countdown keeps in front")


def class_head(info: ClassInfo, join_url: str, now: datetime | None = None) -> ClassHead:
    now = now or utcnow()
    timer, label = "", ""
    if info.timer_key and info.timer_ends_at:
        left = max((info.timer_ends_at - now).total_seconds(), 0.0)
        label = f"Step {info.timer_key.split(':')[0]}:"
        timer = f"{label} {duration(left)} left"
    return ClassHead(info=info, join_url=join_url, ends_text=until(info.ends_at, now) if info.open else "",
                     timer_text=timer, timer_label=label)


class DashboardPage(Page):
    """/teach/CODE: learners × steps, flags, drills, pacing, the room's message and timer, roster and exports."""

    head: ClassHead = Field(description="The class in words: title, join address, end, timer")
    d: Dashboard = Field(description="Learners × steps, flags, drills and counts, from one read of the class")
    errors: dict[str, str] = Field(default_factory=dict, description="A refused control's message, by field")
    values: dict[str, str] = Field(default_factory=dict, description="What the refused control had typed")
    open_panel: str = Field(default="", description="A control to show unfolded: 'delete' after a wrong code")


class CockpitPage(Page):
    """/teach/CODE/cockpit: the same data laid out for a phone."""

    head: ClassHead = Field(description="The class in words: title, join address, end, timer")
    d: Dashboard = Field(description="The dashboard's data: flags, drills, pacing")
    errors: dict[str, str] = Field(default_factory=dict, description="A refused control's message, by field")
    values: dict[str, str] = Field(default_factory=dict, description="What the refused control had typed")


async def dashboard_page(db: Database, klass: Classroom, join_url: str, since: str = "", rows: bool = True,
                         **extra: Any) -> DashboardPage:
    d = await live.dashboard(db, klass, since, rows=rows)
    return DashboardPage(head=class_head(d.info, join_url, d.generated_at), d=d, **extra)


async def cockpit_page(db: Database, klass: Classroom, join_url: str, since: str = "", **extra: Any) -> CockpitPage:
    d = await live.dashboard(db, klass, since, rows=False)
    return CockpitPage(head=class_head(d.info, join_url, d.generated_at), d=d, **extra)


class Shown(Page):
    """A revealed drill as the projector lays it out: its figures, its answers summed up, and the mistakes there
    is room for."""

    x: DrillStats = Field(description="The drill's counts: learners, attempts, first-try and overall right")
    r: RoomSummary | None = Field(description="Its answers summed up for the room, once anyone answered")
    mistakes: list[MistakeTally] = Field(description="The commonest classic mistakes there is room for")
    other_wrong: int = Field(description="Wrong parts that match no classic mistake")
    timer: str = Field(default="", description="Its countdown, when the instructor set one")


class ProjectorPage(Page):
    """/teach/CODE/projector: for the room, no names. While a drill is revealed the join panel steps aside to one
    line; the two latest reveals fill the screen (the one whose answer is shown fills it alone), the others take a
    line each, so the page never scrolls at 1920×1080 or 1280×720."""

    head: ClassHead = Field(description="The class in words: title, join address, end, timer")
    d: Projection = Field(description="What the room may see: steps, pace, revealed drills, no names")
    reveals: dict[str, RoomSummary] = Field(default_factory=dict, description="Each revealed drill, summed up")
    qr: str = Field(default="", description="SVG of the join address")

    @property
    def shown(self) -> list[DrillStats]:
        """Revealed drills with answers, in the order they were revealed."""
        order = {k: i for i, k in enumerate(self.d.info.revealed)}
        return sorted((x for x in self.d.drills if x.revealed and x.attempts), key=lambda x: order.get(x.key, 0))

    @property
    def revealing(self) -> bool:
        return bool(self.shown)

    @property
    def full(self) -> list[Shown]:
        """The reveals shown in full: the one with its answer on show alone, else the two latest."""
        shown = self.shown
        answered = [x for x in shown if x.key in self.d.info.answers_shown]
        chosen = answered[-1:] or shown[-2:]
        room_for = 4 if len(chosen) == 1 else 2
        out = []
        for x in chosen:
            r = self.reveals.get(x.key)
            mistakes, other = r.top(room_for) if r else ([], 0)
            timer = self.head.timer_text.removeprefix(self.head.timer_label).strip() \
                if self.d.info.timer_key == x.key else ""
            out.append(Shown(x=x, r=r, mistakes=mistakes, other_wrong=other, timer=timer))
        return out

    @property
    def compact(self) -> list[DrillStats]:
        """The other reveals, a line each."""
        keys = {s.x.key for s in self.full}
        return [x for x in self.shown if x.key not in keys]

    @property
    def hidden(self) -> list[DrillStats]:
        return [x for x in self.d.drills if not x.revealed and x.attempts]


async def projector_page(db: Database, klass: Classroom, lessons: list[Lesson], join_url: str) -> ProjectorPage:
    """The figures counted by the database and each revealed drill's answers summed up (on a worker thread: it
    grades each answer once, app/drills/room.py keeps them)."""
    d = await projection.build_projection(db, klass)
    answers = await room.revealed_answers(db, klass)
    reveals = await asyncio.to_thread(room_summaries, lessons, answers, d.info.answers_shown)
    return ProjectorPage(head=class_head(d.info, join_url, d.generated_at), d=d, reveals=reveals)


class LearnerPage(Page):
    """/teach/CODE/learners/N: one learner's steps and answers, their resume link, and the roster's controls."""

    view: ReportView = Field(description="The learner's steps and answers, in words")
    resume_code: str = Field(description="Their current resume code")
    resume_link: str = Field(description="The join address that brings them back to their seat")
    others: list[tuple[int, str]] = Field(description="The class's other learners (id, name), to merge with")
    errors: dict[str, str] = Field(default_factory=dict, description="A refused roster control's message, by field")
    values: dict[str, str] = Field(default_factory=dict, description="What the refused control had typed")


async def learner_page(db: Database, klass: Classroom, member: Member, secret: str, base: str,
                       **extra: Any) -> LearnerPage:
    r = await learner_report(db, klass, member)
    code = classes.resume_code(secret, member)
    others = [(m.id, m.name) for m in await classes.members(db, klass) if m.id != member.id]
    return LearnerPage(view=report_view(r), resume_code=code, resume_link=resume_link(base, klass, member, code),
                       others=others, **extra)


class DeletedPage(Page):
    """The page after a class is deleted: what went with it."""

    code: str = Field(description="The deleted class's code")
    title: str = Field(description="Its title")
    removed: int = Field(description="How many learners' names went with it")

