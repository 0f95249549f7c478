"""Validation errors in a lesson author's words: the key as written in the YAML, the keys there are, the closest
one to a misspelt key, and never a pydantic link, a class name or a learner's example.

`messages(exc, model)` turns a pydantic ValidationError of a block, front matter or lesson.yaml into
(path, sentence) pairs; the caller puts each at the line of its key (declared_check.yaml_lines).
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Sequence
from typing import Any, get_args, get_origin

from pydantic import BaseModel, ValidationError

Path = tuple[str | int, ...]


def suggest(word: str, names: Sequence[str]) -> str:
    """' (did you mean X?)' for the name closest to `word`, or ''."""
    close = difflib.get_close_matches(word, list(names), n=1, cutoff=0.6)
    return f" (did you mean {close[0]}?)" if close else ""


def _inner(annotation: Any) -> tuple[type[BaseModel] | None, bool]:
    """The model inside a field's type (X, list[X], dict[str, X], X | None), and whether it is a dict's value."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation, False
    for arg in get_args(annotation):
        model, _ = _inner(arg)
        if model is not None:
            return model, get_origin(annotation) is dict
    return None, False


def model_at(model: type[BaseModel], path: Path) -> type[BaseModel] | None:
    """The model that the mapping at `path` (keys and list positions) is read as, if it is one."""
    current: type[BaseModel] | None = model
    dict_key = False
    for part in path:
        if dict_key:
            dict_key = False
            continue
        if isinstance(part, int) or current is None:
            continue
        field = current.model_fields.get(part)
        if field is None:
            return None
        current, dict_key = _inner(field.annotation)
    return current


def _names(model: type[BaseModel], path: Path) -> list[str]:
    parent = model_at(model, tuple(path))
    return list(parent.model_fields) if parent else []


def where(path: Path) -> str:
    """A path as an author finds it: parts.0.tolerance."""
    return ".".join(str(p) for p in path) or "the block"


def _number(value: Any) -> str:
    return f"{value:,}" if isinstance(value, int | float) and not isinstance(value, bool) else str(value)


def sentence(error: Any, model: type[BaseModel]) -> str:
    """One pydantic error as a sentence for an author, without its location."""
    loc: Path = tuple(error["loc"])
    kind, ctx, given = error.get("type", ""), error.get("ctx") or {}, error.get("input")
    if kind == "extra_forbidden":
        parent = model_at(model, loc[:-1])
        names = list(parent.model_fields) if parent else []
        listed = f"; the keys here: {', '.join(names)}" if names else ""
        return f"unknown key '{loc[-1]}'{suggest(str(loc[-1]), names)}{listed}"
    if kind == "missing":
        return f"the key '{loc[-1]}' is missing" if loc else "a key is missing"
    if kind in ("float_parsing", "int_parsing", "float_type", "int_type", "int_from_float", "finite_number"):
        whole = "a whole number" if kind.startswith("int") else "a number"
        sci = isinstance(given, str) and re.fullmatch(r"\d+(\.\d+)?[eE][+-]?\d+", given.strip()) is not None
        return f"{given!r} is not {whole}" + (" (YAML reads 8e9 as text: write 8.0e+9)" if sci else "")
    if kind in ("bool_parsing", "bool_type"):
        return f"{given!r} is not true or false"
    if kind in ("literal_error", "enum"):
        return f"{given!r} is not one of {ctx.get('expected', 'the listed values')}"
    if kind in ("greater_than_equal", "greater_than"):
        return f"{_number(given)} is below the least allowed, {_number(ctx.get('ge', ctx.get('gt')))}"
    if kind in ("less_than_equal", "less_than"):
        return f"{_number(given)} is above the most allowed, {_number(ctx.get('le', ctx.get('lt')))}"
    if kind in ("string_too_short", "too_short"):
        return "must not be empty" if ctx.get("min_length", 1) <= 1 else f"needs at least {ctx['min_length']} items"
    if kind in ("string_too_long", "too_long"):
        return f"is too long (at most {ctx.get('max_length')})"
    if kind == "string_pattern_mismatch":
        return f"{given!r} must be lowercase words, digits or _ and - (it is a name: such as kv-size or weights)"
    if kind in ("dict_type", "model_type", "model_attributes_type"):
        return "must be a mapping of keys to values (key: value on lines of their own)"
    if kind == "list_type":
        return "must be a list: [a, b] or lines starting with '- '"
    if kind == "string_type":
        return f"{given!r} must be text"
    return str(error.get("msg", "is not valid")).removeprefix("Value error, ").removeprefix("Assertion failed, ")


def messages(exc: ValidationError, model: type[BaseModel]) -> list[tuple[Path, str]]:
    """Each error of `exc` (raised validating `model`) as (its path, 'path: sentence')."""
    out = []
    errors = exc.errors(include_url=False)
    misspelt: set[tuple[Path, str]] = set()  # (parent, key) of each missing key that an unknown key beside it misspells
    for e in errors:
        if e.get("type") == "extra_forbidden" and e["loc"]:
            parent = tuple(e["loc"][:-1])
            close = difflib.get_close_matches(str(e["loc"][-1]), _names(model, parent), n=1, cutoff=0.6)
            misspelt.update((parent, c) for c in close)
    for error in errors:
        loc = tuple(error["loc"])
        if error.get("type") == "missing" and loc and (loc[:-1], loc[-1]) in misspelt:
            continue  # 'titel' is there: saying 'title' is missing as well says the same twice
        shown = loc[:-1] if error.get("type") in ("extra_forbidden", "missing") else loc
        out.append((loc, f"{where(shown)}: {sentence(error, model)}" if shown else sentence(error, model)))
    return out
