"""Limits in front of every route, before anything is parsed: a body cap (413), no control characters in any
text (422), and an Origin check on state-changing requests (403). One plain ASGI middleware, like
SecurityMiddleware; the refusals are the same pages and JSON bodies as app/web/errors.py gives."""

from __future__ import annotations

import ipaddress
import json
import re
import socket
from itertools import accumulate
from typing import Any
from urllib.parse import SplitResult, unquote_plus, urlsplit

from starlette.datastructures import Headers
from starlette.requests import Request
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from app.web import errors

BODY_MAX = 64 * 1024  # bytes of a JSON or form body: the largest real one (a pasted profile) is under 8 KB
JSON_DEPTH_MAX = 32  # levels of [ ] and { } in a JSON body: the deepest real one (an /api request) has 3
UNSAFE = frozenset({"POST", "PUT", "PATCH", "DELETE"})
# C0 controls but tab, line feed and carriage return; DEL; C1 controls. Textareas may send the first three.
CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")
TOO_LARGE = f"This request is larger than the server accepts ({BODY_MAX // 1024} KB). Send less and try again."
CONTROL_TEXT = "Remove the control characters (such as NUL) from this input; they cannot be stored."
SURROGATE = re.compile(r"[\ud800-\udfff]")  # half of a UTF-16 pair on its own: JSON's "\ud800" decodes to one
SURROGATE_TEXT = ("This body holds half of a character (a lone UTF-16 surrogate such as \\ud800), which is not text "
                  "and cannot be stored. Send whole characters.")
NOWHERE = "There is nothing at this address. The lesson list is a good place to start."
CROSS_SITE = "This form was sent from another site. Open the page on this site and try again."
TOO_DEEP = (f"This body nests brackets more than {JSON_DEPTH_MAX} levels deep; the server reads no deeper. "
            "Send a flatter JSON body.")
# A JSON string, escapes included; one never closed runs to the end (so no text is scanned twice).
JSON_STRING = re.compile(rb'"(?:[^"\\]|\\.)*+(?:"|\\?\Z)', re.DOTALL)
NOT_BRACKET = bytes(b for b in range(256) if b not in b"[]{}")
OPENING = frozenset(b"[{")


class TooLarge(Exception):
    """The body grew past BODY_MAX while it was read."""


def has_control(text: str) -> bool:
    return CONTROL.search(text) is not None


def encoded_has_control(text: str) -> bool:
    """A query string or form body with a control character in a key or a value once decoded. Decoded whole, not
    field by field: the separators (& and =) are no control characters, so the answer is the same, at a fraction
    of the cost on every widget update."""
    return has_control(unquote_plus(text))


def _texts(value: Any) -> list[str]:
    """Every string inside a parsed JSON value, keys included (a loop, not recursion: any depth is walked)."""
    found: list[str] = []
    todo = [value]
    while todo:
        item = todo.pop()
        if isinstance(item, str):
            found.append(item)
        elif isinstance(item, dict):
            todo.extend(item)
            todo.extend(item.values())
        elif isinstance(item, list):
            todo.extend(item)
    return found


def json_depth(body: bytes) -> int:
    """The deepest nesting of [ ] and { } in a JSON text, outside its strings: one linear scan, no parse."""
    brackets = JSON_STRING.sub(b"", body).translate(None, NOT_BRACKET)
    return max(accumulate(1 if b in OPENING else -1 for b in brackets), default=0)


def is_json(content_type: str) -> bool:
    """The body is read as JSON: a JSON media type, or none at all (FastAPI parses a body without one as JSON)."""
    return "json" in content_type or not content_type.strip()


def not_json(exc: ValueError) -> str:
    """Why a body is not JSON, in a sentence."""
    if isinstance(exc, json.JSONDecodeError):
        return f"This body is not valid JSON: {exc.msg} at line {exc.lineno}, column {exc.colno}."
    if isinstance(exc, UnicodeDecodeError):
        return "This body is not valid JSON: it is not UTF-8 text."
    return "This body holds a number too long to read (more than 4,300 digits)."  # int(), past its digit limit


