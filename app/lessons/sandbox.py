"""The sandbox lesson expressions run in, with a budget: no expression can run for long or build anything large.

Jinja's ImmutableSandboxedEnvironment keeps an expression away from files and Python's internals; it does not limit
CPU or memory (`{{ 9**(9**9) }}` computes for hours, `{{ 'x' | center(2000000000) }}` takes 2 GB). A watchdog
thread cannot stop a loop of Python code, so the limits are built into what an expression can do:

- every operation that can make something large is checked *before* it runs: `**` and `*` on whole numbers (their
  size in bits), `*` and `+` on strings and lists, `%` and the `format` filter (their widths), `center`, `join`,
  `replace`, `range`; nothing may hold more than MAX_SIZE characters or items (counted through nested lists);
- every call, filter, operator and `{% for %}` iteration is a step: an evaluation may take MAX_STEPS of them and
  MAX_SECONDS of its thread's CPU time;
- a template renders at most MAX_OUTPUT characters; `{% macro %}`, `{% call %}`, `{% filter %}`, block `{% set %}`
  and `{% include %}`/`{% import %}` are refused (they collect output where no limit sees it);
- the globals are the engine's names plus `range` (at most MAX_RANGE numbers), `dict` and `namespace`: no
  `lipsum`, `cycler` or `joiner`.

An overrun raises Overrun, which the lessons report as a problem at the expression's file and line.
"""

from __future__ import annotations

import functools
import inspect
import re
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

from jinja2 import nodes, pass_eval_context
from jinja2.exceptions import TemplateSyntaxError
from jinja2.filters import FILTERS as DEFAULT_FILTERS
from jinja2.nodes import EvalContext
from jinja2.runtime import Context, markup_join, str_join
from jinja2.sandbox import ImmutableSandboxedEnvironment
from jinja2.utils import Namespace
from jinja2.visitor import NodeTransformer

MAX_SIZE = 1_000_000  # characters of a string, items of a list (nested ones counted too)
MAX_OUTPUT = 1_000_000  # characters one template renders
MAX_INT_BITS = 10_000  # a whole number's size (about 3,000 digits)
MAX_WIDTH = 10_000  # a width, precision or digits argument (`center`, `%10.2f`, `gb(digits)`)
MAX_RANGE = 10_000  # numbers in one range()
MAX_STEPS = 200_000  # calls, filters, operators and loop iterations in one evaluation
MAX_SECONDS = 2.0  # CPU seconds of one evaluation
CHECK_CLOCK_EVERY = 256  # steps between looks at the clock
SIZE_CLOCK_EVERY = 16_384  # items a size count walks between looks at the clock (each look counts as a step)

# Jinja's own filters a lesson may use (each bounded by its input or checked below); the others (pprint, urlize,
# wordwrap, random, ...) are no use in a lesson and some can run for long on a large input.
JINJA_FILTERS = ("abs", "capitalize", "center", "count", "d", "default", "e", "escape", "first", "float", "format",
                 "int", "join", "last", "length", "list", "lower", "map", "max", "min", "reject", "rejectattr",
                 "replace", "reverse", "round", "select", "selectattr", "sort", "string", "sum", "title", "trim",
                 "truncate", "unique", "upper", "wordcount")
# Methods of Python's own types an expression may call: none builds more than its input.
SAFE_METHODS: dict[type, set[str]] = {
    str: {"lower", "upper", "title", "capitalize", "strip", "lstrip", "rstrip", "startswith", "endswith", "split",
          "count", "find", "isdigit", "isalpha"},
    dict: {"keys", "values", "items", "get"},
    list: {"index", "count"},
    tuple: {"index", "count"},
}
BLOCKED_TAGS = {nodes.Macro: "macro", nodes.CallBlock: "call", nodes.FilterBlock: "filter",
                nodes.AssignBlock: "set … endset", nodes.Include: "include", nodes.Import: "import",
                nodes.FromImport: "from … import", nodes.Extends: "extends", nodes.Block: "block"}
_PRINTF = re.compile(r"%(?:\([^)]*\))?[-#0 +]*(\*|\d+)?(?:\.(\*|\d+))?")


class Overrun(ValueError):
    """An expression that would take more time or memory than a lesson may use."""


