"""Limits in front of every route, before anything is parsed: a body cap (413), no control characters in any
text (422), and an Origin check on state-changing requests (403). One plain ASGI middleware, like
SecurityMiddleware; the refusals are the same pages and JSON bodies as app/web/errors.py gives."""

from __future__ import annotations

import json
import re
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from starlette.datastructures import Headers
from starlette.requests import Request
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from app.web import errors

BODY_MAX = 64 * 1024  # bytes of a JSON or form body: the largest real one (a pasted profile) is under 8 KB
UNSAFE = frozenset({"POST", "PUT", "PATCH", "DELETE"})
# C0 controls but tab, line feed and carriage return; DEL; C1 controls. Textareas may send the first three.
CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")
TOO_LARGE = f"This request is larger than the server accepts ({BODY_MAX // 1024} KB). Send less and try again."
CONTROL_TEXT = "Remove the control characters (such as NUL) from this input; they cannot be stored."
NOWHERE = "There is nothing at this address. The lesson list is a good place to start."
CROSS_SITE = "This form was sent from another site. Open the page on this site and try again."


class TooLarge(Exception):
    """The body grew past BODY_MAX while it was read."""


def has_control(text: str) -> bool:
    return CONTROL.search(text) is not None


def _texts(value: Any) -> list[str]:
    """Every string inside a parsed JSON value, keys included."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [t for k, v in value.items() for t in (*_texts(k), *_texts(v))]
    if isinstance(value, list):
        return [t for v in value for t in _texts(v)]
    return []


def body_has_control(body: bytes, content_type: str) -> bool:
    """Control characters in a form or JSON body, once decoded (a JSON "\\u0000" counts)."""
    if not body:
        return False
    if "application/x-www-form-urlencoded" in content_type:
        text = body.decode("utf-8", "replace")
        return any(has_control(k) or has_control(v) for k, v in parse_qsl(text, keep_blank_values=True))
    if "json" in content_type:
        try:
            return any(has_control(t) for t in _texts(json.loads(body)))
        except ValueError:
            return False  # the route's own parser answers bad JSON
    return has_control(body.decode("utf-8", "replace"))


def allowed_origin(origin: str, scope: Scope, public_url: str) -> bool:
    """An Origin header names this site: the PUBLIC_URL's origin when set, else the Host the request came to."""
    if origin == "null":
        return False
    parts = urlsplit(origin)
    if public_url:
        own = urlsplit(public_url)
        return (parts.scheme, parts.netloc) == (own.scheme, own.netloc)
    host = Headers(scope=scope).get("host", "")
    return parts.netloc == host


class GuardMiddleware:
    """Refuse, before any route parses it: a body over BODY_MAX (413, by Content-Length or while reading), a
    cross-site Origin on a state-changing request (403), and control characters in the query or a form or
    JSON body (422). CSRF tokens still guard every form; the Origin check is defence in depth."""

    def __init__(self, app: ASGIApp, public_url: str = "") -> None:
        self.app = app
        self.public_url = public_url

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = Headers(scope=scope)
        refusal = self.refusal(scope, headers)
        if refusal is None and scope["method"] in UNSAFE:
            try:
                body = await read_body(receive)
            except TooLarge:
                refusal = (413, TOO_LARGE)
            else:
                if body_has_control(body, headers.get("content-type", "")):
                    refusal = (422, CONTROL_TEXT)
                receive = replaying(body, receive)
        if refusal is not None:
            await refuse(scope, receive, send, *refusal)
            return
        await self.app(scope, receive, send)

    def refusal(self, scope: Scope, headers: Headers) -> tuple[int, str] | None:
        """The status and message that refuse a request before its body is read, or None."""
        if has_control(scope["path"]):
            return 404, NOWHERE
        query = scope.get("query_string", b"").decode("latin-1")
        if query and any(has_control(k) or has_control(v) for k, v in parse_qsl(query, keep_blank_values=True)):
            return 422, CONTROL_TEXT
        if scope["method"] not in UNSAFE:
            return None
        origin = headers.get("origin")
        if origin is not None and not allowed_origin(origin, scope, self.public_url):
            return 403, CROSS_SITE
        length = headers.get("content-length", "")
        if length.isdigit() and int(length) > BODY_MAX:
            return 413, TOO_LARGE
        return None


def replaying(body: bytes, receive: Receive) -> Receive:
    """A receive channel that gives the body already read, then waits on the real one (for the disconnect)."""
    sent = False

    async def replay() -> Message:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()  # after the body: wait for the disconnect, as the server would say

    return replay


async def read_body(receive: Receive) -> bytes:
    """The whole body, at most BODY_MAX bytes (TooLarge past it: nothing more is read)."""
    chunks, size = [], 0
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            break
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > BODY_MAX:
            raise TooLarge
        chunks.append(chunk)
        if not message.get("more_body", False):
            break
    return b"".join(chunks)


async def refuse(scope: Scope, receive: Receive, send: Send, status: int, message: str) -> None:
    """The error page (or JSON for /api) the app's own handlers would give."""
    request = Request(scope, receive)
    response = errors.refusal(request, status, message)
    if status == 413:
        response.headers["Connection"] = "close"  # the rest of the body is never read
    await response(scope, receive, send)
