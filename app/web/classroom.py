"""Class instances on the web: /teach (create, dashboard, projector, cockpit, pacing, export, delete) and /join."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Annotated, Any
from urllib.parse import urlencode

from anyio import CapacityLimiter
from fastapi import APIRouter, Depends, Form, HTTPException, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response, StreamingResponse

from app.classroom import classes, export, figures, live, projection, room, seat
from app.classroom.class_models import Classroom
from app.classroom.db import Database
from app.classroom.outline import Outline, StepOutline
from app.classroom.ratelimit import RateLimited
from app.classroom.report import learner_report, member_by_id
from app.lessons.model import Lesson, Step
from app.pages.lesson_drills import describe_attempts, room_summaries
from app.web import heavy
from app.web.deps import DB, Config, LearnerId, Lessons, Tpl, is_htmx
from app.web.qr import qr_svg
from app.web.responses import retry_after, too_many
from app.web.security import require_csrf, secure_cookie

router = APIRouter()
KEY_COOKIE = "gc_class_key"
ENDS = [("", "No end time"), ("1", "In 1 hour"), ("2", "In 2 hours"), ("3", "In 3 hours"), ("8", "In 8 hours"),
        ("24", "In 1 day"), ("168", "In 1 week")]
VIEWS = {"dashboard": "", "cockpit": "/cockpit", "projector": "/projector"}
NO_STORE = {"Cache-Control": "no-store"}
POLL_CACHE = {"Cache-Control": "no-cache"}  # a banner may be kept, but asked about (If-None-Match) every time
ROW_ID_MAX = 2**31 - 1  # PostgreSQL's integer: a larger id in an address is nobody (404), not a database error


def outline_for(lesson: Lesson) -> Outline:
    """The part of a lesson a class keeps: steps, titles, minutes, drills."""
    steps = tuple(StepOutline(number=s.number, title=s.title, minutes=s.meta.minutes,
                              drills=tuple(b.name for b in s.blocks if b.kind == "drill"),
                              note=s.meta.instructor_note or "", about=_about(s)) for s in lesson.steps)
    return Outline(slug=lesson.slug, title=lesson.title, steps=steps)


def _about(step: Step) -> tuple[tuple[str, str], ...]:
    """(drill, what it asks in a line) for each drill of a step that says: a declared drill's `description`."""
    return tuple((b.name, str(b.params["description"])) for b in step.blocks
                 if b.kind == "drill" and b.declared and isinstance(b.params.get("description"), str))


def lesson_options(lessons: list[Lesson]) -> list[tuple[str, str]]:
    return [(le.slug, le.title) for le in lessons]


def client(request: Request) -> str:
    return classes.client_key(request.client.host if request.client else None)


async def instructor_class(request: Request, code: str, db: DB) -> Classroom:
    """The class whose private key came with the request (query once, then a cookie); 403 otherwise."""
    klass = await classes.get_class(db, code)
    if klass is None:  # an open dashboard of a deleted class reloads once, shows this, and stops polling
        raise HTTPException(status_code=404, detail="There is no class with this code. It may have been deleted.",
                            headers={"HX-Refresh": "true"} if is_htmx(request) else None)
    key = request.query_params.get("key") or request.cookies.get(KEY_COOKIE)
    if not classes.key_ok(klass, key):
        raise HTTPException(status_code=403, detail="This page belongs to the class's instructor: open it with "
                            "the private dashboard link you were given when you created the class.")
    return klass


Instructor = Annotated[Classroom, Depends(instructor_class)]


def adopt_key(request: Request, klass: Classroom, settings: Any) -> Response | None:
    """A page opened with ?key=: keep the key in an HttpOnly cookie and drop it from the address bar."""
    key = request.query_params.get("key")
    if not key:
        return None
    rest = {k: v for k, v in request.query_params.items() if k != "key"}
    response = RedirectResponse(request.url.path + ("?" + urlencode(rest) if rest else ""), status_code=303)
    return keep_key(request, response, klass, key, settings)


