"""Widget updates over one WebSocket a page: the answers of `GET /widgets/...`, without a new HTTP request for every
keystroke (issue 16, item 8).

A browser spends several milliseconds of its own on every HTTP request, even on loopback: on this project's 2-core
machine an XMLHttpRequest for a 10 kB fragment takes 4-6 ms from headless Chromium, a WebSocket round trip of the
same 10 kB 1.3-1.6 ms (bench/transport.py, docs/widgets.md). So static/app.js carries the GETs htmx makes for widget
forms and live runs over the page's socket while it is open, and hands each answer back to htmx as the
XMLHttpRequest's: htmx swaps it as it would have. A page whose socket is closed, refused or slow sends the same
requests over HTTP.

One message is one GET: `{"id": 7, "url": "/widgets/roofline?...", "headers": {"HX-Request": "true", ...}}`. The
answer runs that GET through the whole app (every middleware, the route, the error pages), with the handshake's
cookies, so the two transports cannot answer differently. It is one JSON line and the body: `{"id": 7, "status":
200, "headers": {"x-share-url": ...}}\\n<div ...>`. Only GETs under /widgets/ travel this way: nothing that changes
state, so no CSRF token is needed; the handshake must come from this site (its Origin, as GuardMiddleware checks a
form's).
"""

from __future__ import annotations

import asyncio
import json
import logging
from typing import Any
from urllib.parse import unquote

from starlette.types import Message, Scope
from starlette.websockets import WebSocket, WebSocketDisconnect

from app.web.guard import allowed_origin, has_control

log = logging.getLogger("gpu_classroom")

PATH = "/widgets/socket"
PREFIX = "/widgets/"
MAX_MESSAGE = 32_768  # characters: a widget's query string with a live run's stretches is a few kB
# The handshake's headers the GET keeps: who the learner is (cookie) and where the page is.
KEPT_HEADERS = {b"cookie", b"host", b"user-agent", b"origin", b"accept-language"}
# The answer's headers the page needs: htmx's own, the share address, the type and a 429's wait.
SENT_HEADERS = {"content-type", "x-share-url", "retry-after"}


class Refused(ValueError):
    """A message that is not one GET under /widgets/."""


async def serve(websocket: WebSocket, public_url: str) -> None:
    """Accept a socket from this site's pages and answer each message in turn until the page closes it."""
    origin = websocket.headers.get("origin")
    if origin is None or not allowed_origin(origin, websocket.scope, public_url):
        await websocket.close(code=1008)  # policy violation: another site's page
        return
    await websocket.accept()
    try:
        while True:
            await websocket.send_text(await answer(websocket.scope, await websocket.receive_text()))
    except WebSocketDisconnect:
        return


async def answer(scope: Scope, text: str) -> str:
    """The answer to one message: the GET's status, headers and body, or a 400 that says what was wrong."""
    ident: Any = None
    try:
        message = load(text)
        ident = message.get("id")
        status, sent, body = await run_get(scope, widget_url(message), request_headers(message.get("headers")))
    except Refused as refusal:
        status, sent, body = 400, {"content-type": "text/plain; charset=utf-8"}, str(refusal)
    head = {"id": ident if isinstance(ident, int) else None, "status": status, "headers": sent}
    return json.dumps(head) + "\n" + body


def load(text: str) -> dict[str, Any]:
    """The message as an object; Refused when it is too long or not a JSON object."""
    if len(text) > MAX_MESSAGE:
        raise Refused(f"A message is at most {MAX_MESSAGE} characters.")
    try:
        message = json.loads(text)
    except ValueError as error:
        raise Refused("A message is a JSON object with id, url and headers.") from error
    if not isinstance(message, dict):
        raise Refused("A message is a JSON object with id, url and headers.")
    return message


def widget_url(message: dict[str, Any]) -> str:
    """The message's URL; Refused unless it is a widget's own GET (under /widgets/, not the socket)."""
    url = message.get("url")
    if (
        not isinstance(url, str)
        or not url.startswith(PREFIX)
        or url.split("?", 1)[0] == PATH
        or "//" in url
        or "#" in url
    ):
        raise Refused("Only the widgets' own GET requests travel over this socket.")
    return url


def request_headers(headers: Any) -> dict[str, str]:
    """The message's htmx headers (HX-*) and CSRF header, as strings without control characters; the rest (a
    header htmx leaves empty is null) is left out."""
    if not isinstance(headers, dict):
        return {}
    return {
        k.lower(): v
        for k, v in headers.items()
        if isinstance(k, str)
        and isinstance(v, str)
        and (k.lower().startswith("hx-") or k.lower() == "x-csrf-token")
        and not has_control(k + v)
    }


async def run_get(scope: Scope, url: str, headers: dict[str, str]) -> tuple[int, dict[str, str], str]:
    """Run `GET url` through the app the socket belongs to, as if it had come over HTTP from the same page."""
    started: dict[str, Any] = {"status": 500, "headers": []}
    chunks: list[bytes] = []

    async def receive() -> Message:
        if not started.get("asked"):
            started["asked"] = True
            return {"type": "http.request", "body": b"", "more_body": False}
        await asyncio.Event().wait()  # the page is still there: as a server would, wait for its disconnect
        return {"type": "http.disconnect"}

    async def send(message: Message) -> None:
        if message["type"] == "http.response.start":
            started.update(status=message["status"], headers=message.get("headers", []))
        elif message["type"] == "http.response.body":
            chunks.append(message.get("body", b""))

    try:
        await scope["app"](http_scope(scope, url, headers), receive, send)
    except Exception:  # the app's error page (500) has been sent already; the socket carries on
        log.exception("widget update over the socket failed: %s", url.partition("?")[0])
    named = ((k.decode("latin-1").lower(), v.decode("latin-1")) for k, v in started["headers"])
    sent = {k: v for k, v in named if k.startswith("hx-") or k in SENT_HEADERS}
    return int(started["status"]), sent, b"".join(chunks).decode("utf-8", errors="replace")


def http_scope(scope: Scope, url: str, headers: dict[str, str]) -> Scope:
    """The scope of `GET url` from the socket's page: its connection, cookies and host, and htmx's headers."""
    path, _, query = url.partition("?")
    kept = [(k, v) for k, v in scope["headers"] if k in KEPT_HEADERS]
    return {
        "type": "http",
        "asgi": scope.get("asgi", {"version": "3.0"}),
        "http_version": "1.1",
        "method": "GET",
        "scheme": "https" if scope.get("scheme") == "wss" else "http",
        "path": unquote(path),
        "raw_path": path.encode(),
        "query_string": query.encode(),
        "root_path": scope.get("root_path", ""),
        "client": scope.get("client"),
        "server": scope.get("server"),
        "headers": kept + [(k.encode(), v.encode()) for k, v in headers.items()],
    }
