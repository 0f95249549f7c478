"""Inline engine expressions in lesson prose: {{ plan(model="llama-3.1-8b").per_gpu.total | gb }}."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

from jinja2 import StrictUndefined, Template
from jinja2.sandbox import ImmutableSandboxedEnvironment

from app.engine.activations import korthikanti_activation_bytes
from app.engine.chips import workload_timing
from app.engine.compute import all_reduce, ridge
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

EXPRESSION = re.compile(r"\{\{(.+?)\}\}")


class ExpressionError(ValueError):
    """An inline expression that cannot be evaluated."""


def _engine_names() -> dict[str, Any]:
    """The names a lesson may use; each is the engine's own function or constant."""
    return {
        "plan": lambda **fields: make_plan(PlanRequest(**fields)),
        # a serving run's state after `seconds` of simulated traffic, as step 8's widget shows it
        "serving": lambda seed=0, seconds=60, **fields: simulate_serving(ServingRun(**fields), seed, seconds),
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
        "workload_timing": workload_timing,
        "training_sequence_tokens": RUN_SEQUENCE_TOKENS,
    }


class Evaluator:
    """Evaluates expressions in a sandbox that holds only the engine names and the format filters."""

    def __init__(self) -> None:
        self.env = ImmutableSandboxedEnvironment(undefined=StrictUndefined, autoescape=True)
        self.env.filters.update(FILTERS)
        self.env.globals.update(_engine_names())
        self._cache: dict[str, str] = {}
        self._plain = self.env.overlay(autoescape=False)  # text a template escapes itself (a drill's prompt)
        self._compiled: dict[str, Callable[..., Any]] = {}
        self._templates: dict[str, Template] = {}

    def evaluate(self, expression: str) -> str:
        """The expression's value as text (HTML-escaped); ExpressionError with a readable reason."""
        if expression not in self._cache:
            try:
                self._cache[expression] = self.env.from_string("{{" + expression + "}}").render()
            except Exception as exc:  # noqa: BLE001 - any failure is a lesson error to report
                raise ExpressionError(f"cannot evaluate {{{{{expression.strip()}}}}}: {exc}") from exc
        return self._cache[expression]

    def substitute(self, text: str) -> str:
        """Replace every {{ expression }} in a line of prose by its value."""
        return EXPRESSION.sub(lambda m: self.evaluate(m.group(1)), text)

    def value(self, expression: str, names: Mapping[str, Any] | None = None) -> Any:
        """The expression's value itself (a number, a string, a bool), with extra names such as a drill's
        parameters; ExpressionError with a readable reason."""
        try:
            if expression not in self._compiled:
                self._compiled[expression] = self.env.compile_expression(expression, undefined_to_none=False)
            return self._compiled[expression](**(names or {}))
        except Exception as exc:  # noqa: BLE001 - any failure is a lesson error to report
            raise ExpressionError(f"cannot evaluate {expression.strip()!r}: {exc}") from exc

    def text(self, template: str, names: Mapping[str, Any] | None = None) -> str:
        """Plain text (not HTML-escaped) with each {{ expression }} over the extra names replaced by its value."""
        try:
            if template not in self._templates:
                self._templates[template] = self._plain.from_string(template)
            return self._templates[template].render(**(names or {}))
        except Exception as exc:  # noqa: BLE001 - any failure is a lesson error to report
            raise ExpressionError(f"cannot evaluate {template.strip()!r}: {exc}") from exc

    def reserved(self) -> frozenset[str]:
        """The names an expression already has (the engine's, Jinja's): a drill parameter may not hide one."""
        return frozenset(self.env.globals)
