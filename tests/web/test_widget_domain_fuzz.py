"""Every widget's inputs are the engine's domain: whatever its Params schema allows, the engine computes.

A hypothesis test per widget draws query strings from the widget's Params JSON schema, its bounds and the
smallest positive float (5e-324) included, and sends them as htmx, without JavaScript and through a lesson
step's share link: no 500, and a refusal (422) names the field it is about.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from app.main import create_app
from app.widgets.registry import all_widgets
from tests.conftest import make_settings

HX = {"HX-Request": "true"}
TINY = 5e-324  # the smallest positive float: sums and ratios over it overflow or vanish
WIDGETS = sorted(all_widgets())


@pytest.fixture(scope="module")
def widget_client(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TestClient]:
    with TestClient(create_app(make_settings(Path(tmp_path_factory.mktemp("domain"))))) as c:
        yield c


def _number(spec: dict[str, Any], integer: bool) -> st.SearchStrategy[str]:
    lo, hi = spec.get("minimum"), spec.get("maximum")
    xlo, xhi = spec.get("exclusiveMinimum"), spec.get("exclusiveMaximum")
    if integer:
        low = lo if lo is not None else (xlo + 1 if xlo is not None else -(2**40))
        high = hi if hi is not None else (xhi - 1 if xhi is not None else 2**40)
        edges = [low, high, min(low + 1, high), max(high - 1, low)]
        return st.one_of(st.sampled_from(edges), st.integers(low, high)).map(str)
    low = lo if lo is not None else xlo
    high = hi if hi is not None else xhi
    low = float(low) if low is not None else -1e300
    high = float(high) if high is not None else 1e300
    edges = [v for v in (lo, hi) if v is not None]
    if xlo is not None:
        edges.append(math.nextafter(float(xlo), math.inf))
        if xlo == 0:
            edges.append(TINY)
    if xhi is not None:
        edges.append(math.nextafter(float(xhi), -math.inf))
    if lo == 0:
        edges.append(TINY)
    edges += [v for v in (sys.float_info.min, 1e-300, 1e-9, 0.005, 0.1) if low < v < high]
    floats = st.floats(low, high, exclude_min=xlo is not None, exclude_max=xhi is not None, allow_nan=False,
                       allow_infinity=False)
    return st.one_of(st.sampled_from(edges), floats).map(repr)


def _field(spec: dict[str, Any], defs: dict[str, Any]) -> st.SearchStrategy[str] | None:
    if "$ref" in spec:
        spec = defs[spec["$ref"].split("/")[-1]]
    if "enum" in spec:
        return st.sampled_from([str(v).lower() if isinstance(v, bool) else str(v) for v in spec["enum"]])
    if "anyOf" in spec:
        options = [s for s in (_field(o, defs) for o in spec["anyOf"]) if s is not None]
        return st.one_of(options) if options else None
    kind = spec.get("type")
    if kind in ("number", "integer"):
        return _number(spec, kind == "integer")
    if kind == "boolean":
        return st.sampled_from(["true", "false"])
    return None  # free text: covered by the bad-input tests


def query_strategy(name: str) -> st.SearchStrategy[dict[str, str]]:
    schema = all_widgets()[name].params.model_json_schema()
    defs = schema.get("$defs", {})
    fields = {k: s for k, s in ((k, _field(v, defs)) for k, v in schema.get("properties", {}).items())
              if s is not None}
    return st.fixed_dictionaries({}, optional=fields)  # type: ignore[arg-type]


def _check(client: TestClient, name: str, query: dict[str, str]) -> None:
    fields = all_widgets()[name].params.model_fields
    for headers in (HX, {}):
        r = client.get(f"/widgets/{name}", params=query, headers=headers)
        assert r.status_code in (200, 286, 422), (name, query, r.status_code, r.text[-600:])
        if r.status_code == 422:
            named = [f for f in fields if f'id="w1-{f}-error"' in r.text and
                     f'id="w1-{f}-error"></p>' not in r.text and f'id="w1-{f}-error" hx-swap-oob="true"></p>'
                     not in r.text]
            assert named, (name, query, "a refusal names no field", r.text[-600:])


@pytest.mark.parametrize("name", WIDGETS)
def test_no_input_a_widget_accepts_breaks_its_engine(widget_client: TestClient, name: str) -> None:
    @settings(max_examples=20, derandomize=True, deadline=None, database=None,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
    @given(query=query_strategy(name))
    def probe(query: dict[str, str]) -> None:
        _check(widget_client, name, query)

    probe()


@pytest.mark.parametrize(("url", "field"), [
    ("/widgets/plan?mfu=0.005", "mfu"),
    ("/widgets/own-vs-rent?years=0.1", "years"),
    ("/widgets/own-vs-rent?rent_per_gpu_hour=0.001", "rent_per_gpu_hour"),
])
def test_the_inputs_that_were_500s_are_answered(widget_client: TestClient, url: str, field: str) -> None:
    for headers in (HX, {}):
        r = widget_client.get(url, headers=headers)
        assert r.status_code in (200, 422), (url, r.status_code)
        if r.status_code == 422:
            assert f'id="w1-{field}-error"' in r.text


def test_a_share_link_past_the_engine_domain_is_a_422_beside_the_field(tmp_path: Path) -> None:
    from tests.conftest import LESSONS

    with TestClient(create_app(make_settings(tmp_path, LESSONS))) as c:
        r = c.get("/lessons/what-ai-workloads-need/1?w2.mfu=0.005")
        assert r.status_code in (200, 422)
        assert r.status_code == 200 or 'id="w2-mfu-error"' in r.text


def test_a_widget_input_takes_its_range_from_the_engine_field_it_feeds() -> None:
    from app.engine.cost import CostAssumptions
    from app.engine.workload import PlanRequest

    def bounds(model: Any, name: str) -> dict[str, Any]:
        schema = model.model_json_schema()["properties"][name]
        keys = ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum")
        # an optional number (null: the engine works it out) keeps its bounds on the number branch
        parts = [schema, *schema.get("anyOf", [])]
        return {k: v for part in parts for k, v in part.items() if k in keys}

    widgets = all_widgets()
    assert bounds(widgets["plan"].params, "mfu") == bounds(PlanRequest, "mfu")
    for mine, engine in (("years", "years"), ("rent_per_gpu_hour", "rent_usd_per_gpu_hour"),
                         ("purchase_price", "purchase_usd"), ("power_price", "electricity_usd_per_kwh")):
        assert bounds(widgets["own-vs-rent"].params, mine) == bounds(CostAssumptions, engine)
