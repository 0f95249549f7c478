"""Classes on the web. This module holds the learner's side (join, their own class page, the banner's poll, the
widget activity ping) and gathers the instructor's routers: /teach (app/web/teach.py), the live views
(class_views.py), the controls (class_controls.py) and the exports (class_exports.py)."""

from __future__ import annotations

import asyncio
import random
from typing import Annotated

from fastapi import APIRouter, Depends, Form, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from app.classroom import classes, seat
from app.classroom.bell import HOLD, bell_for
from app.classroom.ratelimit import RateLimited, Window
from app.pages.class_pages import join_page, my_class_page
from app.web import class_controls, class_exports, class_views, teach
from app.web.class_common import base_url, client, render, resume_secret
from app.web.deps import DB, Config, LearnerId, Tpl
from app.web.responses import retry_after
from app.web.security import LEARNER_COOKIE, ONE_YEAR, require_csrf, secure_cookie

router = APIRouter()
POLL_CACHE = {"Cache-Control": "no-cache"}  # a banner may be kept, but asked about (If-None-Match) every time
CROWD = 600  # polls woken at once that spread their next requests over a second
# A shown page asks at most once every 5 s (static/app.js), a hidden one less often: 60 polls a minute from one
# learner is five pages' worth. Past it a 429 with Retry-After (the page asks again after its usual pause). Per
# process, in memory (a poll must not cost a database write), one count an app (`app.state.banner_polls`).
POLLS_A_MINUTE = 60


def banner_polls() -> Window:
    """The count of banner polls a learner, a new one for each app (app.main.create_app)."""
    return Window(limit=POLLS_A_MINUTE, window_seconds=60)


# --- joining -----------------------------------------------------------------------------------------------


@router.get("/join", response_class=HTMLResponse)
@router.get("/join/{code}", response_class=HTMLResponse)
async def join_form(request: Request, tpl: Tpl, db: DB, learner: LearnerId, code: str = "", name: str = "",
                    resume: str = "") -> HTMLResponse:
    """The join form (the QR code opens it with the code filled in, a resume link with name and code too); a
    member sees their own class page, with where to go on."""
    code = (code or request.query_params.get("code", ""))[:12]
    klass = await classes.get_class(db, code) if code else None
    member = await classes.membership(db, klass, learner) if klass and not resume else None
    if klass is not None and member is not None:
        page = await my_class_page(db, klass, member, resume_secret(request), base_url(request), welcome=True)
        return render(tpl, request, "classroom/me.html", page, headers={"Cache-Control": "no-store"})
    page_ = await join_page(db, {"code": code, "name": name[:40], "resume": resume[:12]})
    return render(tpl, request, "classroom/join.html", page_)


@router.post("/join", dependencies=[Depends(require_csrf)], response_model=None)
async def join(
    request: Request, tpl: Tpl, db: DB, learner: LearnerId, settings: Config,
    code: Annotated[str, Form(max_length=100)] = "", name: Annotated[str, Form(max_length=500)] = "",
    resume: Annotated[str, Form(max_length=100)] = "",
) -> Response:
    """Attach this browser's learner to the class and go to where the class is (or where they were). With a resume
    code, this browser becomes that learner: their seat, their progress, their answers."""
    values = {"code": code, "name": name, "resume": resume}
    try:
        joined = await classes.join(db, code, name, learner, client(request), resume=resume,
                                    secret=resume_secret(request))
    except RateLimited as exc:
        page = await join_page(db, values, {"code": str(exc)})
        return render(tpl, request, "classroom/join.html", page, 429, retry_after(exc.retry_after))
    except classes.ClassError as exc:
        page = await join_page(db, values, {exc.field: exc.message})
        return render(tpl, request, "classroom/join.html", page, exc.status)
    response = RedirectResponse(f"/lessons/{joined.klass.lesson}/{joined.step}", status_code=303)
    if joined.resumed:
        signer = request.app.state.signer
        response.set_cookie(LEARNER_COOKIE, signer.cookie.dumps(joined.member.learner_id), max_age=ONE_YEAR,
                            httponly=True, samesite="lax", secure=secure_cookie(settings.secure_cookies,
                                                                                 request.scope))
    return response


