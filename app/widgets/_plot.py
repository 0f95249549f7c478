"""Geometry for the plan-family widgets' inline SVG charts: templates only place what is computed here."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

from pydantic import BaseModel, Field

from app.engine.text import SUPERSCRIPT


class Tick(BaseModel):
    """An axis tick: its value, its position in SVG units and its label."""

    value: float
    pos: float
    label: str


class Segment(BaseModel):
    """A piece of a stacked bar."""

    key: str = Field(description="Component key, used as a CSS class")
    label: str
    value: float
    x: float
    width: float


def nice_step(span: float, target: int = 5) -> float:
    """A 1, 2, 2.5 or 5 × 10ⁿ step that cuts `span` into about `target` pieces."""
    if span <= 0:
        return 1.0
    raw = span / target
    power = 10.0 ** math.floor(math.log10(raw))
    for mult in (1, 2, 2.5, 5, 10):
        if raw <= mult * power:
            return mult * power
    return 10 * power


def linear_ticks(top: float, length: float, label: Callable[[float], str], target: int = 5) -> list[Tick]:
    """Ticks from 0 to at least `top`, placed on an axis `length` units long that ends at the last tick."""
    step = nice_step(top, target)
    count = max(1, math.ceil(top / step - 1e-9))
    return [
        Tick(value=i * step, pos=round(length * i / count, 2), label=label(i * step))
        for i in range(count + 1)
    ]


def stacked(parts: Sequence[tuple[str, str, float]], scale: float) -> list[Segment]:
    """Consecutive segments of a horizontal bar, `scale` SVG units per unit of value; empty parts skipped."""
    x, out = 0.0, []
    for key, label, value in parts:
        if value <= 0:
            continue
        out.append(Segment(key=key, label=label, value=value, x=round(x, 2), width=round(value * scale, 2)))
        x += value * scale
    return out


def power_label(exponent: int) -> str:
    """10 to a power, with a real superscript: 10¹²."""
    return "10" + str(exponent).translate(SUPERSCRIPT)


class LogAxis(BaseModel):
    """A base-10 logarithmic axis from 10^lo to 10^hi over `length` SVG units."""

    lo: int
    hi: int
    length: float
    flip: bool = Field(default=False, description="True for a vertical axis drawn downward from the top")

    def pos(self, value: float) -> float:
        """Position of a value, clamped to the axis."""
        frac = (math.log10(max(value, 10.0**self.lo)) - self.lo) / (self.hi - self.lo)
        frac = min(max(frac, 0.0), 1.0)
        return round(self.length * (1 - frac) if self.flip else self.length * frac, 2)

    def ticks(self, label: Callable[[int], str] = power_label) -> list[Tick]:
        """A tick at every power of ten."""
        return [
            Tick(value=10.0**e, pos=self.pos(10.0**e), label=label(e)) for e in range(self.lo, self.hi + 1)
        ]
