"""Fuzz the drills API from its OpenAPI document: no 500, responses match their schema, refusals explain."""

from __future__ import annotations

from pathlib import Path

import schemathesis
from fastapi import FastAPI
from hypothesis import HealthCheck, settings
from schemathesis.specs.openapi.checks import positive_data_acceptance

from app.lessons.loader import load_lessons
from app.web import drills, errors

DECLARED = Path(__file__).resolve().parents[1] / "fixtures" / "declared"  # a lesson declaring its own drill


def _drills_app() -> FastAPI:
    app = FastAPI(title="GPU Classroom drills API")
    errors.install(app)
    app.include_router(drills.api)
    app.state.lessons, _ = load_lessons(DECLARED)
    return app


schema = schemathesis.openapi.from_asgi("/openapi.json", _drills_app())


@schema.parametrize()
@settings(max_examples=60, derandomize=True, deadline=None, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
def test_the_drills_api_never_fails_and_explains_every_refusal(case: schemathesis.Case) -> None:
    # Answers that match the schema may still be unreadable ("12 parsecs"): those answer 422.
    response = case.call_and_validate(excluded_checks=[positive_data_acceptance])
    assert response.status_code < 500
    if 400 <= response.status_code < 500:
        detail = response.json()["detail"]
        messages = [d.get("message") or d.get("msg") for d in detail] if isinstance(detail, list) else [detail]
        assert messages and all(isinstance(m, str) and m.strip() for m in messages), response.text
