"""The instructor's live views of a class: the dashboard, the projector, the cockpit, and one learner's page.

Each is a whole page, or for its htmx polls its live parts: the dashboard's poll that sends the page's stamp gets
only the rows changed since (app/classroom/live.py). Rendering runs on a worker thread."""

from __future__ import annotations

import asyncio
from functools import lru_cache
from typing import Any

from fastapi import APIRouter, HTTPException, Request
from fastapi.responses import HTMLResponse, Response
from pydantic import BaseModel

from app.classroom.class_models import Classroom, Member
from app.classroom.report import member_by_id
from app.pages.class_pages import cockpit_page, dashboard_page, learner_page, projector_page
from app.web.class_common import (
    LIVE,
    NO_STORE,
    ROW_ID_MAX,
    Instructing,
    adopt_key,
    base_url,
    join_url,
    render,
    resume_secret,
)
from app.web.deps import DB, Config, Lessons, Tpl, is_htmx
from app.web.qr import qr_svg

router = APIRouter()


def _since(request: Request) -> str:
    return request.query_params.get("since", "")[:20] if is_htmx(request) else ""


async def _rendered(tpl: Tpl, request: Request, template: str, page: BaseModel, block: str = "",
                    status: int = 200) -> HTMLResponse:
    html = await asyncio.to_thread(_html, tpl, request, template, page, block)
    return HTMLResponse(html, status_code=status, headers=LIVE)


def _html(tpl: Tpl, request: Request, template: str, page: BaseModel, block: str) -> str:
    context: dict[str, Any] = {"request": request, "page": page}
    return str(tpl.block(template, block, **context) if block else tpl.page(template, **context))


@router.get("/teach/{code}", response_class=HTMLResponse)
async def class_dashboard(request: Request, tpl: Tpl, db: DB, settings: Config, klass: Instructing) -> Response:
    """Learners × steps, flags, drills, pacing and the room's message; polls itself every 2 s."""
    moved = adopt_key(request, klass, settings)
    if moved is not None:
        return moved
    since = _since(request)
    page = await dashboard_page(db, klass, join_url(request, klass), since)
    block = ("poll" if since else "live") if is_htmx(request) else ""
    return await _rendered(tpl, request, "classroom/dashboard.html", page, block)


@router.get("/teach/{code}/cockpit", response_class=HTMLResponse)
async def cockpit(request: Request, tpl: Tpl, db: DB, settings: Config, klass: Instructing) -> Response:
    """The instructor's phone: counts, flags, the message, pacing and reveal buttons."""
    moved = adopt_key(request, klass, settings)
    if moved is not None:
        return moved
    page = await cockpit_page(db, klass, join_url(request, klass), _since(request))
    return await _rendered(tpl, request, "classroom/cockpit.html", page, "live" if is_htmx(request) else "")


@router.get("/teach/{code}/projector", response_class=HTMLResponse)
async def projector(request: Request, tpl: Tpl, db: DB, settings: Config, klass: Instructing, lessons: Lessons
                    ) -> Response:
    """For the room: the code, a QR code, aggregate progress, answers once revealed, the message. No names."""
    moved = adopt_key(request, klass, settings)
    if moved is not None:
        return moved
    htmx = is_htmx(request)
    url = join_url(request, klass)
    page = await projector_page(db, klass, lessons, url)
    page.qr = join_qr(url, klass.code)
    return await _rendered(tpl, request, "classroom/projector.html", page, "live" if htmx else "")


@lru_cache(maxsize=64)
def join_qr(url: str, code: str) -> str:
    """The join address as a QR code: the same for every poll of a class, so made once."""
    return qr_svg(url, f"Join class {code}")


async def member_of(db: DB, klass: Classroom, member_id: int) -> Member:
    """A learner of this class (another class's is nobody here: 404)."""
    member = await member_by_id(db, klass, member_id) if 0 < member_id <= ROW_ID_MAX else None
    if member is None:
        raise HTTPException(status_code=404, detail="Nobody in this class has that number.")
    return member


@router.get("/teach/{code}/learners/{member_id}", response_class=HTMLResponse)
async def learner_detail(request: Request, member_id: int, tpl: Tpl, db: DB, klass: Instructing) -> HTMLResponse:
    """One learner's steps and every attempt as typed, their resume link, rename, merge and remove."""
    member = await member_of(db, klass, member_id)
    page = await learner_page(db, klass, member, resume_secret(request), base_url(request))
    return render(tpl, request, "classroom/learner.html", page, headers=NO_STORE)