def keep_key(request: Request, response: Response, klass: Classroom, key: str, settings: Any) -> Response:
    """The instructor's key in an HttpOnly cookie that only this class's /teach pages receive."""
    response.set_cookie(KEY_COOKIE, key, path=f"/teach/{klass.code}", max_age=30 * 24 * 3600, httponly=True,
                        samesite="lax", secure=secure_cookie(settings.secure_cookies, request.scope))
    return response


def base_url(request: Request) -> str:
    """The site's address for links and QR codes: PUBLIC_URL when set, never a Host header a client chose."""
    public: str = request.app.state.settings.public_url
    return public or str(request.base_url).rstrip("/")


# --- creating a class ------------------------------------------------------------------------------------


@router.get("/teach", response_class=HTMLResponse)
async def teach_form(request: Request, tpl: Tpl, lessons: Lessons, settings: Config) -> HTMLResponse:
    """The form that creates a class."""
    return _teach_page(tpl, request, lessons, settings, {})


def _teach_page(tpl: Tpl, request: Request, lessons: list[Lesson], settings: Config, values: dict[str, str],
                refused: classes.ClassError | None = None) -> HTMLResponse:
    errors = {refused.field: refused.message} if refused else {}
    html = tpl.page("classroom/teach.html", request=request, lessons=lesson_options(lessons), ends=ENDS,
                    values=values, errors=errors, admin=bool(settings.admin_token))
    return HTMLResponse(html, status_code=refused.status if refused else 200)


@router.post("/teach", dependencies=[Depends(require_csrf)], response_model=None)
async def teach_create(
    request: Request, tpl: Tpl, db: DB, lessons: Lessons, settings: Config,
    title: Annotated[str, Form(max_length=500)] = "", lesson: Annotated[str, Form(max_length=100)] = "",
    ends: Annotated[str, Form(max_length=10)] = "", admin_token: Annotated[str, Form(max_length=500)] = "",
) -> Response:
    """Create a class, then redirect to its links (so reloading that page cannot create a second class)."""
    try:
        await classes.guard_create(db, client(request), admin_ok(settings.admin_token, admin_token))
        chosen = _checked_create(settings.admin_token, admin_token, lesson, ends, lessons)
        klass, key = await classes.create_class(db, title, outline_for(chosen[0]), chosen[1])
    except RateLimited as exc:
        raise too_many(exc) from exc
    except classes.ClassError as exc:
        return _teach_page(tpl, request, lessons, settings, {"title": title, "lesson": lesson, "ends": ends}, exc)
    return keep_key(request, RedirectResponse(f"/teach/{klass.code}/created", status_code=303), klass, key, settings)


@router.get("/teach/{code}/created", response_class=HTMLResponse)
async def teach_created(request: Request, tpl: Tpl, klass: Instructor) -> HTMLResponse:
    """The class's code for the room and the instructor's private links (the key comes from their cookie)."""
    key = request.query_params.get("key") or request.cookies.get(KEY_COOKIE, "")
    root = base_url(request)
    links = {view: f"{root}/teach/{klass.code}{path}?key={key}" for view, path in VIEWS.items()}
    links["join"] = f"{root}/join/{klass.code}"
    html = tpl.page("classroom/created.html", request=request, info=figures.class_info(klass), links=links,
                    cockpit_qr=qr_svg(links["cockpit"], "Your private cockpit link"))
    return HTMLResponse(html, headers=NO_STORE)


def admin_ok(admin: str, token: str) -> bool | None:
    """None when the server needs no admin token, else whether this one is right (constant time)."""
    import hmac

    return hmac.compare_digest(admin.encode(), token.encode()) if admin else None


def _checked_create(admin: str, token: str, slug: str, ends: str, lessons: list[Lesson]) -> tuple[Lesson, float | None]:
    if admin_ok(admin, token) is False:
        raise classes.ClassError("admin_token", "This server needs its admin token to create a class.", status=403)
    lesson = next((le for le in lessons if le.slug == slug), None)
    if lesson is None:
        raise classes.ClassError("lesson", "Choose one of the lessons in the list.")
    if ends not in {value for value, _ in ENDS}:
        raise classes.ClassError("ends", "Choose one of the end times in the list.")
    return lesson, float(ends) if ends else None


# --- joining -----------------------------------------------------------------------------------------------


