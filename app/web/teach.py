"""/teach: create a class, see the classes this browser created, and carry that list to another device.

GET  /teach                 the form, and the instructor's classes
POST /teach                 create a class (CSRF); the first one gives the browser an instructor key
GET  /teach/{code}/created  the new class's code and private links (from the browser's cookie)
POST /teach/link            show the instructor link once (CSRF), POST /teach/link/replace makes a new one
GET  /teach/me?key=…        the instructor link: confirm, then POST /teach/me keeps the key in this browser
"""

from __future__ import annotations

import hmac
from typing import Annotated

from fastapi import APIRouter, Depends, Form, HTTPException, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from app.classroom import classes, owners
from app.classroom.class_models import Instructor
from app.classroom.figures import class_info
from app.classroom.ratelimit import RateLimited
from app.lessons.model import Lesson
from app.pages.class_drills import outline_for
from app.pages.class_pages import ENDS, CreatedPage, OpenLinkPage, teach_page
from app.settings import Settings
from app.web.class_common import (
    KEY_COOKIE,
    NO_STORE,
    OWNER_COOKIE,
    VIEWS,
    Instructing,
    Owner,
    base_url,
    client,
    keep_key,
    keep_owner,
    render,
)
from app.web.deps import DB, Config, Lessons, Tpl
from app.web.qr import qr_svg
from app.web.responses import too_many
from app.web.security import require_csrf

router = APIRouter()


@router.get("/teach", response_class=HTMLResponse)
async def teach_form(request: Request, tpl: Tpl, db: DB, lessons: Lessons, settings: Config, owner: Owner
                     ) -> HTMLResponse:
    """The form that creates a class, and the classes this browser created."""
    page = await teach_page(db, lessons, owner, admin=bool(settings.admin_token))
    return render(tpl, request, "classroom/teach.html", page, headers=NO_STORE)


@router.post("/teach", dependencies=[Depends(require_csrf)], response_model=None)
async def teach_create(
    request: Request, tpl: Tpl, db: DB, lessons: Lessons, settings: Config, owner: Owner,
    title: Annotated[str, Form(max_length=500)] = "", lesson: Annotated[str, Form(max_length=100)] = "",
    ends: Annotated[str, Form(max_length=10)] = "", admin_token: Annotated[str, Form(max_length=500)] = "",
) -> Response:
    """Create a class, then redirect to its links (so reloading that page cannot create a second class)."""
    try:
        await classes.guard_create(db, client(request), admin_ok(settings.admin_token, admin_token))
        chosen, hours = checked_create(settings.admin_token, admin_token, lesson, ends, lessons)
        classes.clean_title(title)  # before a new instructor is made for it
        owner, owner_key = (owner, "") if owner is not None else await owners.new_instructor(db)
        klass, key = await classes.create_class(db, title, outline_for(chosen), hours, owner_id=owner.id)
    except RateLimited as exc:
        raise too_many(exc) from exc
    except classes.ClassError as exc:
        page = await teach_page(db, lessons, owner, admin=bool(settings.admin_token),
                                values={"title": title, "lesson": lesson, "ends": ends},
                                errors={exc.field: exc.message})
        return render(tpl, request, "classroom/teach.html", page, status=exc.status)
    response = keep_key(request, RedirectResponse(f"/teach/{klass.code}/created", status_code=303), klass, key,
                        settings)
    return keep_owner(request, response, owner_key, settings) if owner_key else response


def admin_ok(admin: str, token: str) -> bool | None:
    """None when the server needs no admin token, else whether this one is right (constant time)."""
    return hmac.compare_digest(admin.encode(), token.encode()) if admin else None


def checked_create(admin: str, token: str, slug: str, ends: str, lessons: list[Lesson]) -> tuple[Lesson, float | None]:
    if admin_ok(admin, token) is False:
        raise classes.ClassError("admin_token", "This server needs its admin token to create a class.", status=403)
    lesson = next((le for le in lessons if le.slug == slug), None)
    if lesson is None:
        raise classes.ClassError("lesson", "Choose one of the lessons in the list.")
    return lesson, end_hours(ends)


def end_hours(ends: str) -> float | None:
    if ends not in {value for value, _ in ENDS}:
        raise classes.ClassError("ends", "Choose one of the end times in the list.")
    return float(ends) if ends else None


