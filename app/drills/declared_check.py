"""The self-check of a drill declared in a lesson: the block's format, then, over many draws and every combination
of listed values and range ends, the expressions, the mistakes and the answers, each problem at its YAML line.
The server runs it when it loads the lessons and `gpu-classroom check` runs it with its own number of seeds."""

from __future__ import annotations

import itertools
import json
import keyword
import math
import random
import re
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import yaml
from pydantic import ValidationError

from app.drills import answers as read
from app.drills.author_errors import messages
from app.drills.base import Drill, Part, close, write
from app.drills.declarative import (
    IDENT,
    SELF_CHECK_SEEDS,
    Declared,
    DeclaredDrillError,
    DrillSpec,
    Expressions,
    Path,
    build,
    parse,
)
from app.engine.text import SUPERSCRIPT, gb, gib

MAX_CORNERS = 500  # every combination of listed values and range ends is checked when there are at most this many
CLASS_SIZE = 30  # a drill with fewer different questions than this gets a warning: neighbours share questions
SPACE_SEEDS = 500  # draws counted to see how many different questions a drill has
RESERVED = ("answer",)  # a name a solution has besides the parameters and lets
_NUMBER = r"(?P<num>\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?)"
_FIGURE = re.compile(rf"(?P<eq>[=≈]\s*(?:about\s+)?)?(?<![\d.,]){_NUMBER}(?!\.\d)\s?(?P<unit>[A-Za-z]+)?")


class Located(str):
    """A problem message with its line counted from the block's first body line (the loader adds the block's);
    `warning`: worth knowing, but the drill works."""

    offset: int
    warning: bool

    def __new__(cls, message: str, offset: int, warning: bool = False) -> Located:
        obj = super().__new__(cls, message)
        obj.offset = offset
        obj.warning = warning
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


def line_of(lines: Mapping[Path, int], path: Sequence[str | int]) -> int:
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
                          "out with require"))
    solution = drill.solve(q)
    found += [(("parts",), m) for m in check_question(drill, q, solution)]
    shown = " ".join([q.title, q.prompt, *(g.text for g in q.givens), *solution.hints])
    worked = " ".join(solution.solution)
    for i, p in enumerate(q.parts):
        value = expected[p.id]
        if p.kind == "size" and isinstance(value, float) and value > 0 and any(
                text in shown for text in (gb(value), gib(value))):
            found.append((("parts", i, "answer"), "the question or a hint shows this part's answer"))
        if p.kind in ("size", "per_parameter", "count") and isinstance(value, float):
            trouble = answer_trouble(p, value, worked)
            if trouble:
                found.append((("parts", i, "answer"), trouble))
    return found


def shows_as_zero(part: Part, value: float) -> bool:
    """Whether a learner would read this expected value as 0 in the part's unit ('Expected: 0.00 GB')."""
    if part.kind == "count":
        return value != 0 and float(write(part, value).split()[0].replace(",", "") or 0) == 0
    number = re.search(r"\d[\d,]*(?:\.\d+)?", write(part, value))
    return number is not None and float(number.group(0).replace(",", "")) == 0


def figures(part: Part, text: str) -> list[tuple[float, float, str, bool]]:
    """The figures of the worked solution written in the part's kind of unit: (value in the part's base units, how
    far the rounding shown may be from it, as written, whether it follows '=' as the result of a step)."""
    out = []
    for m in _FIGURE.finditer(text):
        number, unit = m.group("num"), (m.group("unit") or "")
        value = float(number.replace(",", ""))
        step = 0.5 * 10 ** -len(number.partition(".")[2]) if "." in number else 0.5
        if part.kind == "size":
            scale = read.SIZE_UNITS.get(unit.lower()) if unit.lower() != "b" else None
        elif part.kind == "per_parameter":
            scale = 1.0 if unit.lower() in ("byte", "bytes") else None
        elif part.unit:
            scale = 1.0 if unit.lower().rstrip("s") == part.unit.lower().rstrip("s") and unit else None
        else:
            scale = 1.0 if not unit else None
        if scale is not None:
            out.append((value * scale, step * scale, f"{number} {unit}".strip(), bool(m.group("eq"))))
    return out


def _times(ratio: float) -> str:
    """How many times a figure is another: 'twice', 'half', '10⁹ times', '0.8 times'."""
    for near, words in ((2, "twice"), (0.5, "half"), (4, "four times"), (0.25, "a quarter of")):
        if math.isclose(ratio, near, rel_tol=0.02):
            return words
    power = math.log10(ratio) if ratio > 0 else 0
    if abs(power) >= 2 and math.isclose(power, round(power), abs_tol=0.01):
        return f"10{str(round(power)).translate(SUPERSCRIPT)} times"
    return f"{ratio:.3g} times"