@router.get("/join", response_class=HTMLResponse)
@router.get("/join/{code}", response_class=HTMLResponse)
async def join_form(request: Request, tpl: Tpl, db: DB, learner: LearnerId, code: str = "") -> HTMLResponse:
    """The join form (the QR code opens it with the code filled in); a member sees where to resume."""
    code = code or request.query_params.get("code", "")
    klass = await classes.get_class(db, code) if code else None
    member = await classes.membership(db, klass, learner) if klass else None
    if klass is not None and member is not None:
        report = await learner_report(db, klass, member)
        return HTMLResponse(tpl.page("classroom/me.html", request=request, r=report, welcome=True))
    return _join_page(tpl, request, {"code": code[:12], "name": ""}, {})


def _join_page(tpl: Any, request: Request, values: dict[str, str], errors: dict[str, str], status: int = 200,
               headers: dict[str, str] | None = None) -> HTMLResponse:
    return HTMLResponse(tpl.page("classroom/join.html", request=request, values=values, errors=errors),
                        status_code=status, headers=headers)


@router.post("/join", dependencies=[Depends(require_csrf)], response_model=None)
async def join(
    request: Request, tpl: Tpl, db: DB, learner: LearnerId,
    code: Annotated[str, Form(max_length=100)] = "", name: Annotated[str, Form(max_length=500)] = "",
) -> Response:
    """Attach this browser's learner to the class and go to the step the class is on (or where they were)."""
    values = {"code": code, "name": name}
    try:
        klass, member = await classes.join(db, code, name, learner, client(request))
    except RateLimited as exc:
        return _join_page(tpl, request, values, {"code": str(exc)}, 429, retry_after(exc.retry_after))
    except classes.ClassError as exc:
        return _join_page(tpl, request, values, {exc.field: exc.message}, exc.status)
    step = klass.pace_step if klass.pace_mode == "bring" and klass.pace_step else (member.step or 1)
    return RedirectResponse(f"/lessons/{klass.lesson}/{step}", status_code=303)


@router.get("/class/{code}", response_class=HTMLResponse)
async def my_class(request: Request, code: str, tpl: Tpl, db: DB, learner: LearnerId) -> Response:
    """A learner's own progress and attempts in a class, and nobody else's."""
    klass = await classes.get_class(db, code)
    member = await classes.membership(db, klass, learner) if klass else None
    if klass is None or member is None:
        return RedirectResponse(f"/join/{code}" if klass else "/join", status_code=303)
    report = await learner_report(db, klass, member)
    return HTMLResponse(tpl.page("classroom/me.html", request=request, r=report, welcome=False))


def banner_etag(token: str) -> str:
    return f'"banner-{token}"'


@router.get("/class-banner", response_model=None)
async def banner(request: Request, tpl: Tpl, db: DB, learner: LearnerId, lesson: str = "", step: int = 0,
                 v: str = "", locked: int = 0) -> Response:
    """A learner's poll: 304 when nothing changed since the ETag the page sends back (If-None-Match; a page
    from before ETags sends only `v` and gets 204), the new banner when it did, or a move to the class's step."""
    sent = request.headers.get("If-None-Match", "")
    known = sent.removeprefix('W/').strip('"').removeprefix("banner-")[:20] if sent else v[:20]
    result = await seat.poll(db, learner, lesson[:100], step, known, bool(locked))
    return _polled(tpl, request, result, lesson, sent)


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
    if result.banner is None:  # no longer in a class (it was deleted): the banner goes, the polling stops
        return HTMLResponse("")
    return HTMLResponse(tpl.block("classroom/banner.html", "banner", request=request, b=result.banner),
                        headers={"ETag": banner_etag(result.banner.token), **POLL_CACHE})


@router.post("/class-activity", dependencies=[Depends(require_csrf)])
async def activity(db: DB, learner: LearnerId, lesson: Annotated[str, Form(max_length=100)] = "") -> Response:
    """A learner in a class moved a widget: they are active (throttled by the page to one call every 30 s)."""
    await seat.record_activity(db, learner, lesson)
    return Response(status_code=204)


# --- the instructor's views -----------------------------------------------------------------------------------


