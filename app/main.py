"""create_app(settings) -> FastAPI. Importing this module connects to nothing and writes nothing."""

from __future__ import annotations

import gc
import importlib
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

from fastapi import FastAPI
from starlette.middleware.gzip import GZipMiddleware

from app import startup
from app.classroom.db import Database
from app.lessons.glossary import load_glossary
from app.lessons.loader import load_lessons
from app.settings import Settings
from app.web import errors, openapi
from app.web.guard import GuardMiddleware
from app.web.security import SecurityMiddleware, Signer, redact_access_log
from app.web.static import CachedStatic
from app.web.templating import STATIC, Templates
from app.widgets.base import validate_block
from app.widgets.registry import get_widget

log = logging.getLogger("gpu_classroom")
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


def router_modules() -> list[object]:
    """Every module of app/web that defines `router`: adding a router module adds its routes."""
    import pkgutil

    import app.web as web

    modules = [importlib.import_module(f"app.web.{m.name}") for m in pkgutil.iter_modules(web.__path__)]
    return [m for m in modules if hasattr(m, "router")]


def validate_lesson_block(kind: str, name: str, params: dict[str, object], source: str = "",
                          seeds: int | None = None) -> list[str]:
    """Check a widget or drill block of a lesson against the registries; a drill the block declares itself is
    self-checked over `seeds` draws (app/drills/declarative.py)."""
    if kind == "drill" and "kind" in params:
        from app.drills.declarative import SELF_CHECK_SEEDS
        from app.pages.lesson_drills import validate

        return validate(name, params, source, SELF_CHECK_SEEDS if seeds is None else seeds)
    if kind == "widget":
        widget = get_widget(name)
        return [f"unknown widget '{name}'"] if widget is None else validate_block(widget, params)
    try:
        drills = importlib.import_module("app.drills.registry")
    except ImportError:
        return [f"unknown drill '{name}' (no drills are installed)"]
    result: list[str] = drills.validate_block(name, params)
    return result


def create_app(settings: Settings | None = None, *, author: bool = False) -> FastAPI:
    """A configured app; the database, migrations and lessons are set up in the lifespan. `author`: watch the
    lesson folders, reload a lesson on each save and refresh its open pages (app/web/author.py)."""
    settings = settings or Settings()

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
        app.state.lessons, _ = load_lessons(settings.lesson_dirs(), validate_lesson_block, strict=not author)
        app.state.glossary = load_glossary(settings.lesson_dirs())[0]
        freeze_startup_heap()
        yield
        await db.close()

    app = FastAPI(title="GPU Classroom", version="0.1.0", lifespan=lifespan, docs_url=None, redoc_url=None,
                  description="Lessons on what AI workloads need, on a simulated DGX H100 (dgx-1). "
                  "The /api routes expose the engine.")
    app.state.settings = settings
    app.state.templates = Templates()
    errors.install(app)
    app.add_middleware(GuardMiddleware, public_url=settings.public_url)  # inside: refusals get the headers
    app.add_middleware(SecurityMiddleware, secure=settings.secure_cookies)
    redact_access_log()
    app.add_middleware(GZipMiddleware, minimum_size=500)
    app.mount("/static", CachedStatic(directory=STATIC, check_dir=False), name="static")
    for module in router_modules():
        app.include_router(module.router)  # type: ignore[attr-defined]
        if hasattr(module, "install"):
            module.install(app)
    if author:
        from app.web.author import enable

        enable(app, validate_lesson_block)
    app.openapi = lambda: openapi.document(app)  # type: ignore[method-assign]
    return app


app = create_app()
