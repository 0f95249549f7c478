"""One module maps errors to responses: friendly HTML for people, JSON for /api, never a stack trace."""

from __future__ import annotations

import logging

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import HTMLResponse, JSONResponse, Response
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from app.pages.errors import NotFound, readable
from app.pages.views import ErrorPage
from app.web.responses import problem, unprocessable

log = logging.getLogger("gpu_classroom")

TITLES = {400: "Bad request", 403: "Not allowed", 404: "Not found", 405: "Not allowed", 413: "Too large",
          422: "Check your input", 429: "Slow down", 500: "Something went wrong"}
ERRORS_SHOWN = 5  # validation errors in one answer: 200,000 unknown keys get five lines, not 39 MB
TEXT_SHOWN = 200  # characters of any message or field name: input is never echoed at length
SERVER_ERROR = "The server hit a problem it did not expect. Nothing you saved was lost; try again."
# The 500 page when even the error template cannot be rendered (the fault may be in the templates).
BARE_500 = ("<!doctype html><html lang=\"en\"><meta charset=\"utf-8\"><title>Something went wrong · GPU Classroom"
            f"</title><main><h1>Something went wrong</h1><p>{SERVER_ERROR}</p><p><a href=\"/\">See all lessons</a></p>"
            "</main></html>")


def _short(text: str) -> str:
    return text if len(text) <= TEXT_SHOWN else text[:TEXT_SHOWN] + "…"


def _wants_json(request: Request) -> bool:
    return request.url.path.startswith("/api") or "application/json" in request.headers.get("accept", "")


def _page(request: Request, status: int, message: str) -> Response:
    templates = request.app.state.templates
    html = templates.render(ErrorPage(title=TITLES.get(status, "Error"), message=message), request)
    return HTMLResponse(html, status_code=status)


async def http_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, StarletteHTTPException)
    detail = exc.detail if isinstance(exc.detail, str) else "Something is not right with this request."
    if exc.status_code == 404 and detail == "Not Found":
        detail = "There is nothing at this address. The lesson list is a good place to start."
    if _wants_json(request):
        return JSONResponse({"detail": detail}, status_code=exc.status_code, headers=exc.headers)
    response = _page(request, exc.status_code, detail)
    if exc.headers:
        response.headers.update(exc.headers)
    return response


def refusal(request: Request, status: int, message: str) -> Response:
    """A refusal as JSON (for /api and JSON clients; a 422 in the one shape of bad input) or as the error page."""
    if _wants_json(request):
        if status == 422:
            return unprocessable([problem("request", message, ["body"], "value_error")])
        return JSONResponse({"detail": message}, status_code=status)
    return _page(request, status, message)


async def validation_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, RequestValidationError)
    found = exc.errors()
    errors = [
        {"field": _short(".".join(str(p) for p in e["loc"] if p not in ("body", "query", "path")) or "request"),
         "message": _short(readable(dict(e))), "loc": [_short(str(p)) if isinstance(p, str) else p for p in e["loc"]],
         "msg": _short(e["msg"]), "type": e["type"]}
        for e in found[:ERRORS_SHOWN]
    ]
    if len(found) > ERRORS_SHOWN:
        errors.append({"field": "request", "message": f"and {len(found) - ERRORS_SHOWN} more problems.",
                       "loc": ["request"], "msg": "more problems", "type": "more"})
    if _wants_json(request):
        return unprocessable(errors)
    return _page(request, 422, "; ".join(f"{e['field']}: {e['message']}" for e in errors))


async def server_error(request: Request, exc: Exception) -> Response:
    """The 500 answer: logged with its traceback, shown as one sentence (never the traceback)."""
    log.exception("unhandled error on %s", request.url.path, exc_info=exc)
    if _wants_json(request):
        return JSONResponse({"detail": SERVER_ERROR}, status_code=500)
    try:
        return _page(request, 500, SERVER_ERROR)
    except Exception:  # noqa: BLE001 - the page itself failed: the plain one, still a page
        log.exception("the error page failed on %s", request.url.path)
        return HTMLResponse(BARE_500, status_code=500)


class ServerErrors:
    """Answer an unhandled error inside SecurityMiddleware (app/main.py), so the 500 carries every security
    header, and without raising it on to the server, which would drop the keep-alive connection (the client's
    next request on it would fail too). An error after the answer began cannot be answered: it is raised on and
    the server ends the connection, so a cut-off body is never taken for a whole one."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = finished = False

        async def watched(message: Message) -> None:
            nonlocal started, finished
            started = started or message["type"] == "http.response.start"
            finished = message["type"] == "http.response.body" and not message.get("more_body", False)
            await send(message)

        try:
            await self.app(scope, receive, watched)
        except Exception as exc:
            if finished:  # the answer went out whole (a background task failed): log it, keep the connection
                log.exception("unhandled error after answering %s", scope.get("path", ""), exc_info=exc)
                return
            if started:
                raise
            response = await server_error(Request(scope, receive), exc)
            await response(scope, receive, send)


async def not_found(request: Request, exc: Exception) -> Response:
    """A page service found nothing at the address (app.pages.errors.NotFound): the same 404 as any other."""
    return await http_error(request, StarletteHTTPException(status_code=404, detail=str(exc)))


def install(app: FastAPI) -> None:
    """Register the handlers on an app."""
    app.add_exception_handler(StarletteHTTPException, http_error)
    app.add_exception_handler(NotFound, not_found)
    app.add_exception_handler(RequestValidationError, validation_error)
    app.add_exception_handler(Exception, server_error)
