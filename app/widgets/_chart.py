"""Layout of the part-B widgets' inline SVG charts: a plot area, round ticks, and points in SVG units.

Widgets compute positions here so that templates only place what they are given. (The plan-family
widgets have their own helper, _plot.py.)
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

from pydantic import BaseModel, Field


class Tick(BaseModel):
    """A labelled tick: its position in SVG units along its axis and its text."""

    pos: float
    label: str


class Frame(BaseModel):
    """A chart's box, plot area and axes, in SVG units."""

    width: int
    height: int
    left: float
    right: float
    top: float
    bottom: float
    x_label: str
    y_label: str
    x_ticks: list[Tick] = Field(default_factory=list)
    y_ticks: list[Tick] = Field(default_factory=list)

    @property
    def x_label_x(self) -> float:
        return (self.left + self.right) / 2

    @property
    def x_label_y(self) -> float:
        return self.height - 4

    @property
    def y_label_x(self) -> float:
        """The y label is drawn rotated by -90°, so its x is minus the middle of the plot's height."""
        return -(self.top + self.bottom) / 2


def nice_step(span: float, count: int = 5) -> float:
    """A round step (1, 2 or 5 × 10ⁿ) giving about `count` intervals over `span`."""
    if span <= 0:
        return 1.0
    raw = span / count
    power = 10 ** math.floor(math.log10(raw))
    for m in (1, 2, 5, 10):
        if raw <= m * power:
            return float(m * power)
    return float(10 * power)


def nice_max(value: float, count: int = 5) -> float:
    """The smallest multiple of a round step at or above `value` (1 when value is 0)."""
    if value <= 0:
        return 1.0
    step = nice_step(value, count)
    return math.ceil(value / step - 1e-9) * step


def ticks(lo: float, hi: float, count: int = 5) -> list[float]:
    """Round values from lo to hi, about `count` intervals apart."""
    step = nice_step(hi - lo, count)
    first = math.ceil(lo / step - 1e-9) * step
    values, v = [], first
    while v <= hi + step * 1e-6:
        values.append(round(v, 12))
        v += step
    return values


class Plot:
    """Maps data to SVG units inside a frame (linear axes)."""

    def __init__(
        self,
        width: int,
        height: int,
        x_max: float,
        y_max: float,
        *,
        x_min: float = 0.0,
        y_min: float = 0.0,
        left: float = 58,
        right: float = 14,
        top: float = 10,
        bottom: float = 40,
    ) -> None:
        self.width, self.height = width, height
        self.left, self.right = left, width - right
        self.top, self.bottom = top, height - bottom
        self.x_min, self.x_max = x_min, x_max if x_max > x_min else x_min + 1
        self.y_min, self.y_max = y_min, y_max if y_max > y_min else y_min + 1

    def x(self, value: float) -> float:
        share = (value - self.x_min) / (self.x_max - self.x_min)
        return round(self.left + (self.right - self.left) * min(max(share, 0.0), 1.0), 2)

    def width_of(self, span: float) -> float:
        """The SVG width of `span` data units along x, unclamped (x() clamps positions to the plot area, so
        x(b) - x(a) is 0 for a span outside the visible range)."""
        return (self.right - self.left) * span / (self.x_max - self.x_min)

    def y(self, value: float) -> float:
        share = (value - self.y_min) / (self.y_max - self.y_min)
        return round(self.bottom - (self.bottom - self.top) * min(max(share, 0.0), 1.0), 2)

    def points(self, xs: Sequence[float], ys: Sequence[float]) -> str:
        """An SVG polyline's points attribute."""
        return " ".join(f"{self.x(a)},{self.y(b)}" for a, b in zip(xs, ys, strict=True))

    def frame(
        self,
        x_label: str,
        y_label: str,
        x_fmt: Callable[[float], str],
        y_fmt: Callable[[float], str],
        x_count: int = 5,
        y_count: int = 4,
    ) -> Frame:
        """The axes with round ticks labelled by the given formatters."""
        return Frame(
            width=self.width,
            height=self.height,
            left=self.left,
            right=self.right,
            top=self.top,
            bottom=self.bottom,
            x_label=x_label,
            y_label=y_label,
            x_ticks=[Tick(pos=self.x(v), label=x_fmt(v))
                     for v in distinct_ticks(self.x_min, self.x_max, x_fmt, x_count)],
            y_ticks=[Tick(pos=self.y(v), label=y_fmt(v))
                     for v in distinct_ticks(self.y_min, self.y_max, y_fmt, y_count)],
        )


def distinct_ticks(lo: float, hi: float, fmt: Callable[[float], str], count: int) -> list[float]:
    """Round ticks whose labels all differ as formatted: fewer, wider-spaced ticks until no two read the same (a
    count of requests from 0 to 1 is labelled 0 and 1, never "1, 0, 0" from a 0.5 rounded by its formatter)."""
    for n in range(max(count, 1), 0, -1):
        values = ticks(lo, hi, n)
        labels = [fmt(v) for v in values]
        if len(set(labels)) == len(labels):
            return values
    return [lo]