@router.get("/class/{code}", response_class=HTMLResponse)
async def my_class(request: Request, code: str, tpl: Tpl, db: DB, learner: LearnerId) -> Response:
    """A learner's own progress and attempts in a class, their resume code, and nobody else's."""
    klass = await classes.get_class(db, code)
    member = await classes.membership(db, klass, learner) if klass else None
    if klass is None or member is None:
        return RedirectResponse(f"/join/{code}" if klass else "/join", status_code=303)
    page = await my_class_page(db, klass, member, resume_secret(request), base_url(request), welcome=False)
    return render(tpl, request, "classroom/me.html", page, headers={"Cache-Control": "no-store"})


# --- the banner above every step of a class ----------------------------------------------------------------


def banner_etag(token: str) -> str:
    return f'"banner-{token}"'


@router.get("/class-banner", response_model=None)
async def banner(request: Request, tpl: Tpl, db: DB, learner: LearnerId, lesson: str = "", step: int = 0,
                 v: str = "", locked: int = 0, wait: int = 0) -> Response:
    """A learner's poll: 304 when nothing changed since the ETag the page sends back (If-None-Match; a page
    from before ETags sends only `v` and gets 204), the new banner when it did, or a move to the class's step.
    With `wait=1` (static/app.js sends it) a poll that finds nothing new waits up to HOLD seconds for the class
    to change (app/classroom/bell.py), so a bring or a message reaches the page within about a second. More than
    POLLS_A_MINUTE from one learner: 429."""
    try:
        request.app.state.banner_polls.hit(learner, by="this browser")
    except RateLimited as exc:
        return Response(str(exc), status_code=429, media_type="text/plain", headers=retry_after(exc.retry_after))
    sent = request.headers.get("If-None-Match", "")
    known = sent.removeprefix('W/').strip('"').removeprefix("banner-")[:20] if sent else v[:20]
    ask = (learner, lesson[:100], step, known, bool(locked))
    result = await seat.poll(db, *ask)
    if wait and not result.changed and result.class_id is not None and result.banner and result.banner.open:
        gone = asyncio.ensure_future(_hung_up(request))
        try:
            woken = await bell_for(db).wait(result.class_id, result.banner.class_token, HOLD, gone, who=learner)
        finally:
            gone.cancel()
        if woken:
            await asyncio.sleep(random.uniform(0.0, min(1.0, woken / CROWD)))  # a crowd asks over a second
            result = await seat.poll(db, *ask)
    return _polled(tpl, request, result, lesson, sent)


async def _hung_up(request: Request) -> None:
    """Returns once the client has gone (the request's body, if any, is read first; a channel that kept giving
    body messages could not make this spin)."""
    while (await request.receive())["type"] != "http.disconnect":
        await asyncio.sleep(0.1)


def _polled(tpl: Tpl, request: Request, result: seat.Poll, lesson: str, sent: str) -> Response:
    """The answer to a learner's poll: a move, a refresh, nothing new (304 or 204), or the new banner."""
    if result.move_to is not None:
        return Response(status_code=200, headers={"HX-Redirect": f"/lessons/{lesson}/{result.move_to}"})
    if result.refresh:
        return Response(status_code=200, headers={"HX-Refresh": "true"})
    if not result.changed:
        if sent and result.banner is not None:
            return Response(status_code=304, headers={"ETag": banner_etag(result.banner.token), **POLL_CACHE})
        return Response(status_code=204)
    if result.banner is None:  # no longer in a class (it was deleted, or they were removed): the banner goes
        return HTMLResponse("")
    return HTMLResponse(tpl.block("classroom/banner.html", "banner", request=request, b=result.banner),
                        headers={"ETag": banner_etag(result.banner.token), **POLL_CACHE})


@router.post("/class-activity", dependencies=[Depends(require_csrf)])
async def activity(db: DB, learner: LearnerId, lesson: Annotated[str, Form(max_length=100)] = "") -> Response:
    """A learner in a class moved a widget: they are active (throttled by the page to one call every 30 s)."""
    await seat.record_activity(db, learner, lesson)
    return Response(status_code=204)


# the instructor's routers: /teach's own addresses before /teach/{code}
router.include_router(teach.router)
router.include_router(class_views.router)
router.include_router(class_controls.router)
router.include_router(class_exports.router)