class Budget:
    """What one evaluation has left: steps, CPU time and output characters."""

    def __init__(self, cancel: threading.Event | None) -> None:
        self.steps = 0
        self.deadline = time.thread_time() + MAX_SECONDS
        self.output = 0
        self.cancel = cancel

    def tick(self, clock: bool = False) -> None:
        """One more step; `clock`: look at the clock now (a call may be an engine function that takes a while)."""
        self.steps += 1
        if self.steps > MAX_STEPS:
            raise Overrun(f"it takes more than {MAX_STEPS:,} steps (operations, calls and loop turns); a lesson's "
                          "expression must be quick")
        if clock or self.steps % CHECK_CLOCK_EVERY == 0:
            if time.thread_time() > self.deadline:
                raise Overrun(f"it runs for more than {MAX_SECONDS:g} s; a lesson's expression must be quick")
            if self.cancel is not None and self.cancel.is_set():
                raise Overrun("the server is stopping")

    def emit(self, text: str) -> None:
        self.output += len(text)
        if self.output > MAX_OUTPUT:
            raise Overrun(f"it writes more than {MAX_OUTPUT:,} characters")


_budget: ContextVar[Budget | None] = ContextVar("lesson_expression_budget", default=None)
_cancel: ContextVar[threading.Event | None] = ContextVar("lesson_expression_cancel", default=None)


@contextmanager
def budget() -> Iterator[Budget]:
    """The budget of the evaluation under way, or a new one for the evaluation this starts."""
    current = _budget.get()
    if current is not None:
        yield current
        return
    fresh = Budget(_cancel.get())
    token = _budget.set(fresh)
    try:
        yield fresh
    finally:
        _budget.reset(token)


def cancel_on(event: threading.Event) -> None:
    """Evaluations started from this context from now on (threads it starts included) stop once `event` is set."""
    _cancel.set(event)


def tick(clock: bool = False) -> None:
    """Count one step against the evaluation under way (none: only the size checks apply)."""
    current = _budget.get()
    if current is not None:
        current.tick(clock)


