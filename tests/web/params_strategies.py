"""Values for a widget's Params drawn from its own JSON schema, floats from the whole range the schema allows.

Every number field gets, besides hypothesis's own floats between its bounds: each inclusive bound, the float
just inside each bound, 0 and -0, the smallest subnormal (5e-324), the largest subnormal, the smallest normal
float and the largest finite float, each where the bounds let it in. A field with no bound ranges over every
finite float. Integers get their bounds, one inside each, and, without bounds, 64-bit and larger values.
`model` is drawn from the engine's catalog; other free text keeps its default (the bad-input tests cover text).
"""

from __future__ import annotations

import math
import sys
from typing import Any

from hypothesis import strategies as st
from pydantic import BaseModel

from app.engine.models import CATALOG

SUBNORMAL_MIN = 5e-324
SUBNORMAL_MAX = math.nextafter(sys.float_info.min, 0.0)
FLOAT_MAX = sys.float_info.max
PROBES = (0.0, -0.0, SUBNORMAL_MIN, SUBNORMAL_MAX, sys.float_info.min, 1.0, FLOAT_MAX, -FLOAT_MAX, -SUBNORMAL_MIN)
INT_PROBES = (0, 1, -1, 2**31 - 1, 2**31, 2**53 + 1, 2**63 - 1, 2**63, -(2**63), 10**30)


def _inside(value: float, spec: dict[str, Any]) -> bool:
    """The schema's bounds let this value in."""
    lo, hi = spec.get("minimum"), spec.get("maximum")
    xlo, xhi = spec.get("exclusiveMinimum"), spec.get("exclusiveMaximum")
    return ((lo is None or value >= lo) and (hi is None or value <= hi) and (xlo is None or value > xlo)
            and (xhi is None or value < xhi))


def float_edges(spec: dict[str, Any]) -> list[float]:
    """The probe values of a number field: its bounds, just inside each, and the float range's own edges."""
    lo = spec.get("minimum", spec.get("exclusiveMinimum"))
    hi = spec.get("maximum", spec.get("exclusiveMaximum"))
    lo = -FLOAT_MAX if lo is None else float(lo)
    hi = FLOAT_MAX if hi is None else float(hi)
    edges = [lo, hi, math.nextafter(lo, math.inf), math.nextafter(hi, -math.inf), *PROBES]
    return sorted({e for e in edges if _inside(e, spec)}, key=lambda e: (abs(e), e))


def int_edges(spec: dict[str, Any]) -> list[int]:
    """The probe values of an integer field: its bounds and one inside each, or 64-bit and larger values."""
    lo, hi = spec.get("minimum"), spec.get("maximum")
    edges = [v for v in (lo, hi, None if lo is None else lo + 1, None if hi is None else hi - 1) if v is not None]
    edges += [v for v in INT_PROBES if _inside(v, spec)]
    return sorted(set(edges))


def _floats(spec: dict[str, Any]) -> st.SearchStrategy[float]:
    lo = spec.get("minimum", spec.get("exclusiveMinimum"))
    hi = spec.get("maximum", spec.get("exclusiveMaximum"))
    drawn = st.floats(None if lo is None else float(lo), None if hi is None else float(hi),
                      exclude_min="exclusiveMinimum" in spec, exclude_max="exclusiveMaximum" in spec,
                      allow_nan=False, allow_infinity=False)  # subnormals wherever the bounds let them in
    return st.one_of(st.sampled_from(float_edges(spec)), drawn)


def _ints(spec: dict[str, Any]) -> st.SearchStrategy[int]:
    lo, hi = spec.get("minimum"), spec.get("maximum")
    drawn = st.integers(lo if lo is not None else -(2**64), hi if hi is not None else 2**64)
    return st.one_of(st.sampled_from(int_edges(spec)), drawn)


def field_strategy(name: str, spec: dict[str, Any], defs: dict[str, Any]) -> st.SearchStrategy[Any] | None:
    """Values of one field, from its schema; None for free text other than a model name."""
    if "$ref" in spec:
        spec = defs[spec["$ref"].split("/")[-1]]
    if "const" in spec:
        return st.just(spec["const"])
    if "enum" in spec:
        return st.sampled_from(spec["enum"])
    if "anyOf" in spec:
        options = [s for s in (field_strategy(name, o, defs) for o in spec["anyOf"]) if s is not None]
        return st.one_of(options) if options else None
    kind = spec.get("type")
    if kind == "null":
        return st.none()
    if kind == "number":
        return _floats(spec)
    if kind == "integer":
        return _ints(spec)
    if kind == "boolean":
        return st.booleans()
    if kind == "string" and name == "model":
        return st.sampled_from(sorted(CATALOG))
    return None


def number_fields(params: type[BaseModel]) -> dict[str, dict[str, Any]]:
    """Each number or integer field's schema (an optional one's number branch)."""
    schema = params.model_json_schema()
    defs = schema.get("$defs", {})
    found: dict[str, dict[str, Any]] = {}
    for name, spec in schema.get("properties", {}).items():
        spec = defs[spec["$ref"].split("/")[-1]] if "$ref" in spec else spec
        branch = next((o for o in spec.get("anyOf", [spec]) if o.get("type") in ("number", "integer")), None)
        if branch is not None:
            found[name] = branch
    return found


def edges_of(spec: dict[str, Any]) -> list[Any]:
    return float_edges(spec) if spec["type"] == "number" else int_edges(spec)


def params_values(params: type[BaseModel]) -> st.SearchStrategy[dict[str, Any]]:
    """Some of a Params model's fields (the rest keep their defaults), each drawn from its own schema."""
    schema = params.model_json_schema()
    defs = schema.get("$defs", {})
    fields = {k: s for k, s in ((k, field_strategy(k, v, defs)) for k, v in schema.get("properties", {}).items())
              if s is not None}
    return st.fixed_dictionaries({}, optional=fields)  # type: ignore[arg-type]


def as_query(values: dict[str, Any]) -> dict[str, str]:
    """Values as a query string carries them: floats by repr (exact), booleans lower case, None left out."""
    out: dict[str, str] = {}
    for key, value in values.items():
        if value is None:
            continue
        out[key] = str(value).lower() if isinstance(value, bool) else repr(value) if isinstance(value, float) \
            else str(value)
    return out
