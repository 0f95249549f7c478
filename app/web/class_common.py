"""What the class routers share: the instructor's keys (one class's key, or the instructor key that opens all their
classes), the cookies that keep them, the site's address, and the one way a class page renders."""

from __future__ import annotations

from typing import Annotated, Any
from urllib.parse import urlencode

from fastapi import Depends, HTTPException, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from pydantic import BaseModel

from app.classroom import classes, owners
from app.classroom.class_models import Classroom, Instructor
from app.settings import Settings
from app.web.deps import DB, Tpl, is_htmx
from app.web.security import secure_cookie

KEY_COOKIE = "gc_class_key"  # one class's key, scoped to /teach/CODE
OWNER_COOKIE = "gc_instructor"  # the instructor key, scoped to /teach: lists and opens all their classes
KEY_AGE = 30 * 24 * 3600
OWNER_AGE = 365 * 24 * 3600
VIEWS = {"dashboard": "", "cockpit": "/cockpit", "projector": "/projector"}
NO_STORE = {"Cache-Control": "no-store"}
LIVE = {"Vary": "HX-Request", **NO_STORE}
ROW_ID_MAX = 2**31 - 1  # PostgreSQL's integer: a larger id in an address is nobody (404), not a database error


def client(request: Request) -> str:
    return classes.client_key(request.client.host if request.client else None)


def base_url(request: Request) -> str:
    """The site's address for links and QR codes: PUBLIC_URL when set, never a Host header a client chose."""
    public: str = request.app.state.settings.public_url
    return public or str(request.base_url).rstrip("/")


def resume_secret(request: Request) -> str:
    """The server's secret, from which each member's resume code is derived (the learner cookie's signer holds it)."""
    keys: list[bytes] = request.app.state.signer.cookie.secret_keys
    return keys[-1].decode()


def join_url(request: Request, klass: Classroom) -> str:
    return f"{base_url(request)}/join/{klass.code}"


async def current_instructor(request: Request, db: DB) -> Instructor | None:
    """The instructor whose key this browser keeps (a cookie /teach pages receive), if any."""
    return await owners.instructor_by_key(db, request.cookies.get(OWNER_COOKIE))


async def instructor_class(request: Request, code: str, db: DB) -> Classroom:
    """The class whose private key came with the request (query once, then a cookie), or one the browser's
    instructor created; 403 otherwise."""
    klass = await classes.get_class(db, code)
    if klass is None:  # an open dashboard of a deleted class reloads once, shows this, and stops polling
        raise HTTPException(status_code=404, detail="There is no class with this code. It may have been deleted.",
                            headers={"HX-Refresh": "true"} if is_htmx(request) else None)
    key = request.query_params.get("key") or request.cookies.get(KEY_COOKIE)
    if classes.key_ok(klass, key):
        return klass
    if klass.owner_id is not None and owners.owns(klass, await current_instructor(request, db)):
        return klass
    raise HTTPException(status_code=403, detail="This page belongs to the class's instructor: open it with the "
                        "private dashboard link you were given when you created the class, or from /teach in the "
                        "browser that created it.")


Instructing = Annotated[Classroom, Depends(instructor_class)]
Owner = Annotated[Instructor | None, Depends(current_instructor)]


def adopt_key(request: Request, klass: Classroom, settings: Settings) -> Response | None:
    """A page opened with ?key=: keep the key in an HttpOnly cookie and drop it from the address bar."""
    key = request.query_params.get("key")
    if not key:
        return None
    rest = {k: v for k, v in request.query_params.items() if k != "key"}
    response = RedirectResponse(request.url.path + ("?" + urlencode(rest) if rest else ""), status_code=303)
    return keep_key(request, response, klass, key, settings)


def keep_key(request: Request, response: Response, klass: Classroom, key: str, settings: Settings) -> Response:
    """The class's key in an HttpOnly cookie that only this class's /teach pages receive."""
    response.set_cookie(KEY_COOKIE, key, path=f"/teach/{klass.code}", max_age=KEY_AGE, httponly=True,
                        samesite="lax", secure=secure_cookie(settings.secure_cookies, request.scope))
    return response


def keep_owner(request: Request, response: Response, key: str, settings: Settings) -> Response:
    """The instructor key in an HttpOnly cookie that every /teach page receives."""
    response.set_cookie(OWNER_COOKIE, key, path="/teach", max_age=OWNER_AGE, httponly=True, samesite="lax",
                        secure=secure_cookie(settings.secure_cookies, request.scope))
    return response


def back(klass: Classroom, view: str, anchor: str = "") -> RedirectResponse:
    return RedirectResponse(f"/teach/{klass.code}{VIEWS.get(view, '')}{anchor}", status_code=303)


def render(tpl: Tpl, request: Request, template: str, page: BaseModel, status: int = 200,
           headers: dict[str, str] | None = None, block: str = "") -> HTMLResponse:
    """A class page from its typed context (`page`), or one named block of it."""
    context: dict[str, Any] = {"request": request, "page": page}
    html = tpl.block(template, block, **context) if block else tpl.page(template, **context)
    return HTMLResponse(html, status_code=status, headers=headers)
