"""schemathesis over the whole OpenAPI document, against a real server: every operation (the pages, the
classroom, the companion, each widget, the JSON API) with schemathesis's checks, and nothing reported.

Bounded: a few examples per operation, derandomized, so it runs in well under a minute. Requests carry a
learner cookie and its CSRF token (the server's secret is the e2e one), so the forms reach their own checks.
Excluded check: positive_data_acceptance, as in test_api_fuzz.py: a schema-valid request may still be refused
by a rule the schema cannot say (an empty class title, a plan that does not fit, a name taken): 422 or 409
with a sentence, which the other checks hold to the document.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from itsdangerous import URLSafeSerializer
from schemathesis.checks import positive_data_acceptance

from tests.e2e.conftest import Server, start_server, stop_server
from tests.tally import held
from tests.web.params_strategies import field_strategy

LEARNER = "00000000-0000-4000-8000-000000000001"
EXAMPLES = 6


@pytest.fixture(scope="module")
def api_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    data = Path(tmp_path_factory.mktemp("openapi")) / "data"
    data.mkdir()
    srv = start_server(data)
    yield srv
    stop_server(srv)


def test_schemathesis_reports_nothing_on_the_whole_document(api_server: Server) -> None:
    schema = schemathesis.openapi.from_url(api_server.url + "/openapi.json")
    cookie = URLSafeSerializer("e2e-secret", salt="learner").dumps(LEARNER)
    token = URLSafeSerializer("e2e-secret", salt="csrf").dumps(LEARNER)
    failures: dict[str, str] = {}
    operations = 0
    for result in schema.get_all_operations():
        operation = result.ok()
        operations += 1

        @settings(max_examples=EXAMPLES, derandomize=True, deadline=None, database=None,
                  suppress_health_check=list(HealthCheck))
        @given(case=operation.as_strategy())
        def probe(case: schemathesis.Case) -> None:
            case.call_and_validate(headers={"X-CSRF-Token": token}, cookies={"gc_learner": cookie},
                                   excluded_checks=[positive_data_acceptance])

        try:
            probe()
        except Exception as exc:  # noqa: BLE001 - every operation is probed; all failures are reported together
            failures[operation.label] = str(exc)[:1500]
    assert operations > 60  # the pages, the API and one operation per widget
    assert not failures, "\n\n".join(f"{label}:\n{text}" for label, text in failures.items())


def test_every_widget_is_an_operation_with_its_parameters(client: object) -> None:
    from fastapi.testclient import TestClient

    from app.widgets.registry import all_widgets

    assert isinstance(client, TestClient)
    doc = client.get("/openapi.json").json()
    for name, widget in all_widgets().items():
        op = doc["paths"][f"/widgets/{name}"]["get"]
        assert {p["name"] for p in op["parameters"]} == set(widget.params.model_fields), name
        assert {"200", "404", "422"} <= set(op["responses"]) and "text/html" in op["responses"]["200"]["content"]
    mfu = next(p for p in doc["paths"]["/widgets/plan"]["get"]["parameters"] if p["name"] == "mfu")
    number = next(s for s in mfu["schema"]["anyOf"] if s.get("type") == "number")  # or null: the engine's own
    assert number["minimum"] == 0.01  # the engine's own bound
    join = doc["paths"]["/join"]["post"]["responses"]
    assert {"303", "403", "409", "410", "413", "422", "429"} <= set(join)


# Values no schema offers, sent in place of any field of an /api body: non-finite numbers (Python's json writes
# them as NaN and Infinity, which a JSON parser may read), the float range's edges, a huge integer, text with
# NUL, long text, and the wrong shapes.
HOSTILE: list[object] = [math.nan, math.inf, -math.inf, 1e308, -1e308, 5e-324, -0.0, 10**30, 10**400, "\u0000",
                         "x" * 10_000, None, [], {}, [[[[]]]], True, ""]
API_EXAMPLES = 40


def _api_bodies(doc: dict[str, Any]) -> list[tuple[str, st.SearchStrategy[dict[str, Any]]]]:
    """Each /api POST operation of the document and a strategy of its JSON bodies: every field from its own
    schema (floats over the whole range: tests/web/params_strategies.py) or a hostile value, now and then a
    field the schema does not have."""
    defs = doc["components"]["schemas"]
    found = []
    for path, ops in sorted(doc["paths"].items()):
        body = ops.get("post", {}).get("requestBody", {}).get("content", {}).get("application/json")
        if not path.startswith("/api") or body is None:
            continue
        spec = body["schema"]
        ref = spec["$ref"] if "$ref" in spec else next(o["$ref"] for o in spec["anyOf"] if "$ref" in o)
        props = defs[ref.split("/")[-1]].get("properties", {})
        fields = {name: st.one_of(st.sampled_from(HOSTILE), *_own(name, p, defs)) for name, p in props.items()}
        bodies = st.fixed_dictionaries({}, optional={**fields, "not_a_field": st.sampled_from(HOSTILE)})
        found.append((path.replace("{name}", "bytes-per-parameter"), bodies))
    return found


def _own(name: str, spec: dict[str, Any], defs: dict[str, Any]) -> list[st.SearchStrategy[Any]]:
    """The field's own values, when its schema says what they are."""
    own = field_strategy(name, spec, defs)
    return [] if own is None else [own]


def test_hostile_and_whole_range_api_bodies_are_answered_or_refused_in_a_sentence(api_server: Server) -> None:
    """Hypothesis over the /api bodies, through the real server and its guard: never a 5xx; a refusal is a 4xx
    whose every message is a sentence."""
    doc = httpx.get(api_server.url + "/openapi.json").json()
    operations = _api_bodies(doc)
    assert {p for p, _ in operations} >= {"/api/plan", "/api/cost", "/api/training-run", "/api/serving-run"}
    with httpx.Client(base_url=api_server.url, timeout=30) as client:
        for path, bodies in operations:
            _probe_bodies(client, path, bodies)


def _probe_bodies(client: httpx.Client, path: str, bodies: st.SearchStrategy[dict[str, Any]]) -> None:
    @settings(max_examples=API_EXAMPLES, derandomize=True, deadline=None, database=None,
              suppress_health_check=list(HealthCheck))
    @given(body=bodies)
    def probe(body: dict[str, Any]) -> None:
        with held("the /api bodies"):
            r = client.post(path, content=json.dumps(body), headers={"Content-Type": "application/json"})
            assert r.status_code < 500, (path, body, r.status_code, r.text[:500])
            if r.status_code >= 400:
                detail = r.json()["detail"]
                texts = [d.get("message") or d.get("msg") for d in detail] if isinstance(detail, list) else [detail]
                assert texts and all(isinstance(t, str) and t.strip() for t in texts), (path, r.text[:500])

    probe()
