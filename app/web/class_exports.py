"""A class's exports: learners.csv, attempts.csv and class.json streamed learner by learner, and report.md, the
Markdown class report; one export at a time per process (app/web/heavy.py)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

from anyio import CapacityLimiter
from fastapi import APIRouter, HTTPException, Request
from fastapi.responses import Response, StreamingResponse

from app.classroom import export
from app.classroom.class_models import Classroom
from app.classroom.db import Database
from app.pages.class_drills import describe_attempts
from app.pages.class_report import class_report
from app.web import heavy
from app.web.class_common import NO_STORE, Instructing
from app.web.deps import DB, Lessons, Tpl

router = APIRouter()
CSV = "text/csv; charset=utf-8"
EXPORTS = {"learners.csv": ("learners", CSV), "attempts.csv": ("attempts", CSV),
           "class.json": ("json", "application/json"), "report.md": ("report", "text/markdown; charset=utf-8")}


@router.get("/teach/{code}/export/{name}")
async def export_file(request: Request, name: str, db: DB, tpl: Tpl, klass: Instructing, lessons: Lessons
                      ) -> Response:
    """learners.csv, attempts.csv, class.json or report.md."""
    if name not in EXPORTS:
        raise HTTPException(status_code=404, detail="Exports are learners.csv, attempts.csv, class.json and "
                            "report.md.")
    what, media = EXPORTS[name]
    headers = {"Content-Disposition": f'attachment; filename="class-{klass.code}-{name}"', **NO_STORE}
    limiter = await heavy.queued(request.app)
    if what == "report":
        async with limiter:
            report = await class_report(db, klass, lessons)
        return Response(tpl.page("classroom/report.md", report=report), media_type=media, headers=headers)
    body = _streamed(db, klass, what, describe_attempts(lessons), limiter)
    return StreamingResponse(body, media_type=media, headers=headers)


async def _streamed(db: Database, klass: Classroom, what: str, describe: export.Describe, limiter: CapacityLimiter
                    ) -> AsyncIterator[str]:
    async with limiter:  # the export waits its turn (app/web/heavy.py)
        async for chunk in export.stream(db, klass, what, describe):
            yield chunk
            await asyncio.sleep(0)  # others go in between learners, however the database layer awaits (F1)