def body_refusal(body: bytes, content_type: str) -> tuple[int, str] | None:
    """The status and message that refuse a body, or None: JSON too deep or not JSON, control characters in
    a form or JSON body once decoded (a JSON "\\u0000" counts), a lone surrogate in a JSON string ("\\ud800":
    valid JSON, but no text; encoding it later was a 500)."""
    if not body:
        return None
    if "application/x-www-form-urlencoded" in content_type:
        text = body.decode("utf-8", "replace")
        return (422, CONTROL_TEXT) if encoded_has_control(text) else None
    if is_json(content_type):
        if json_depth(body) > JSON_DEPTH_MAX:
            return 422, TOO_DEEP
        try:
            value = json.loads(body)
        except ValueError as exc:
            return 422, not_json(exc)
        except RecursionError:  # cannot happen within JSON_DEPTH_MAX; refused all the same should it ever
            return 422, TOO_DEEP
        texts = _texts(value)
        if any(SURROGATE.search(t) for t in texts):
            return 422, SURROGATE_TEXT
        return (422, CONTROL_TEXT) if any(has_control(t) for t in texts) else None
    return (422, CONTROL_TEXT) if has_control(body.decode("utf-8", "replace")) else None


def machine_names(listen_host: str = "") -> frozenset[str]:
    """The names a Host header may give for this machine when PUBLIC_URL is unset: its host name (and that name
    .local), the address the server listens on, and localhost. IP addresses count as well (names_this_machine)."""
    name = socket.gethostname().lower()
    short = name.split(".")[0]
    return frozenset(n for n in ("localhost", name, short, f"{short}.local", listen_host.lower()) if n)


def names_this_machine(host: str, names: frozenset[str]) -> bool:
    """A Host header (name or address, with or without a port) names this machine: an IP address (no page of
    another site is served from an address, so DNS rebinding cannot forge one), localhost, or one of `names`."""
    try:
        hostname = (urlsplit(f"//{host}").hostname or "").rstrip(".")
    except ValueError:  # not a host at all ("[::1" with no bracket closed)
        return False
    try:
        ipaddress.ip_address(hostname)
    except ValueError:
        return hostname in names or hostname.endswith(".localhost")
    return True


def allowed_origin(origin: str, scope: Scope, public_url: str, names: frozenset[str] | None = None) -> bool:
    """An Origin header names this site: the PUBLIC_URL's origin when set, else the Host the request came to,
    when that Host names this machine (`names`; None: any Host). Without PUBLIC_URL the scheme is not compared:
    a TLS proxy in front may not say it is one, and no other site can answer on this host and port."""
    parts = _origin_parts(origin)
    if parts is None:
        return False
    if public_url:
        own = urlsplit(public_url)
        return (parts.scheme, parts.netloc) == (own.scheme, own.netloc)
    host = Headers(scope=scope).get("host", "")
    return parts.netloc == host and (names is None or names_this_machine(host, names))


def _origin_parts(origin: str) -> SplitResult | None:
    """An Origin header split, or None when it names no site ("null", or not a URL at all)."""
    if origin == "null":
        return None
    try:
        parts = urlsplit(origin)
        parts.port  # noqa: B018 - raises ValueError for a port that is not a number
    except ValueError:
        return None
    return parts


def unknown_host(host: str) -> str:
    """The refusal of a form sent to a name this server does not know as its own (PUBLIC_URL unset)."""
    return (f"This server does not know {host[:100]} as its own address, so it takes no form sent to it there. "
            "Whoever runs it can set GPU_CLASSROOM_PUBLIC_URL to the address learners use.")


class GuardMiddleware:
    """Refuse, before any route parses it: a body over BODY_MAX (413, by Content-Length or while reading), a
    cross-site Origin on a state-changing request (403), a JSON body nested past JSON_DEPTH_MAX or not JSON at
    all, and control characters in the query or a form or JSON body (422). CSRF tokens still guard every form;
    the Origin check is defence in depth."""

    def __init__(self, app: ASGIApp, public_url: str = "", names: frozenset[str] | None = None) -> None:
        self.app = app
        self.public_url = public_url
        self.names = machine_names() if names is None else names  # Hosts that name this machine (no PUBLIC_URL)

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
                refusal = body_refusal(body, headers.get("content-type", ""))
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
        if query and encoded_has_control(query):
            return 422, CONTROL_TEXT
        if scope["method"] not in UNSAFE:
            return None
        origin = headers.get("origin")
        if origin is not None and not allowed_origin(origin, scope, self.public_url, self.names):
            host = headers.get("host", "")
            parts = _origin_parts(origin)
            same_host = not self.public_url and parts is not None and parts.netloc == host
            return 403, unknown_host(host) if same_host else CROSS_SITE
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
