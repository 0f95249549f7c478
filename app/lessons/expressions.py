"""Inline engine expressions in lesson prose: {{ plan(model="llama-3.1-8b").per_gpu.total | gb }}."""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable, Mapping
from functools import cached_property
from typing import Any

from jinja2 import StrictUndefined, Template, TemplateSyntaxError, Undefined, UndefinedError
from pydantic import BaseModel, ValidationError

from app.drills.declarative import Overrun as DrillOverrun
from app.engine.activations import korthikanti_activation_bytes
from app.engine.chips import workload_timing
from app.engine.compute import all_reduce, collective_bandwidth, ridge
from app.engine.decode import decode_roofline
from app.engine.hardware import get_gpu, node
from app.engine.memory import bytes_per_parameter, weight_bytes
from app.engine.models import get_model
from app.engine.plan import PlanRequest, make_plan
from app.engine.serving_run import ServingRun, simulate_serving
from app.engine.text import FILTERS
from app.engine.training_run import RUN_SEQUENCE_TOKENS
from app.engine.training_state import training_bytes_per_parameter
from app.engine.workload import FP8_SPEEDUP
from app.lessons.sandbox import BudgetedSandbox, Overrun, budget, checked, render

EXPRESSION = re.compile(r"\{\{(.+?)\}\}")
MAX_SERVING_SECONDS = 3600  # serving(seconds=...) simulates second by second: an hour at most
# The engine's request models, by the name an expression calls them under (an error names the call, not the class).
CALLED_AS = {"PlanRequest": "plan()", "ServingRun": "serving()"}
# What an engine object is, in an author's words (an error about a field it lacks names it so).
KNOWN_AS = {"Architecture": "model(…)", "Plan": "plan(…)", "MemoryBreakdown": "plan(…).per_gpu",
            "ServeFigures": "plan(…).serve", "TrainFigures": "plan(…).train", "GPU": "gpu(…)", "Node": "node()"}


class ExpressionError(ValueError):
    """An inline expression that cannot be evaluated."""


class ExpressionOverrun(ExpressionError, DrillOverrun):
    """An expression stopped by its budget (too long, too large): reported once, never retried."""


def _engine_names() -> dict[str, Any]:
    """The names a lesson may use; each is the engine's own function or constant."""
    return {
        "plan": lambda **fields: make_plan(PlanRequest(**fields)),
        # a serving run's state after `seconds` of simulated traffic, as step 8's widget shows it
        "serving": _serving,
        "model": get_model,
        "gpu": get_gpu,
        "node": node,
        "bytes_per_parameter": bytes_per_parameter,
        "training_bytes_per_parameter": training_bytes_per_parameter,
        "weight_bytes": weight_bytes,
        "textbook_activation_bytes": korthikanti_activation_bytes,
        "fp8_speedup": FP8_SPEEDUP,
        "ridge": ridge,
        "decode_roofline": decode_roofline,
        "all_reduce": all_reduce,
        "collective_bandwidth": collective_bandwidth,
        "workload_timing": workload_timing,
        "training_sequence_tokens": RUN_SEQUENCE_TOKENS,
    }


def _serving(seed: int = 0, seconds: float = 60, **fields: Any) -> Any:
    """serving(): the serving run's state after `seconds` of simulated traffic (at most an hour)."""
    if not 0 <= seconds <= MAX_SERVING_SECONDS:
        raise ValueError(f"serving(): seconds={seconds:g}; give 0 to {MAX_SERVING_SECONDS:,}")
    return simulate_serving(ServingRun(**fields), seed, seconds)


LESSON_FILTERS: dict[str, Callable[..., str]] = FILTERS


def fields_of(obj: BaseModel) -> list[str]:
    """The names an expression can read on an engine object: its fields and its computed counts."""
    cls = type(obj)
    computed = [n for n in dir(cls) if not n.startswith(("_", "model_"))
                and isinstance(getattr(cls, n, None), property | cached_property)]
    return list(dict.fromkeys([*cls.model_fields, *cls.model_computed_fields, *computed]))


class LessonSandbox(BudgetedSandbox):
    """The budgeted sandbox, with an author's words for a field an engine object does not have."""

    def getattr(self, obj: Any, attribute: str) -> Any:
        value = super().getattr(obj, attribute)
        if isinstance(obj, BaseModel) and isinstance(value, StrictUndefined):
            names = fields_of(obj)
            close = difflib.get_close_matches(attribute, names, n=1)
            guess = f" (did you mean {close[0]}?)" if close else ""
            what = KNOWN_AS.get(type(obj).__name__, "this value")
            return self.undefined(f"{what} has no field '{attribute}'{guess}; its fields: {', '.join(names)}",
                                  obj=obj, name=attribute)
        return value


