"""The typed contexts of the pages and blocks that are not a step, a widget or a drill, each tied to its template.

Each context's fields are the names its template reads (the router adds `request`, which base.html reads);
`tests/web/test_template_contexts.py` checks every field is described and used, and every name the template
reads is a field. Routers build them through the small services below and render them with
`app.web.templating.Templates.render`.
"""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar

from pydantic import BaseModel, ConfigDict, Field

from app.classroom import progress
from app.classroom.db import Database
from app.classroom.progress import LessonProgress
from app.classroom.sheets import Sheet, SheetExport, SheetField
from app.engine.constants import Numbers
from app.engine.worksheet import FIELDS, FieldSpec
from app.lessons.glossary import Glossary, Term, load_glossary
from app.lessons.model import Block, Lesson, Step
from app.pages.contexts import StepPage
from app.pages.errors import NotFound
from app.pages.lessons import find_lesson


class PageContext(BaseModel):
    """A template's context: each field is a top-level name in `TEMPLATE`."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    TEMPLATE: ClassVar[str]

    def names(self) -> dict[str, object]:
        """The fields as the template's names (shallow: the models inside stay as they are)."""
        return {name: getattr(self, name) for name in type(self).model_fields}


class HomePage(PageContext):
    """The lesson list with each lesson's progress and where to continue."""

    TEMPLATE = "home.html"

    lessons: list[Lesson] = Field(description="Every lesson served, in order")
    progress: dict[str, LessonProgress] = Field(description="The learner's progress, by lesson slug")
    resume: tuple[str, int] | None = Field(description="The lesson slug and step to continue at, if any")
    resume_lesson: Lesson | None = Field(description="The lesson `resume` names")


class GlossaryPage(PageContext):
    """Every glossary term with its definition and the step that teaches it."""

    TEMPLATE = "glossary.html"

    terms: list[Term] = Field(description="The terms, sorted")


class NumbersPage(PageContext):
    """Published measurements beside the engine's figures, and every constant with its source."""

    TEMPLATE = "numbers.html"

    numbers: Numbers = Field(description="The engine's anchors and constants")


class OverviewPage(PageContext):
    """A lesson's sections and steps, with done and current marked."""

    TEMPLATE = "overview.html"

    lesson: Lesson = Field(description="The lesson")
    progress: LessonProgress = Field(description="The learner's progress in it")


class LeftStep(BaseModel):
    """A step of the lesson not done yet, and why it is not."""

    step: Step = Field(description="The step")
    why: str = Field(description="Why it is not done, e.g. 'not opened yet' or 'drill not mastered yet'")


class CompletePage(PageContext):
    """Where pressing on past a lesson's last step lands: "You finished" only when every step is done, otherwise
    what is left; the drills mastered or skipped, and where next."""

    TEMPLATE = "complete.html"

    lesson: Lesson = Field(description="The lesson")
    progress: LessonProgress = Field(description="The learner's progress in it")
    finished: bool = Field(description="Every step of the lesson is done")
    left: list[LeftStep] = Field(description="The steps not done yet, in order, each with why")
    cheatsheet: Step | None = Field(description="The lesson's cheat-sheet step, if it has one")
    others: list[Lesson] = Field(description="The other lessons, in order")
    mastered: list[Step] = Field(description="Drill steps whose drill the learner mastered")
    skipped: list[Step] = Field(description="Drill steps whose drill the learner skipped")


class ErrorPage(PageContext):
    """A refusal or a missing page, as a sentence."""

    TEMPLATE = "error.html"

    title: str = Field(description="The status in words, e.g. 'Not found'")
    message: str = Field(description="What went wrong and what to do, in a sentence")


class SlidePage(PageContext):
    """A presentable step as a full-screen slide (or the slide alone for htmx)."""

    TEMPLATE = "present.html"

    page: StepPage = Field(description="The step, built as its page is")
    notes: list[str] = Field(description="The step's speaker notes, a paragraph each")
    fragment: bool = Field(description="True for the slide alone (htmx), so full screen stays on")


class NotesPage(PageContext):
    """A slide's speaker notes, for a second window that follows the presenting one."""

    TEMPLATE = "notes.html"

    lesson: Lesson = Field(description="The lesson presented")
    step: Step = Field(description="The slide's step")
    notes: list[str] = Field(description="Its speaker notes, a paragraph each")
    following: Step | None = Field(description="The next slide's step, if any")
    fragment: bool = Field(description="True for the notes alone (htmx)")


class SheetPage(PageContext):
    """The learner's workload sheet with its measurements, or one of its blocks after a save or an attachment."""

    TEMPLATE = "companion/sheet.html"

    sheet: Sheet = Field(description="The learner's sheet")
    specs: tuple[FieldSpec, ...] = Field(default=FIELDS, description="The sheet's fields, in order")
    errors: dict[str, str] = Field(default_factory=dict, description="A message per refused field")
    typed: dict[str, SheetField] = Field(default_factory=dict, description="Each refused field as it was typed")
    saved: list[str] = Field(default_factory=list, description="The fields just saved")
    report_text: str = Field(default="", description="A pasted profiling result, kept when it was refused")
    report_error: str = Field(default="", description="Why a profiling result was refused")
    source: str = Field(default="", description="Where an attached result came from: browser or terminal")
    attached: bool = Field(default=False, description="A profiling result was just attached")
    next: str = Field(default="/companion/sheet", description="Where a form goes after its post without JS")


