"""Learner identity (a signed cookie), CSRF tokens and security headers."""

from __future__ import annotations

import hmac
import logging
import re
import uuid
from functools import lru_cache

from fastapi import HTTPException, Request, Response
from itsdangerous import BadSignature, URLSafeSerializer
from starlette.datastructures import Headers, MutableHeaders
from starlette.requests import cookie_parser
from starlette.types import ASGIApp, Message, Receive, Scope, Send

LEARNER_COOKIE = "gc_learner"
CSRF_FIELD = "csrf_token"
CSRF_HEADER = "X-CSRF-Token"
ONE_YEAR = 365 * 24 * 3600

CSP = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; worker-src 'self'; font-src 'self'; object-src 'none'; "
    "base-uri 'self'; form-action 'self'; frame-ancestors 'none'"
)


class Signer:
    """Signs learner ids and derives CSRF tokens from them.

    Both answers are pure functions of the secret and their input, and every request asks both (about 0.3 ms of
    HMAC together): the latest few thousand are remembered, so a class's polls pay for them once per learner."""

    def __init__(self, secret: str) -> None:
        self.cookie = URLSafeSerializer(secret, salt="learner")
        self.csrf = URLSafeSerializer(secret, salt="csrf")
        self.learner_from = lru_cache(maxsize=4096)(self._learner_from)
        self.csrf_token = lru_cache(maxsize=4096)(self._csrf_token)

    def _learner_from(self, raw: str | None) -> str | None:
        if not raw:
            return None
        try:
            value = self.cookie.loads(raw)
        except BadSignature:
            return None
        return value if isinstance(value, str) and len(value) == 36 else None

    def _csrf_token(self, learner_id: str) -> str:
        return str(self.csrf.dumps(learner_id))

    def csrf_ok(self, learner_id: str, token: str | None) -> bool:
        return bool(token) and hmac.compare_digest(self.csrf_token(learner_id), token or "")


SECRET_QUERY = re.compile(r"((?:^|[?&])(?:key|admin_token)=)[^&\s]*")


class RedactSecrets(logging.Filter):
    """Access-log lines show `key=…` instead of an instructor's private key (or an admin token)."""

    def filter(self, record: logging.LogRecord) -> bool:
        if isinstance(record.args, tuple):
            record.args = tuple(SECRET_QUERY.sub(r"\1…", a) if isinstance(a, str) else a for a in record.args)
        return True


def redact_access_log() -> None:
    """Install RedactSecrets on uvicorn's access logger once, however many apps a process creates."""
    access = logging.getLogger("uvicorn.access")
    if not any(isinstance(f, RedactSecrets) for f in access.filters):
        access.addFilter(RedactSecrets())


HSTS = "max-age=31536000"  # a year; no includeSubDomains: the course may share a domain with other sites
SKIP_COOKIE = ("/static", "/healthz", "/api")
HARDENING = {
    "content-security-policy": CSP,
    "x-content-type-options": "nosniff",
    "referrer-policy": "same-origin",
    "x-frame-options": "DENY",
}


class SecurityMiddleware:
    """Give every visitor a learner id (a signed cookie, set when new) and harden every response.

    A plain ASGI middleware rather than two ``@app.middleware("http")`` layers: those wrap each
    request in a task group and a streamed response, which cost more than the widget update itself.
    """

    def __init__(self, app: ASGIApp, secure: bool, hsts: bool = False) -> None:
        self.app = app
        self.secure = secure  # every cookie Secure: GPU_CLASSROOM_SECURE_COOKIES or an https PUBLIC_URL
        self.hsts = hsts  # HSTS on every answer: an https PUBLIC_URL (otherwise only on requests that came over HTTPS)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        signer: Signer = scope["app"].state.signer
        raw = cookie_parser(Headers(scope=scope).get("cookie", "")).get(LEARNER_COOKIE)
        learner = signer.learner_from(raw)
        is_new = learner is None
        learner = learner or str(uuid.uuid4())
        state = scope.setdefault("state", {})
        state["learner_id"] = learner
        state["new_learner"] = is_new  # no cookie came: reads store nothing for this visitor (yet)
        state["csrf_token"] = signer.csrf_token(learner)
        set_cookie = is_new and not scope["path"].startswith(SKIP_COOKIE)

        async def send_hardened(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = MutableHeaders(scope=message)
                for name, value in HARDENING.items():
                    if name not in headers:
                        headers[name] = value
                https = scope.get("scheme") == "https"
                if https or self.hsts:  # HSTS means something only over HTTPS, which an https PUBLIC_URL promises
                    headers["strict-transport-security"] = HSTS
                if set_cookie:
                    cookie = Response()
                    cookie.set_cookie(LEARNER_COOKIE, signer.cookie.dumps(learner), max_age=ONE_YEAR,
                                      httponly=True, samesite="lax", secure=secure_cookie(self.secure, scope))
                    headers.append("set-cookie", cookie.headers["set-cookie"])
                if https or self.secure:  # every cookie, the routes' own (the class key) included
                    message["headers"] = all_secure(message["headers"])
            await send(message)

        await self.app(scope, receive, send_hardened)


def all_secure(raw: list[tuple[bytes, bytes]]) -> list[tuple[bytes, bytes]]:
    """Response headers with every Set-Cookie marked Secure."""
    return [(k, v + b"; Secure") if k.lower() == b"set-cookie" and b"; secure" not in v.lower() else (k, v)
            for k, v in raw]


def secure_cookie(forced: bool, scope: Scope) -> bool:
    """Mark a cookie Secure: always when the setting says so, else when the request came over HTTPS (behind a
    trusted proxy, uvicorn has already applied X-Forwarded-Proto)."""
    return forced or scope.get("scheme") == "https"


async def require_csrf(request: Request) -> None:
    """Dependency for state-changing routes: the form field or header must carry the learner's token."""
    token = request.headers.get(CSRF_HEADER)
    if token is None:
        form = await request.form()
        value = form.get(CSRF_FIELD)
        token = value if isinstance(value, str) else None
    signer: Signer = request.app.state.signer
    if not signer.csrf_ok(request.state.learner_id, token):
        raise HTTPException(
            status_code=403,
            detail="This form has expired or did not come from this site. Reload the page and try again.",
        )
