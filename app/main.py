"""create_app(settings) -> FastAPI. Importing this module connects to nothing and writes nothing."""

from __future__ import annotations

import gc
import logging
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from pathlib import Path

from fastapi import FastAPI
from starlette.middleware.gzip import GZipMiddleware

from app import startup
from app.classroom.db import Database
from app.lessons.blocks import validate_lesson_block
from app.lessons.glossary import load_glossary
from app.lessons.loader import served_lessons
from app.lessons.model import Lesson
from app.settings import Settings
from app.web import (
    api,
    apidocs,
    classroom,
    companion,
    drills,
    errors,
    health,
    openapi,
    pages,
    predictions,
    present,
    widgets,
)
from app.web.author import enable as enable_author_mode
from app.web.guard import GuardMiddleware, machine_names
from app.web.security import SecurityMiddleware, Signer, redact_access_log
from app.web.static import CachedStatic
from app.web.templating import STATIC, Templates

log = logging.getLogger("gpu_classroom")
# Every router, in the order its routes are matched: a new router module is added here. The widget route comes
# first: it is the one a learner's every keystroke hits, and Starlette tries routes in order (its one path,
# /widgets/{name}, is no other router's).
ROUTERS = (widgets.router, api.router, apidocs.router, classroom.router, companion.router, drills.router,
           health.router, pages.router, predictions.router, present.router)
_heap_frozen = False


def freeze_startup_heap() -> bool:
    """Move what startup built (modules, lessons, templates, the engine's tables) out of the collector's sight.

    A full collection walks every tracked object: ~150,000 after startup, about 90 ms during which the event
    loop answers nobody (measured: bench/widgets.py showed an 86 ms sample; under a class burst it lands on
    whoever is waiting). Frozen objects are never walked again, so later full collections see only what
    requests made. Once per process: the first app in a test run freezes, later ones are not frozen again.
    """
    global _heap_frozen
    if _heap_frozen:
        return False
    gc.collect()
    gc.freeze()
    _heap_frozen = True
    return True


def create_app(settings: Settings | None = None, *, author: bool = False) -> FastAPI:
    """A configured app; the database, migrations and lessons are set up in the lifespan. `author`: watch the
    lesson folders, reload a lesson on each save and refresh its open pages (app/web/author.py)."""
    settings = settings or Settings()
    app = FastAPI(title="GPU Classroom", version="0.1.0", lifespan=_lifespan(settings, author),
                  docs_url=None, redoc_url=None,
                  description="Lessons on what AI workloads need, on a simulated DGX H100 (dgx-1). "
                  "The /api routes expose the engine.")
    app.state.settings = settings
    app.state.templates = Templates()
    app.state.banner_polls = classroom.banner_polls()
    errors.install(app)
    api.install(app)
    app.add_middleware(GuardMiddleware, public_url=settings.public_url,  # inside: refusals get the headers
                       names=machine_names(settings.host))
    app.add_middleware(errors.ServerErrors)  # inside too: a 500 gets the headers and keeps the connection
    app.add_middleware(SecurityMiddleware, secure=settings.cookies_secure, hsts=settings.https_only)
    redact_access_log()
    app.add_middleware(GZipMiddleware, minimum_size=500)
    app.mount("/static", CachedStatic(directory=STATIC, check_dir=False), name="static")
    for router in ROUTERS:
        app.include_router(router)
    if author:
        enable_author_mode(app, validate_lesson_block)
    app.openapi = lambda: openapi.document(app)  # type: ignore[method-assign]
    return app


def _lifespan(settings: Settings, author: bool) -> Callable[[FastAPI], AbstractAsyncContextManager[None]]:
    """Start-up and shut-down: the database (migrated), the signer, the lessons and the glossary."""

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        url = settings.resolved_database_url()
        if url.startswith("sqlite"):  # refuse to serve from a database it cannot write (PostgreSQL: the CLI checks)
            startup.check_sqlite(Path(url.split("///", 1)[1]))
        db = Database(url)
        if settings.migrate_on_start:
            await db.migrate()
        app.state.db = db
        app.state.signer = Signer(settings.resolved_secret_key())
        if not author:  # author mode loads its own (app/web/author.py)
            app.state.lessons = _served(settings)
        app.state.glossary = load_glossary(settings.lesson_dirs())[0]
        freeze_startup_heap()
        yield
        await db.close()

    return lifespan


def _served(settings: Settings) -> list[Lesson]:
    """The lessons that load cleanly; each problem is logged with its file and line, and a lesson with problems is
    left out (its pages say so), so one broken lesson never keeps the server from starting."""
    lessons, problems = served_lessons(settings.lesson_dirs(), validate_lesson_block)
    for slug, found in lessons.broken.items():
        log.error("lesson %s is not served: %d problem%s (gpu-classroom check lists them too)", slug, len(found),
                  "s" if len(found) != 1 else "")
    for problem in problems:
        log.error("%s", problem)
    return lessons