def author_reason(exc: BaseException) -> str:
    """Why an expression failed, in an author's words: no pydantic links, class names or learner wording."""
    if isinstance(exc, ValidationError):
        call = CALLED_AS.get(exc.title, "the engine")  # never an internal class name
        return "; ".join(f"{call} {'.'.join(map(str, e['loc'])) or 'value'}={e['input']!r}: "
                         f"{str(e['msg']).removeprefix('Value error, ')}" if e["loc"] else
                         f"{call}: {str(e['msg']).removeprefix('Value error, ')}" for e in exc.errors())
    if isinstance(exc, Overrun):
        return f"stopped: {exc} (lesson expressions are limited so that no lesson can slow the server down)"
    if isinstance(exc, UndefinedError):
        return _undefined_reason(str(exc))
    if isinstance(exc, TemplateSyntaxError):
        return f"bad syntax: {exc.message}"
    if isinstance(exc, RecursionError):
        return "stopped: it nests too deeply"
    return re.sub(r"'[\w.]+ object'", "the value", str(exc)) or type(exc).__name__


def _undefined_reason(text: str) -> str:
    """'x' is undefined, as an author reads it: the names there are, and the closest."""
    match = re.fullmatch(r"'(\w+)' is undefined", text)
    if match is None:
        return re.sub(r"'[\w.]+ object'", "the value", text)
    names = sorted(_engine_names())
    close = difflib.get_close_matches(match.group(1), names, n=1)
    guess = f" (did you mean {close[0]}?)" if close else ""
    return f"'{match.group(1)}' is not a name lessons know{guess}; the names: {', '.join(names)}"


class Evaluator:
    """Evaluates expressions in a budgeted sandbox that holds only the engine names and the format filters."""

    def __init__(self) -> None:
        self.env = LessonSandbox(undefined=StrictUndefined, autoescape=True)
        self.env.filters.update(LESSON_FILTERS)
        self.env.budget_filters()
        self.env.globals.update(_engine_names())
        self._cache: dict[str, str] = {}
        self._plain = self.env.overlay(autoescape=False)  # text a template escapes itself (a drill's prompt)
        self._compiled: dict[str, Callable[..., Any]] = {}
        self._templates: dict[str, Template] = {}

    def evaluate(self, expression: str) -> str:
        """The expression's value as text (HTML-escaped); ExpressionError with a readable reason."""
        if expression not in self._cache:
            try:
                with budget():
                    self._cache[expression] = render(self.env.from_string("{{" + expression + "}}"), {})
            except Exception as exc:  # noqa: BLE001 - any failure is a lesson error to report
                raise _error(f"{{{{{expression.strip()}}}}}", exc) from exc
        return self._cache[expression]

    def substitute(self, text: str) -> str:
        """Replace every {{ expression }} in a line of prose by its value."""
        return EXPRESSION.sub(lambda m: self.evaluate(m.group(1)), text)

    def value(self, expression: str, names: Mapping[str, Any] | None = None) -> Any:
        """The expression's value itself (a number, a string, a bool), with extra names such as a drill's
        parameters; ExpressionError with a readable reason."""
        try:
            with budget():
                if expression not in self._compiled:
                    self._compiled[expression] = self.env.compile_expression(expression, undefined_to_none=False)
                result = self._compiled[expression](**(names or {}))
                if isinstance(result, Undefined):
                    str(result)  # a strict undefined raises here, with its reason (a field the object lacks)
                return checked(result)
        except Exception as exc:  # noqa: BLE001 - any failure is a lesson error to report
            raise _error(repr(expression.strip()), exc) from exc

    def text(self, template: str, names: Mapping[str, Any] | None = None) -> str:
        """Plain text (not HTML-escaped) with each {{ expression }} over the extra names replaced by its value."""
        try:
            with budget():
                if template not in self._templates:
                    self._templates[template] = self._plain.from_string(template)
                return render(self._templates[template], dict(names or {}))
        except Exception as exc:  # noqa: BLE001 - any failure is a lesson error to report
            raise _error(repr(template.strip()), exc) from exc

    def reserved(self) -> frozenset[str]:
        """The names an expression already has (the engine's, Jinja's): a drill parameter may not hide one."""
        return frozenset(self.env.globals)


def _error(what: str, exc: BaseException) -> ExpressionError:
    """The ExpressionError to raise for `exc` (an overrun stays one, so it is not tried again)."""
    kind = ExpressionOverrun if isinstance(exc, Overrun | RecursionError | MemoryError) else ExpressionError
    return kind(f"cannot evaluate {what}: {author_reason(exc)}")