def answer_trouble(part: Part, value: float, worked: str) -> str:
    """What is wrong between a numeric part's graded answer and the worked solution, or '': the answer must not
    read as 0 in its unit, and must be a figure the solution shows (a result after '=', when it has any in that
    unit), within the part's tolerance or the rounding the solution shows."""
    expected = write(part, value)
    problems = []
    if shows_as_zero(part, value) or (value == 0 and part.kind != "count"):
        base = f"{value:,.3g} bytes" if part.kind == "size" else f"{value:g}"
        problems.append(f"the graded answer is {base}, which a learner reads as '{expected}'"
                        + (": a size answer is in bytes, as the engine gives them (is it divided by 10⁹ once too "
                           "often?)" if part.kind == "size" else ""))
    shown = figures(part, worked)
    results = [f for f in shown if f[3]] or shown
    if not any(abs(v - value) <= max(step, part.tolerance * value, 1e-9 * abs(value)) for v, step, _, _ in results):
        if not shown:
            unit, shown_as = part.unit or "its unit", "gb" if part.kind == "size" else "num"
            problems.append(f"the worked solution never shows the graded answer ({expected}) in {unit}: end it with "
                            f"the figure, such as {{{{ answer.{part.id} | {shown_as} }}}}")
        else:
            last = results[-1]
            times = _times(value / last[0]) if last[0] else "not"
            which = "result" if last[3] else "last figure in that unit"
            problems.append(f"the worked solution's {which} is {last[2]}, but the graded answer is {expected}: "
                            f"{times} the solution's figure; fix the answer or the solution")
    return "; ".join(problems)


def question_space(d: Declared, seeds: int = SPACE_SEEDS) -> int:
    """How many different questions the drill draws, counted over `seeds` draws (at most `seeds`)."""
    seen = set()
    for seed in range(seeds):
        seen.add(json.dumps(d.draw(random.Random(seed)), sort_keys=True, default=str))
    return len(seen)


def check(params: Mapping[str, Any], source: str, ex: Expressions, seeds: int = SELF_CHECK_SEEDS,
          name: str = "drill") -> list[Located]:
    """Problems with a declared drill block, each at its line: the format, then, over `seeds` draws and every
    combination of listed values and range ends, an expression that fails, runs too long or gives the wrong kind
    of value, a mistake graded right or shadowed by another, the expected answer not scoring or not matching the
    worked solution, unreadable input graded; and a warning when the drill has too few different questions."""
    lines = yaml_lines(source)
    try:
        spec = parse(params)
    except ValidationError as exc:
        return [Located(f"drill {name}: {msg}", line_of(lines, loc)) for loc, msg in messages(exc, DrillSpec)]
    problems = _name_problems(spec, ex, name, lines)
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
            if exc.overrun:  # one report; more draws would only spend the same time again
                first.setdefault(exc.path, str(exc))
                break
        for path, message in found:
            first.setdefault(path, f"{message} (parameters {values}{', ' + what if what else ''})")
    located = [Located(f"drill {name}: {_where(path)}: {msg}", line_of(lines, path)) for path, msg in first.items()]
    if not located and spec.parameters:
        count = question_space(declared)
        if count < CLASS_SIZE:
            located.append(Located(
                f"drill {name}: parameters: only {count} different question{'s' if count != 1 else ''}: in a class "
                f"of {CLASS_SIZE} some learners share one, and two neighbours get the same question about once in "
                f"{count}; add choices, or draw a number from a range", line_of(lines, ("parameters",)), warning=True))
    return located


def _name_problems(spec: DrillSpec, ex: Expressions, name: str, lines: Mapping[Path, int]) -> list[Located]:
    """Parameter and let names that are not identifiers, hide an engine name or repeat another name."""
    problems = []
    for group, names in (("parameters", list(spec.parameters)), ("let", list(spec.let))):
        for k in names:
            at = line_of(lines, (group, k))
            if not IDENT.match(k) or keyword.iskeyword(k):
                problems.append(Located(f"drill {name}: {group}.{k}: a name must be a lowercase identifier", at))
            elif k in ex.reserved() or k in RESERVED:
                problems.append(Located(f"drill {name}: {group}.{k}: '{k}' is a name expressions already have "
                                        "(an engine name, or answer); call it something else", at))
            elif group == "let" and k in spec.parameters:
                problems.append(Located(f"drill {name}: let.{k}: '{k}' is already a parameter", at))
    return problems