async def _view(request: Request, tpl: Tpl, db: DB, settings: Config, klass: Classroom, template: str,
                lessons: list[Lesson] | None = None) -> Response:
    """A live view: the whole page, or for htmx polls its live parts. The projector's figures are counted by the
    database; the dashboard and the cockpit come from the class's board (app/classroom/live.py), and a dashboard
    poll that sends the page's stamp gets only the rows changed since. Rendering (and summing a revealed drill's
    answers for the room) runs on a worker thread."""
    moved = adopt_key(request, klass, settings)
    if moved is not None:
        return moved
    htmx = is_htmx(request)
    since = request.query_params.get("since", "")[:20] if htmx else ""
    context: dict[str, Any] = {"request": request, "join_url": f"{base_url(request)}/join/{klass.code}"}
    if template.endswith("projector.html"):
        context.update(d=await projection.build_projection(db, klass), oob=htmx, qr="", lessons=lessons or [],
                       answers=await room.revealed_answers(db, klass))
    else:
        context["d"] = await live.dashboard(db, klass, since, rows=not template.endswith("cockpit.html"))
    block = ("poll" if since and template.endswith("dashboard.html") else "live") if htmx else ""
    html = await asyncio.to_thread(_render, tpl, template, block, context)
    return HTMLResponse(html, headers={"Vary": "HX-Request", **NO_STORE})


def _render(tpl: Any, template: str, block: str, context: dict[str, Any]) -> str:
    if "answers" in context:  # the projector: each revealed drill's answers summed up for the room
        context["reveals"] = room_summaries(context.pop("lessons"), context.pop("answers"))
    if block:
        return str(tpl.block(template, block, **context))
    if template.endswith("projector.html"):
        context["qr"] = qr_svg(context["join_url"], f"Join class {context['d'].info.code}")
    return str(tpl.page(template, **context))


@router.get("/teach/{code}", response_class=HTMLResponse)
async def class_dashboard(request: Request, tpl: Tpl, db: DB, settings: Config, klass: Instructor) -> Response:
    """Learners × steps, drills, stuck learners and pacing; polls itself every 2 s."""
    return await _view(request, tpl, db, settings, klass, "classroom/dashboard.html")


@router.get("/teach/{code}/projector", response_class=HTMLResponse)
async def projector(request: Request, tpl: Tpl, db: DB, settings: Config, klass: Instructor,
                    lessons: Lessons) -> Response:
    """For the room: the code, a QR code, aggregate progress, answer distributions once revealed. No names."""
    return await _view(request, tpl, db, settings, klass, "classroom/projector.html", lessons)


@router.get("/teach/{code}/cockpit", response_class=HTMLResponse)
async def cockpit(request: Request, tpl: Tpl, db: DB, settings: Config, klass: Instructor) -> Response:
    """The instructor's phone: counts, stuck learners, pacing and reveal buttons."""
    return await _view(request, tpl, db, settings, klass, "classroom/cockpit.html")


@router.get("/teach/{code}/learners/{member_id}", response_class=HTMLResponse)
async def learner_detail(request: Request, member_id: int, tpl: Tpl, db: DB, klass: Instructor) -> HTMLResponse:
    """One learner's steps and every attempt as typed (instructor only)."""
    member = await member_by_id(db, klass, member_id) if 0 < member_id <= ROW_ID_MAX else None
    if member is None:
        raise HTTPException(status_code=404, detail="Nobody in this class has that number.")
    report = await learner_report(db, klass, member)
    return HTMLResponse(tpl.page("classroom/learner.html", request=request, r=report), headers=NO_STORE)


# --- the instructor's controls ------------------------------------------------------------------------------


def back(klass: Classroom, view: str) -> RedirectResponse:
    return RedirectResponse(f"/teach/{klass.code}{VIEWS.get(view, '')}", status_code=303)


def refused(exc: classes.ClassError) -> HTTPException:
    return HTTPException(status_code=exc.status, detail=exc.message)


