"""Fuzz the /api routes from their OpenAPI document: no 500, every 4xx explains itself.

Bounded and repeatable: 50 examples per operation, derandomized (the same inputs on every run). The
routes run on a bare app with the app's own error handlers: /api needs no database or session, and
schemathesis's pytest fixtures do not yet work with this pytest, so the schema is built at import.
test_api.py checks that create_app serves the same router.
"""

from __future__ import annotations

import schemathesis
from fastapi import FastAPI
from hypothesis import HealthCheck, settings
from schemathesis.specs.openapi.checks import positive_data_acceptance

from app.web import api, errors


def _api_app() -> FastAPI:
    """The /api router with the app's error handlers and the engine's."""
    app = FastAPI(title="GPU Classroom API")
    errors.install(app)
    app.include_router(api.router)
    api.install(app)
    return app


schema = schemathesis.openapi.from_asgi("/openapi.json", _api_app())


def _messages(body: dict[str, object]) -> list[object]:
    """The sentences of an error body: each detail's message, or the detail itself."""
    detail = body["detail"]
    if isinstance(detail, list):
        return [e.get("message") or e.get("msg") for e in detail if isinstance(e, dict)]
    return [detail]


@schema.parametrize()
@settings(
    max_examples=50,
    derandomize=True,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)
def test_the_api_never_fails_and_explains_every_refusal(case: schemathesis.Case) -> None:
    # A schema-valid request may still be refused: rules across fields (experts_per_token ≤ experts) and
    # plans that do not fit in memory (a serving run of a model too large for its GPUs) answer 422.
    response = case.call_and_validate(excluded_checks=[positive_data_acceptance])
    assert response.status_code < 500
    if 400 <= response.status_code < 500:
        messages = _messages(response.json())
        assert messages and all(isinstance(m, str) and m.strip() for m in messages), response.text
