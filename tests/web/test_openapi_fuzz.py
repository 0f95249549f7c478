"""schemathesis over the whole OpenAPI document, against a real server: every operation (the pages, the
classroom, the companion, each widget, the JSON API) with schemathesis's checks, and nothing reported.

Bounded: a few examples per operation, derandomized, so it runs in well under a minute. Requests carry a
learner cookie and its CSRF token (the server's secret is the e2e one), so the forms reach their own checks.
Excluded check: positive_data_acceptance, as in test_api_fuzz.py: a schema-valid request may still be refused
by a rule the schema cannot say (an empty class title, a plan that does not fit, a name taken): 422 or 409
with a sentence, which the other checks hold to the document.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from itsdangerous import URLSafeSerializer
from schemathesis.checks import positive_data_acceptance

from tests.e2e.conftest import Server, start_server, stop_server

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
    assert mfu["schema"]["minimum"] == 0.01  # the engine's own bound
    join = doc["paths"]["/join"]["post"]["responses"]
    assert {"303", "403", "409", "410", "413", "422", "429"} <= set(join)
