"""Learner identity (a signed cookie), CSRF tokens and security headers."""

from __future__ import annotations

import hmac
import uuid
from collections.abc import Awaitable, Callable

from fastapi import HTTPException, Request, Response
from itsdangerous import BadSignature, URLSafeSerializer

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
    """Signs learner ids and derives CSRF tokens from them."""

    def __init__(self, secret: str) -> None:
        self.cookie = URLSafeSerializer(secret, salt="learner")
        self.csrf = URLSafeSerializer(secret, salt="csrf")

    def learner_from(self, raw: str | None) -> str | None:
        if not raw:
            return None
        try:
            value = self.cookie.loads(raw)
        except BadSignature:
            return None
        return value if isinstance(value, str) and len(value) == 36 else None

    def csrf_token(self, learner_id: str) -> str:
        return str(self.csrf.dumps(learner_id))

    def csrf_ok(self, learner_id: str, token: str | None) -> bool:
        return bool(token) and hmac.compare_digest(self.csrf_token(learner_id), token or "")


def learner_middleware(
    signer_of: Callable[[Request], Signer], secure: bool
) -> Callable[[Request, Callable[[Request], Awaitable[Response]]], Awaitable[Response]]:
    """Give every visitor a learner id; set the signed cookie when it is new."""

    async def middleware(request: Request, call_next: Callable[[Request], Awaitable[Response]]) -> Response:
        signer = signer_of(request)
        learner = signer.learner_from(request.cookies.get(LEARNER_COOKIE))
        is_new = learner is None
        request.state.learner_id = learner or str(uuid.uuid4())
        request.state.csrf_token = signer.csrf_token(request.state.learner_id)
        response = await call_next(request)
        if is_new and not request.url.path.startswith(("/static", "/healthz", "/api")):
            response.set_cookie(
                LEARNER_COOKIE,
                signer.cookie.dumps(request.state.learner_id),
                max_age=ONE_YEAR,
                httponly=True,
                samesite="lax",
                secure=secure,
            )
        return response

    return middleware


async def headers_middleware(request: Request, call_next: Callable[[Request], Awaitable[Response]]) -> Response:
    """Content-Security-Policy of 'self' and the usual hardening headers on every response."""
    response = await call_next(request)
    response.headers.setdefault("Content-Security-Policy", CSP)
    response.headers.setdefault("X-Content-Type-Options", "nosniff")
    response.headers.setdefault("Referrer-Policy", "same-origin")
    response.headers.setdefault("X-Frame-Options", "DENY")
    return response


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