@router.get("/teach/{code}/created", response_class=HTMLResponse)
async def teach_created(request: Request, tpl: Tpl, klass: Instructing) -> HTMLResponse:
    """The class's code for the room and the instructor's private links (the key comes from their cookie)."""
    key = request.query_params.get("key") or request.cookies.get(KEY_COOKIE, "")
    root = base_url(request)
    links = {view: f"{root}/teach/{klass.code}{path}" + (f"?key={key}" if key else "") for view, path in VIEWS.items()}
    links["join"] = f"{root}/join/{klass.code}"
    page = CreatedPage(info=class_info(klass), links=links,
                       cockpit_qr=qr_svg(links["cockpit"], "Your private cockpit link"))
    return render(tpl, request, "classroom/created.html", page, headers=NO_STORE)


# --- the instructor link: the list on another device ------------------------------------------------------


def instructor_link(request: Request, key: str) -> str:
    return f"{base_url(request)}/teach/me?key={key}"


async def _shown(request: Request, tpl: Tpl, db: DB, lessons: list[Lesson], settings: Settings,
                 owner: Instructor | None, key: str, replaced: bool = False) -> HTMLResponse:
    page = await teach_page(db, lessons, owner, admin=bool(settings.admin_token),
                            link=instructor_link(request, key), replaced=replaced)
    return render(tpl, request, "classroom/teach.html", page, headers=NO_STORE)


@router.post("/teach/link", dependencies=[Depends(require_csrf)], response_class=HTMLResponse)
async def show_link(request: Request, tpl: Tpl, db: DB, lessons: Lessons, settings: Config, owner: Owner
                    ) -> HTMLResponse:
    """The instructor link, in this answer only (never in a page that reloads): it opens every class of the list."""
    if owner is None:
        raise HTTPException(status_code=404, detail="This browser has no classes of its own yet: create one first.")
    return await _shown(request, tpl, db, lessons, settings, owner, request.cookies.get(OWNER_COOKIE, ""))


@router.post("/teach/link/replace", dependencies=[Depends(require_csrf)], response_class=HTMLResponse)
async def replace_link(request: Request, tpl: Tpl, db: DB, lessons: Lessons, settings: Config, owner: Owner
                       ) -> HTMLResponse:
    """A new instructor key: the old link, and the browsers that kept it, no longer open the list."""
    if owner is None:
        raise HTTPException(status_code=404, detail="This browser has no classes of its own yet: create one first.")
    key = await owners.replace_key(db, owner)
    response = await _shown(request, tpl, db, lessons, settings, owner, key, replaced=True)
    keep_owner(request, response, key, settings)
    return response


@router.get("/teach/me", response_class=HTMLResponse)
async def open_link(request: Request, tpl: Tpl, db: DB, lessons: Lessons, settings: Config, owner: Owner,
                    key: str = "") -> HTMLResponse:
    """Someone opened an instructor link: ask before this browser takes the key (a page cannot make a browser
    take someone else's list: the keeping is a form with CSRF)."""
    found = await owners.instructor_by_key(db, key[:100])
    if found is None:
        raise HTTPException(status_code=404, detail="This instructor link opens no classes: it was mistyped, or "
                            "replaced by a newer one.")
    page = OpenLinkPage(teach=await teach_page(db, lessons, found, admin=bool(settings.admin_token)), key=key[:100],
                        mine=owner is not None and owner.id != found.id)
    return render(tpl, request, "classroom/open-link.html", page, headers=NO_STORE)


@router.post("/teach/me", dependencies=[Depends(require_csrf)], response_model=None)
async def keep_link(request: Request, db: DB, settings: Config, owner: Owner,
                    key: Annotated[str, Form(max_length=100)] = "") -> Response:
    """Keep the instructor key in this browser; classes this browser made under another key join its list."""
    found = await owners.instructor_by_key(db, key)
    if found is None:
        raise HTTPException(status_code=404, detail="This instructor link opens no classes: it was mistyped, or "
                            "replaced by a newer one.")
    await owners.take_over(db, found, owner)
    return keep_owner(request, RedirectResponse("/teach", status_code=303), key, settings)
