"""Dependencies shared by the routers, as Annotated aliases."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Request

from app.classroom.db import Database
from app.pages.lessons import Lessons as LessonList
from app.pages.lessons import find_lesson as find_lesson  # the routers find a lesson as the page services do
from app.settings import Settings
from app.web.templating import Templates


async def get_db(request: Request) -> Database:
    db: Database = request.app.state.db
    return db


async def get_templates(request: Request) -> Templates:
    templates: Templates = request.app.state.templates
    return templates


async def get_settings(request: Request) -> Settings:
    settings: Settings = request.app.state.settings
    return settings


async def get_lessons(request: Request) -> LessonList:
    lessons: LessonList = request.app.state.lessons
    return lessons


async def get_learner(request: Request) -> str:
    learner: str = request.state.learner_id
    return learner


DB = Annotated[Database, Depends(get_db)]
Tpl = Annotated[Templates, Depends(get_templates)]
Config = Annotated[Settings, Depends(get_settings)]
Lessons = Annotated[LessonList, Depends(get_lessons)]
LearnerId = Annotated[str, Depends(get_learner)]


def is_htmx(request: Request) -> bool:
    """One rule for fragment or page: an htmx request that is not a history restore."""
    return request.headers.get("HX-Request") == "true" and request.headers.get("HX-History-Restore-Request") != "true"
