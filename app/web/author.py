"""Author mode: `gpu-classroom author [LESSON_DIR ...]` serves the lessons and watches their folders.

On each save the changed lesson alone is reloaded (app/lessons/watch.py), and every open page of that lesson
refreshes itself, keeping its scroll position: the page listens to `GET /author/events?lesson=SLUG&version=N`
(server-sent events) and static/app.js reloads it when the lesson's version moves past N. A lesson with
problems keeps its last good version on screen under a banner of `file:line: message`. None of this exists
outside author mode: the events route and the banner are added by `enable(app)` only.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Annotated, Any
from urllib.parse import urlencode

from fastapi import APIRouter, FastAPI, Query, Request
from fastapi.responses import StreamingResponse
from pydantic import BaseModel, Field

from app.classroom.ratelimit import RateLimited, Window
from app.lessons import sandbox
from app.lessons.loader import BlockValidator
from app.lessons.watch import AuthorLessons, lesson_folder_of
from app.settings import Settings

log = logging.getLogger("gpu_classroom.author")
EVENTS = "/author/events"
STREAM_SECONDS = 25.0  # an event stream ends after this (the browser reconnects), so a shutdown never waits long
CHECK_EVERY = 0.05  # seconds between looks at a lesson's version while a page waits for a change
STREAMS_MAX = 32  # event streams open at once in one process; past it a page is told to come back (RETRY_LATER_MS)
RETRY_LATER_MS = 25_000
# A page's stream lasts STREAM_SECONDS and reopens: about 2.4 opens a minute a page. Past OPENS_A_MINUTE from one
# address (50 pages' worth) the page is told to come back in RETRY_LATER_MS too, as past STREAMS_MAX.
OPENS_A_MINUTE = 120
WATCH_STEP_MS = 50  # a burst of saves is one reload once the files have been quiet this long
WATCH_DEBOUNCE_MS = 400  # ... or after this long at most

author_router = APIRouter(include_in_schema=False)  # added by enable(app) only, never listed in app.main


class AuthorView(BaseModel):
    """What a page shows in author mode: the problems of its lesson and where to hear of the next version."""

    lesson: str | None = Field(description="The page's lesson slug; None for pages of no single lesson")
    version: int
    problems: list[str] = Field(description="file:line: message, as `gpu-classroom check` prints them")
    warnings: list[str] = Field(default_factory=list, description="Warnings, the same way: the lesson still works")
    last_good: bool = Field(default=False, description="The page shows the lesson's last version without problems")

    @property
    def events(self) -> str:
        query = {"version": str(self.version), **({"lesson": self.lesson} if self.lesson else {})}
        return f"{EVENTS}?{urlencode(query)}"


def author_view(request: Request) -> AuthorView:
    """The author-mode view of the page being rendered (a template global)."""
    state: AuthorLessons = request.app.state.author
    slug = request.path_params.get("slug") if request.url.path.startswith("/lessons/") else None
    found = state.problems_of(slug)
    return AuthorView(lesson=slug, version=state.version_of(slug), problems=[str(p) for p in found if not p.warning],
                      warnings=[str(p) for p in found if p.warning],
                      last_good=slug is not None and state.shows_last_good(slug))


@author_router.get(EVENTS)
async def events(
    request: Request,
    version: Annotated[int, Query(ge=0)],
    lesson: Annotated[str | None, Query(max_length=100)] = None,
) -> StreamingResponse:
    """`event: reload` as soon as the lesson's version differs from the page's; the stream ends quietly after a
    while and the browser reconnects with the same address. Past OPENS_A_MINUTE from one address, or STREAMS_MAX
    open, the page is told to come back later."""
    try:
        request.app.state.author_opens.hit(request.client.host if request.client else "")
        stream = _reloads(request.app, lesson, version)
    except RateLimited:
        stream = _come_back_later()
    return StreamingResponse(stream, media_type="text/event-stream", headers={"Cache-Control": "no-store"})


async def _come_back_later() -> AsyncIterator[str]:
    yield f"retry: {RETRY_LATER_MS}\n\n"  # the browser's EventSource reconnects then


async def _reloads(app: FastAPI, lesson: str | None, version: int) -> AsyncIterator[str]:
    """Check the lesson's version every CHECK_EVERY seconds (sleeping between looks, so the loop serves others);
    one `reload` event when it changes. Past STREAMS_MAX open streams the page is told to retry later instead."""
    state: AuthorLessons = app.state.author
    if app.state.author_streams >= STREAMS_MAX:
        async for line in _come_back_later():
            yield line
        return
    app.state.author_streams += 1
    try:
        yield "retry: 300\n\n"
        loop = asyncio.get_running_loop()
        deadline = loop.time() + STREAM_SECONDS
        while loop.time() < deadline and not app.state.author_stopping.is_set():
            now = state.version_of(lesson)
            if now != version:
                yield f"event: reload\ndata: {now}\n\n"
                return
            await asyncio.sleep(CHECK_EVERY)
    finally:
        app.state.author_streams -= 1


async def watch(app: FastAPI, state: AuthorLessons, stop: asyncio.Event) -> None:
    """Reload each lesson whose files change until `stop` is set."""
    from watchfiles import awatch

    roots = [r for r in state.roots if r.is_dir()]
    if not roots:
        return
    async for changes in awatch(*roots, stop_event=stop, step=WATCH_STEP_MS, debounce=WATCH_DEBOUNCE_MS):
        folders = {f for _, path in changes if (f := lesson_folder_of(Path(path), state.roots)) is not None}
        if not folders:
            continue
        try:
            slugs = await asyncio.to_thread(state.reload, folders)
        except Exception:  # noqa: BLE001 - a reload that crashes must not end author mode
            log.exception("reloading %s failed", sorted(map(str, folders)))
            continue
        app.state.lessons = state.served()
        report(state, slugs, "reloaded")


def report(state: AuthorLessons, slugs: set[str] | None, what: str) -> None:
    """Tell the terminal what a load found (`slugs` None: every lesson): 'ok', or each problem as file:line."""
    found = state.problems_of(None) if slugs is None else [p for s in sorted(slugs) for p in state.problems_of(s)]
    lines = list(dict.fromkeys(str(p) for p in found))
    errors = len({str(p) for p in found if not p.warning})
    warnings = len({str(p) for p in found if p.warning})
    names = "the lessons" if slugs is None else ", ".join(sorted(slugs)) or "nothing"
    said = [f"{n} {word}{'s' if n != 1 else ''}" for n, word in ((errors, "problem"), (warnings, "warning")) if n]
    log.warning("%s", "\n".join([f"{what} {names}: {', '.join(said) or 'ok'}", *(f"  {p}" for p in lines)]))


def enable(app: FastAPI, validate: BlockValidator) -> None:
    """Turn author mode on for this app: lessons loaded leniently, watched, pages told of each reload."""
    inner = app.router.lifespan_context
    settings: Settings = app.state.settings

    @asynccontextmanager
    async def lifespan(the_app: FastAPI) -> AsyncIterator[Any]:
        async with inner(the_app) as value:
            cancel = threading.Event()  # stops an evaluation under way when the server stops (SIGTERM, Ctrl-C)
            sandbox.cancel_on(cancel)
            state = AuthorLessons(roots=settings.lesson_dirs(), validate=validate)
            await asyncio.to_thread(state.load_all)
            report(state, None, "loaded")
            the_app.state.author = state
            the_app.state.lessons = state.served()
            stop = the_app.state.author_stopping = asyncio.Event()
            the_app.state.author_streams = 0
            task = asyncio.create_task(watch(the_app, state, stop))
            try:
                yield value
            finally:
                cancel.set()
                stop.set()
                await task

    app.router.lifespan_context = lifespan
    app.include_router(author_router)
    app.state.author_opens = Window(limit=OPENS_A_MINUTE, window_seconds=60)
    app.state.templates.env.globals["author"] = author_view