def size(value: Any, limit: int = MAX_SIZE) -> int:
    """Characters and items in `value`, counted through nested lists, tuples and dicts; counting stops past
    `limit`, so a list holding itself a million times over costs no more than `limit` to measure. A long count
    looks at the evaluation's clock as it goes (a walk of a million items takes a good part of a second)."""
    total = 0
    stack = [value]
    walked = 0
    while stack:
        v = stack.pop()
        walked += 1
        if walked % SIZE_CLOCK_EVERY == 0:
            tick(clock=True)
        if isinstance(v, str):
            total += len(v)
        elif isinstance(v, list | tuple | set | frozenset | dict | range):
            total += max(1, len(v))
            if total <= limit and not isinstance(v, range):
                stack.extend(v.items() if isinstance(v, dict) else v)
        elif isinstance(v, Namespace):
            stack.extend(getattr(v, "_Namespace__attrs", {}).items())
        elif isinstance(v, int) and not isinstance(v, bool):
            total += max(1, v.bit_length() // 3)
        else:
            total += 1
        if total > limit:
            return total
    return total


def checked(value: Any, what: str = "the result") -> Any:
    """`value`, unless it holds more than MAX_SIZE characters or items."""
    if size(value) > MAX_SIZE:
        raise Overrun(f"{what} would hold more than {MAX_SIZE:,} characters or items")
    return value


def _bits(value: Any) -> int:
    return abs(value).bit_length() if isinstance(value, int) and not isinstance(value, bool) else 0


def _check_power(base: Any, exponent: Any) -> None:
    if _bits(base) > 1 and isinstance(exponent, int) and not isinstance(exponent, bool) and exponent > 0:
        if exponent * (_bits(base) - 1) > MAX_INT_BITS:
            raise Overrun(f"{base} ** {exponent} is a number of about {exponent * (_bits(base) - 1):,} bits; "
                          f"lesson numbers stay under {MAX_INT_BITS:,} bits")


def _check_product(left: Any, right: Any) -> None:
    if _bits(left) and _bits(right) and _bits(left) + _bits(right) > MAX_INT_BITS:
        raise Overrun(f"the product is a number of more than {MAX_INT_BITS:,} bits")
    for seq, times in ((left, right), (right, left)):
        if isinstance(seq, str | list | tuple) and isinstance(times, int) and not isinstance(times, bool):
            if times > 0 and size(seq) * times > MAX_SIZE:
                n = size(seq)
                raise Overrun(f"repeating {n:,} character{'s' if n != 1 else ''} or item{'s' if n != 1 else ''} "
                              f"{times:,} times would hold more than {MAX_SIZE:,}")


def _check_widths(spec: str) -> None:
    for match in _PRINTF.finditer(spec):
        for number in match.groups():
            if number == "*" or (number and int(number) > MAX_WIDTH):
                raise Overrun(f"a width or precision of {number} in {spec[:40]!r}; at most {MAX_WIDTH:,}")


def _check_printf(spec: Any, args: Any) -> None:
    if isinstance(spec, str):
        _check_widths(spec)
        checked(args, "the values formatted")


def _number_argument(name: str, args: tuple[Any, ...], kwargs: dict[str, Any], position: int = 1) -> None:
    value = kwargs.get(name, args[position] if len(args) > position else 0)
    if isinstance(value, int | float) and not isinstance(value, bool) and abs(value) > MAX_WIDTH:
        raise Overrun(f"{name}={value:g} is more than {MAX_WIDTH:,}")


def _before_filter(name: str, args: tuple[Any, ...], kwargs: dict[str, Any], digits: bool) -> None:
    """Refuse a filter call whose result would be too large, before it is built."""
    if name == "center":
        _number_argument("width", args, kwargs)
    elif name == "format" and args:
        _check_printf(args[0], (args[1:], kwargs))
    elif name == "replace" and len(args) >= 3:
        text, old, new = (str(a) for a in args[:3])
        grown = len(text) + (text.count(old) if old else len(text) + 1) * max(0, len(new) - len(old))
        if grown > MAX_SIZE:
            raise Overrun(f"the replaced text would hold more than {MAX_SIZE:,} characters")
    elif name == "round":
        _number_argument("precision", args, kwargs)
    elif name == "truncate":
        _number_argument("length", args, kwargs)
    elif digits:  # the engine's formatters: gb(digits), num(digits), ...
        _number_argument("digits", args, kwargs)


def _budgeted_filter(name: str, function: Callable[..., Any]) -> Callable[..., Any]:
    """The filter, counted as a step, refused when its result would be too large."""
    try:
        digits = "digits" in inspect.signature(function).parameters
    except (TypeError, ValueError):
        digits = False

    @functools.wraps(function)
    def run(*args: Any, **kwargs: Any) -> Any:
        tick()
        plain = args[1:] if getattr(function, "jinja_pass_arg", None) is not None else args
        _before_filter(name, plain, kwargs, digits)
        return checked(function(*args, **kwargs), f"the {name} filter's result")

    return run


@pass_eval_context
def _join(eval_ctx: EvalContext, value: Iterable[Any], d: str = "", attribute: str | int | None = None) -> str:
    """Jinja's join, refused when the text would be too large."""
    items = checked(list(value), "the list joined")
    if size(items) + len(str(d)) * len(items) > MAX_SIZE:
        raise Overrun(f"the joined text would hold more than {MAX_SIZE:,} characters")
    return str(DEFAULT_FILTERS["join"](eval_ctx, items, d, attribute))


def _sum(values: Iterable[Any], start: float = 0) -> float:
    """The numbers added up (a list of lists or of strings is refused: adding those up copies them again and
    again)."""
    total = start
    for v in values:
        tick()
        if not isinstance(v, int | float) or isinstance(v, bool):
            raise Overrun("sum adds numbers only")
        total += v
    return total


def bounded_range(*args: int) -> range:
    """Python's range, with at most MAX_RANGE numbers."""
    numbers = range(*args)
    if len(numbers) > MAX_RANGE:
        raise Overrun(f"range({', '.join(map(str, args))}) has {len(numbers):,} numbers; at most {MAX_RANGE:,}")
    return numbers


def _loop(iterable: Iterable[Any]) -> Iterator[Any]:
    """A `{% for %}` loop's items, each turn counted as a step."""
    for item in iterable:
        tick()
        yield item


@pass_eval_context
def _concat(eval_ctx: EvalContext, parts: list[Any]) -> str:
    """The `~` operator's parts joined, refused when the text would be too large."""
    if sum(size(p) for p in parts) > MAX_SIZE:
        raise Overrun(f"the text joined with ~ would hold more than {MAX_SIZE:,} characters")
    return markup_join(parts) if eval_ctx.autoescape else str_join(parts)


class _Budgeted(NodeTransformer):
    """Rewrites a template so that its loops, `~` and list literals pass through the budget."""

    def _call(self, name: str, node: nodes.Node) -> nodes.Call:
        return nodes.Call(nodes.EnvironmentAttribute(name), [node], [], None, None, lineno=node.lineno)

    def visit_For(self, node: nodes.For) -> nodes.Node:
        self.generic_visit(node)
        node.iter = self._call("budget_loop", node.iter)
        return node

    def visit_Concat(self, node: nodes.Concat) -> nodes.Node:
        self.generic_visit(node)
        return self._call("budget_concat", nodes.List(list(node.nodes), lineno=node.lineno))

    def visit_List(self, node: nodes.List) -> nodes.Node:
        self.generic_visit(node)
        return self._call("budget_checked", node)

    def visit_Dict(self, node: nodes.Dict) -> nodes.Node:
        self.generic_visit(node)
        return self._call("budget_checked", node)

    def visit_Tuple(self, node: nodes.Tuple) -> nodes.Node:
        self.generic_visit(node)
        return self._call("budget_checked", node) if node.ctx == "load" else node


class BudgetedSandbox(ImmutableSandboxedEnvironment):
    """Jinja's immutable sandbox with a step, time and size budget (see the module's docstring)."""

    intercepted_binops = frozenset({"*", "**", "%", "+", "//", "-", "/"})
    budget_loop = staticmethod(_loop)
    budget_concat = staticmethod(_concat)
    budget_checked = staticmethod(checked)

    def __init__(self, **options: Any) -> None:
        super().__init__(finalize=self._finalize, **options)
        self.filters = {name: self.filters[name] for name in JINJA_FILTERS} | {"join": _join, "sum": _sum}
        self.globals = {"range": bounded_range, "dict": dict, "namespace": Namespace}

    def budget_filters(self) -> None:
        """Wrap every filter (Jinja's and those added since) in the budget; call once the filters are all in."""
        self.filters = {name: _budgeted_filter(name, f) for name, f in self.filters.items()}

    @staticmethod
    def _finalize(value: Any) -> Any:
        return checked(value, "the value shown")

    def call_binop(self, context: Context, operator: str, left: Any, right: Any) -> Any:
        tick()
        if operator == "**":
            _check_power(left, right)
        elif operator == "*":
            _check_product(left, right)
        elif operator == "%":
            _check_printf(left, right)
        elif operator == "+" and size(left) + size(right) > MAX_SIZE:
            raise Overrun(f"the sum would hold more than {MAX_SIZE:,} characters or items")
        return self.binop_table[operator](left, right)

    def call(__self, __context: Context, __obj: Any, *args: Any, **kwargs: Any) -> Any:  # Jinja's own signature
        tick(clock=True)
        owner = getattr(__obj, "__self__", None)
        allowed = SAFE_METHODS.get(type(owner)) if owner is not None else None
        if allowed is not None and getattr(__obj, "__name__", "") not in allowed:
            raise Overrun(f"the method {type(owner).__name__}.{getattr(__obj, '__name__', '?')}() is not available "
                          "in lesson expressions; use a filter")
        return checked(super().call(__context, __obj, *args, **kwargs))

    def getattr(self, obj: Any, attribute: str) -> Any:
        tick()
        if type(obj) in SAFE_METHODS and callable(getattr(obj, attribute, None)):
            if attribute not in SAFE_METHODS[type(obj)]:
                return self.undefined(f"the method {type(obj).__name__}.{attribute}() is not available in lesson "
                                      "expressions; use a filter", obj=obj, name=attribute)
        return super().getattr(obj, attribute)

    def getitem(self, obj: Any, argument: Any) -> Any:
        tick()
        return super().getitem(obj, argument)

    def _generate(
        self, source: nodes.Template, name: str | None, filename: str | None, defer_init: bool = False
    ) -> str:
        for node in source.find_all(tuple(BLOCKED_TAGS)):
            raise TemplateSyntaxError(f"{{% {BLOCKED_TAGS[type(node)]} %}} is not available in lesson text",
                                      node.lineno, name, filename)
        tree = _Budgeted().visit(source)
        return super()._generate(tree, name, filename, defer_init)


def render(template: Any, names: dict[str, Any]) -> str:
    """A compiled template rendered within the evaluation's budget, output counted as it comes."""
    with budget() as b:
        out: list[str] = []
        for piece in template.generate(**names):
            b.emit(piece)
            out.append(piece)
        return "".join(out)
