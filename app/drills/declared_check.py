"""The self-check of a drill declared in a lesson: the block's format, then, over many draws and every combination
of listed values and range ends, the expressions, the mistakes and the answers, each problem at its YAML line.
The server runs it when it loads the lessons and `gpu-classroom check` runs it with its own number of seeds."""

from __future__ import annotations

import itertools
import keyword
import math
import random
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import yaml
from pydantic import ValidationError

from app.drills.base import Drill, close
from app.drills.declarative import (
    IDENT,
    SELF_CHECK_SEEDS,
    Declared,
    DeclaredDrillError,
    Expressions,
    Path,
    build,
    parse,
)
from app.engine.text import gb, gib

MAX_CORNERS = 500  # every combination of listed values and range ends is checked when there are at most this many


class Located(str):
    """A problem message with its line counted from the block's first body line (the loader adds the block's)."""

    offset: int

    def __new__(cls, message: str, offset: int) -> Located:
        obj = super().__new__(cls, message)
        obj.offset = offset
        return obj


def yaml_lines(source: str) -> dict[Path, int]:
    """The line (from 1, within the block's body) of each key and item of the YAML, by its path."""
    lines: dict[Path, int] = {}
    try:
        root = yaml.compose(source)
    except yaml.YAMLError:
        return lines

    def walk(node: yaml.Node, path: Path) -> None:
        lines[path] = node.start_mark.line + 1
        if isinstance(node, yaml.MappingNode):
            for key, value in node.value:
                lines[(*path, str(key.value))] = key.start_mark.line + 1
                walk(value, (*path, str(key.value)))
                lines[(*path, str(key.value))] = key.start_mark.line + 1
        elif isinstance(node, yaml.SequenceNode):
            for i, item in enumerate(node.value):
                walk(item, (*path, i))

    if root is not None:
        walk(root, ())
    return lines


def _line(lines: Mapping[Path, int], path: Sequence[str | int]) -> int:
    for n in range(len(path), -1, -1):
        if tuple(path[:n]) in lines:
            return lines[tuple(path[:n])]
    return 0


def _where(path: Sequence[str | int]) -> str:
    return ".".join(str(p) for p in path) or "block"


def _draws(d: Declared, seeds: int) -> Iterator[tuple[str, dict[str, Any] | None, int]]:
    """(what, parameters, seed) to check: each seed's draw, then every combination of listed values and range
    ends (when there are few enough) that meets `require`; parameters None means: draw from the seed."""
    for seed in range(seeds):
        yield f"seed {seed}", None, seed
    spec = d.spec.parameters
    corners = [draw.corners() for draw in spec.values()]
    if math.prod(len(c) for c in corners) <= MAX_CORNERS:
        for combo in itertools.product(*corners):
            yield "", dict(zip(spec, combo, strict=True)), 0


def _one_draw(d: Declared, drill: Drill, values: dict[str, Any], seed: int) -> list[tuple[Path, str]]:
    """Problems with one question, each with the path of the YAML it comes from."""
    from app.drills.selfcheck import check_question

    if not d.meets_require(values):
        return []
    q = d.question(values).model_copy(update={"seed": seed})
    expected = d.expected(q)
    found: list[tuple[Path, str]] = []
    for v in d.variants(q):
        if q.part(v.part).kind in ("choice", "yes_no"):
            continue  # the message of a wrong option: it applies only when that option is wrong
        i = next(n for n, p in enumerate(d.spec.parts) if p.id == v.part)
        j = next(n for n, m in enumerate(d.spec.parts[i].mistakes) if m.id == v.id)
        tol = q.part(v.part).tolerance
        if close(v.value, expected[v.part], tol) or close(expected[v.part], v.value, tol):
            found.append((("parts", i, "mistakes", j, "answer"),
                          f"mistake '{v.id}' equals the right answer (within {tol * 100:g} %), so it would be graded "
                          "right: make it differ, return none where it does not apply, or rule these parameters "
                          "out with require"))  # fmt: skip
    solution = drill.solve(q)
    found += [(("parts",), m) for m in check_question(drill, q, solution)]
    shown = " ".join([q.title, q.prompt, *(g.text for g in q.givens), *solution.hints])
    for i, p in enumerate(q.parts):
        value = expected[p.id]
        if p.kind == "size" and isinstance(value, float) and value > 0 and any(
                text in shown for text in (gb(value), gib(value))):  # fmt: skip
            found.append((("parts", i, "answer"), "the question or a hint shows this part's answer"))
    return found


def check(params: Mapping[str, Any], source: str, ex: Expressions, seeds: int = SELF_CHECK_SEEDS,
          name: str = "drill") -> list[Located]:  # fmt: skip
    """Problems with a declared drill block, each at its line: the format, then, over `seeds` draws and every
    combination of listed values and range ends, an expression that fails or gives the wrong kind of value, a
    mistake graded right or shadowed by another, the expected answer not scoring, unreadable input graded."""
    lines = yaml_lines(source)
    try:
        spec = parse(params)
    except ValidationError as exc:
        return [Located(f"drill {name}: {_where(e['loc'])}: {e['msg']}", _line(lines, e["loc"])) for e in exc.errors()]
    problems = [Located(f"drill {name}: parameters.{k}: a parameter's name must be a lowercase identifier", _line(
        lines, ("parameters", k))) for k in spec.parameters if not IDENT.match(k) or keyword.iskeyword(k)]
    problems += [Located(f"drill {name}: parameters.{k}: '{k}' is an engine name; call the parameter something else",
                         _line(lines, ("parameters", k))) for k in spec.parameters if k in ex.reserved()]
    if problems:
        return problems
    declared = Declared(name=name, spec=spec, ex=ex)
    drill = build(name, spec, ex)
    first: dict[Path, str] = {}
    for what, values, seed in _draws(declared, seeds):
        try:
            values = declared.draw(random.Random(seed)) if values is None else values
            found = _one_draw(declared, drill, values, seed)
        except DeclaredDrillError as exc:
            found = [(exc.path, str(exc))]
        for path, message in found:
            first.setdefault(path, f"{message} (parameters {values}{', ' + what if what else ''})")
    return [Located(f"drill {name}: {_where(path)}: {msg}", _line(lines, path)) for path, msg in first.items()]