@router.post("/teach/{code}/pace", dependencies=[Depends(require_csrf)])
async def pace(
    db: DB, klass: Instructor, mode: Annotated[str, Form(max_length=10)] = "free",
    step: Annotated[str, Form(max_length=5)] = "", move: Annotated[str, Form(max_length=5)] = "",
    view: Annotated[str, Form(max_length=20)] = "dashboard",
) -> Response:
    """Bring everyone to step N (tell them, or move them), hold the class at step N, or release it."""
    number = int(step) if step.strip().isdigit() else None
    try:
        await classes.set_pace(db, klass, mode, number, move == "on", len(figures.outline_of(klass).steps))
    except classes.ClassError as exc:
        raise refused(exc) from exc
    return back(klass, view)


@router.post("/teach/{code}/idle", dependencies=[Depends(require_csrf)])
async def idle(db: DB, klass: Instructor, minutes: Annotated[str, Form(max_length=5)] = "",
               view: Annotated[str, Form(max_length=20)] = "dashboard") -> Response:
    """After how many quiet minutes a learner counts as inactive."""
    try:
        await classes.set_idle(db, klass, int(minutes) if minutes.strip().isdigit() else 0)
    except classes.ClassError as exc:
        raise refused(exc) from exc
    return back(klass, view)


@router.post("/teach/{code}/reveal", dependencies=[Depends(require_csrf)])
async def reveal(db: DB, klass: Instructor, drill: Annotated[str, Form(max_length=80)] = "",
                 shown: Annotated[str, Form(max_length=5)] = "1",
                 view: Annotated[str, Form(max_length=20)] = "dashboard") -> Response:
    """Show (or hide again) one drill's answer distribution on the projector."""
    keys = {d.key for d in (await projection.build_projection(db, klass)).drills}
    if drill not in keys:
        raise HTTPException(status_code=404, detail="This lesson has no such drill.")
    await classes.reveal(db, klass, drill, shown == "1")
    return back(klass, view)


@router.post("/teach/{code}/close", dependencies=[Depends(require_csrf)])
async def close(db: DB, klass: Instructor, view: Annotated[str, Form(max_length=20)] = "dashboard") -> Response:
    """Close the class: learners keep reading; nothing more is recorded for it."""
    await classes.close(db, klass)
    return back(klass, view)


@router.post("/teach/{code}/delete", dependencies=[Depends(require_csrf)], response_class=HTMLResponse)
async def delete(request: Request, tpl: Tpl, db: DB, klass: Instructor,
                 confirm: Annotated[str, Form(max_length=20)] = "") -> HTMLResponse:
    """Delete the class and its learners' class data, once the instructor typed the code to confirm."""
    if classes.normalise_code(confirm) != klass.code:
        raise HTTPException(status_code=422, detail=f"Type the class code {klass.code} to confirm deleting it.")
    removed = await classes.delete_class(db, klass)
    html = tpl.page("classroom/deleted.html", request=request, code=klass.code, title=klass.title, removed=removed)
    response = HTMLResponse(html, headers=NO_STORE)
    response.delete_cookie(KEY_COOKIE, path=f"/teach/{klass.code}")
    return response


CSV = "text/csv; charset=utf-8"
EXPORTS = {"learners.csv": ("learners", CSV), "attempts.csv": ("attempts", CSV),
           "class.json": ("json", "application/json")}


@router.get("/teach/{code}/export/{name}")
async def export_file(request: Request, name: str, db: DB, klass: Instructor, lessons: Lessons) -> Response:
    """learners.csv, attempts.csv or class.json, streamed learner by learner, one export at a time (heavy.py)."""
    if name not in EXPORTS:
        raise HTTPException(status_code=404, detail="Exports are learners.csv, attempts.csv and class.json.")
    what, media = EXPORTS[name]
    body = _streamed(db, klass, what, describe_attempts(lessons), await heavy.queued(request.app))
    return StreamingResponse(body, media_type=media, headers={
        "Content-Disposition": f'attachment; filename="class-{klass.code}-{name}"', **NO_STORE})


async def _streamed(db: Database, klass: Classroom, what: str, describe: export.Describe, limiter: CapacityLimiter
                    ) -> AsyncIterator[str]:
    async with limiter:  # the export waits its turn (app/web/heavy.py)
        async for chunk in export.stream(db, klass, what, describe):
            yield chunk
            await asyncio.sleep(0)  # others go in between learners, however the database layer awaits (F1)