class SheetMarkdown(PageContext):
    """The workload sheet as a Markdown file."""

    TEMPLATE = "companion/sheet.md"

    sheet: SheetExport = Field(description="The sheet as exported (the same fields as its JSON)")


class SwaggerPage(PageContext):
    """Swagger UI over the API's OpenAPI document."""

    TEMPLATE = "apidocs/swagger.html"

    spec_url: str = Field(description="The OpenAPI document's address")


class RedocPage(SwaggerPage):
    """ReDoc over the API's OpenAPI document."""

    TEMPLATE = "apidocs/redoc.html"


class RevealBlock(PageContext):
    """A step's reveal block, sent out of band when a guess opens the widget before it."""

    TEMPLATE = "reveal.html"

    block: Block = Field(description="The reveal block")
    i: int = Field(description="Its position among the step's blocks")
    revealed: bool = Field(description="Every predict-first widget of the step has its guess")
    oob: bool = Field(default=True, description="Sent out of band, beside the widget the guess opened")


async def home_page(db: Database, learner: str, lessons: list[Lesson]) -> HomePage:
    """The lessons, each with the learner's progress, and where to continue."""
    done = await progress.progress_by_lesson(db, learner)
    resume = progress.continue_at(done)
    found = next((le for le in lessons if resume and le.slug == resume[0]), None)
    return HomePage(lessons=lessons, progress=done, resume=resume, resume_lesson=found)


def glossary_page(glossary: Glossary | None, lesson_dirs: list[Path]) -> GlossaryPage:
    """Every term, sorted: from the glossary loaded at start, or read afresh (author mode) from the folders."""
    found = glossary if glossary is not None else load_glossary(lesson_dirs)[0]
    return GlossaryPage(terms=found.sorted())


async def overview_page(db: Database, learner: str, lessons: list[Lesson], slug: str) -> OverviewPage:
    """A lesson's overview with the learner's progress; NotFound for an unknown slug."""
    lesson = find_lesson(slug, lessons)
    lp = (await progress.progress_by_lesson(db, learner)).get(slug, progress.LessonProgress())
    return OverviewPage(lesson=lesson, progress=lp)


async def complete_page(db: Database, learner: str, lessons: list[Lesson], slug: str) -> CompletePage:
    """What finishing a lesson shows: the drills mastered and skipped, the cheat sheet, the other lessons."""
    lesson = find_lesson(slug, lessons)
    lp = (await progress.progress_by_lesson(db, learner)).get(slug, progress.LessonProgress())
    drill_steps = [s for s in lesson.steps if s.has_drill]
    mastered = [s for s in drill_steps if lp.state(s.number, drill=True) == "mastered"]
    left = [LeftStep(step=lesson.steps[n - 1], why=_why_left(lp, lesson.steps[n - 1]))
            for n in lp.left(len(lesson.steps))]
    return CompletePage(
        lesson=lesson, progress=lp, finished=lp.finished(len(lesson.steps)), left=left,
        others=sorted((le for le in lessons if le.slug != slug), key=_order),
        cheatsheet=next((s for s in lesson.steps if any(b.kind == "cheatsheet" for b in s.blocks)), None),
        mastered=mastered, skipped=[s for s in drill_steps if lp.state(s.number, drill=True) != "mastered"],
    )


def _why_left(lp: LessonProgress, step: Step) -> str:
    """Why a step is not done, as the completion page lists it."""
    if step.has_drill:
        return "drill not mastered yet" if step.number in lp.visited else "drill not tried yet"
    return "opened, not done yet" if step.number in lp.visited else "not opened yet"


def _order(lesson: Lesson) -> tuple[int, str]:
    return lesson.order, lesson.title


def notes_paragraphs(step: Step) -> list[str]:
    """A step's speaker notes as paragraphs (blank lines separate them)."""
    text = (step.meta.notes or "").strip()
    return [" ".join(p.split()) for p in text.split("\n\n") if p.strip()]


def presentable(lessons: list[Lesson], slug: str) -> Lesson:
    """A lesson that has slides; NotFound for one read step by step."""
    lesson = find_lesson(slug, lessons)
    if not lesson.presentable:
        raise NotFound(f"'{lesson.title}' is read step by step; it has no slides.")
    return lesson


def slide_step(lesson: Lesson, number: int) -> Step:
    """Slide `number` of a presentable lesson; NotFound past its end."""
    step = lesson.step(number)
    if step is None:
        raise NotFound(f"'{lesson.title}' has {len(lesson.steps)} slides; no slide {number}.")
    return step
