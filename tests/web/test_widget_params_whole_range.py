"""Every widget's Params, at the engine boundary, over the whole float range its schema allows.

For each widget, values drawn from its own Params schema (params_strategies.py: subnormals, the largest finite
float, each bound and the float just inside it) go straight into the Params model and the widget's compute, then
through the widget's lifecycle (the same text a query string carries) and its template, as an htmx update
renders it. The claims: the engine answers or refuses with an engine error (which the page shows beside a
field); a figure it answers is a finite number; the rendered result never reads `nan` or `inf`. A systematic
pass puts every pair of number fields at their edges together, since one extreme can break another (a
subnormal `load` broke the room's node count only when `room_kw` was set).
"""

from __future__ import annotations

import itertools
import math
import re
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from pydantic import BaseModel, ValidationError

from app.engine.errors import EngineError
from app.pages.contexts import widget_view
from app.web.panel import panel_update
from app.web.templating import Templates
from app.widgets.registry import all_widgets
from tests.tally import held
from tests.web.params_strategies import as_query, edges_of, number_fields, params_values

WIDGETS = sorted(all_widgets())
EXAMPLES = 40
TEMPLATES = Templates()
# A figure that went wrong on screen: "nan", "inf" or "infinity" as a word (InfiniBand is a word of its own).
NOT_A_NUMBER = re.compile(r"(?<![\w.-])-?(nan|inf|infinity)(?![\w-])", re.IGNORECASE)


def _non_finite(value: Any, path: str = "result") -> list[str]:
    """Where a computed result holds NaN or an infinity."""
    if isinstance(value, float):
        return [] if math.isfinite(value) else [f"{path}={value}"]
    if isinstance(value, BaseModel):
        return [p for k in type(value).model_fields for p in _non_finite(getattr(value, k), f"{path}.{k}")]
    if isinstance(value, dict):
        return [p for k, v in value.items() for p in _non_finite(v, f"{path}[{k!r}]")]
    if isinstance(value, list | tuple):
        return [p for i, v in enumerate(value) for p in _non_finite(v, f"{path}[{i}]")]
    return []


def _text(html: str) -> str:
    """What a reader sees: the HTML without its tags and attribute values."""
    return re.sub(r"<[^>]*>", " ", html)


def check_widget(name: str, values: dict[str, Any]) -> None:
    """One set of values through the Params, the compute and the rendered update."""
    with held("widget inputs across the float range"):
        _check_widget(name, values)


def _check_widget(name: str, values: dict[str, Any]) -> None:
    widget = all_widgets()[name]
    try:
        params = widget.params.model_validate(values)
    except ValidationError:
        params = None  # a rule across fields refused them: the lifecycle below shows its message
    if params is not None:
        try:
            result = widget.compute(params)
        except (EngineError, ValidationError):
            pass  # the engine refuses: the service shows the message beside a field (checked below)
        else:
            assert not _non_finite(result), (name, values, _non_finite(result)[:5])
    view = widget_view(widget, {}, as_query(values), index=1)
    html = TEMPLATES.blocks(widget.template, ["result", "errors"], w=view, oob=True)
    if view.node is not None:
        html += panel_update(TEMPLATES, view.node, None)
    seen = NOT_A_NUMBER.search(_text(html))
    assert seen is None, (name, values, _text(html)[max(0, seen.start() - 200):seen.end() + 100])
    if view.errors:
        assert set(view.errors) <= set(widget.params.model_fields), (name, view.errors)
        assert all(message.strip() for message in view.errors.values()), (name, view.errors)


@pytest.mark.parametrize("name", WIDGETS)
def test_any_params_a_widget_accepts_are_computed_or_refused_and_render_as_numbers(name: str) -> None:
    params = all_widgets()[name].params

    @settings(max_examples=EXAMPLES, derandomize=True, deadline=None, database=None,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
    @given(values=params_values(params))
    def probe(values: dict[str, Any]) -> None:
        check_widget(name, values)

    probe()


def edge_pairs(params: type[BaseModel]) -> list[dict[str, Any]]:
    """Each number field at each of its edges alone, then every pair of number fields at their outer edges
    (the smallest and largest values each allows, and the values just inside them)."""
    fields = number_fields(params)
    alone = [{k: e} for k, spec in fields.items() for e in edges_of(spec)]
    outer = {k: _outer(edges_of(spec)) for k, spec in fields.items()}
    pairs = [{a: x, b: y} for a, b in itertools.combinations(fields, 2) for x in outer[a] for y in outer[b]]
    return alone + pairs


def _outer(edges: list[Any]) -> list[Any]:
    """The smallest magnitudes and the extremes of a field's edges: where arithmetic overflows or vanishes."""
    ordered = sorted(edges)
    small = sorted((e for e in edges if e != 0), key=abs)[:2]
    return list(dict.fromkeys([ordered[0], ordered[-1], *small]))


@pytest.mark.parametrize("name", WIDGETS)
def test_every_pair_of_number_fields_at_their_edges_is_computed_or_refused(name: str) -> None:
    for values in edge_pairs(all_widgets()[name].params):
        check_widget(name, values)


def test_the_denormal_load_in_a_room_is_answered_with_the_nodes_it_holds() -> None:
    """The probe's power-energy reproductions (reliability review, F3): each one computes and renders."""
    for values in ({"nodes": 64, "load": 4.9e-324, "room_kw": 0.5}, {"load": 4.9e-324, "room_kw": 10000.0},
                   {"load": 5e-324, "room_kw": 1e-12}, {"load": 2.2250738585072014e-308, "room_kw": 64, "days": 1e30},
                   {"load": 4.9e-324, "room_kw": 1.0000000001},
                   {"load": 4.9e-324, "room_kw": 0.5, "days": 1, "price_per_kwh": -1e-300, "kg_co2_per_kwh": -0.0}):
        check_widget("power-energy", values)
