"""Numbers written into the engine's explanation sentences, one way everywhere."""

from __future__ import annotations

from app.engine.units import GB, SECONDS_PER_DAY, SECONDS_PER_HOUR, SECONDS_PER_YEAR, TB

_SUPERSCRIPT = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")


def gb(nbytes: float, digits: int = 2) -> str:
    """Bytes as decimal gigabytes: '16.06 GB'; from 100,000 GB on, terabytes: '6,493.7 TB'."""
    if nbytes >= 1e5 * GB:
        return f"{nbytes / TB:,.1f} TB"
    return f"{nbytes / GB:,.{digits}f} GB"


def num(value: float) -> str:
    """A count with thousands separators: '131,072'."""
    return f"{value:,.0f}"


def billions(value: float) -> str:
    """A parameter count in billions: '8.03 B'."""
    return f"{value / 1e9:,.2f} B"


def sci(value: float, digits: int = 1) -> str:
    """A large number in scientific notation: '3.8 × 10²⁵'."""
    if value == 0:
        return "0"
    mantissa, exponent = f"{value:.{digits}e}".split("e")
    return f"{mantissa} × 10{str(int(exponent)).translate(_SUPERSCRIPT)}"


def seconds(value: float) -> str:
    """A duration in the unit a person would use: '4.79 ms', '34 hours', '66 days', '7.2 years'."""
    if value < 1e-3:
        return f"{value * 1e6:.1f} µs"
    if value < 1:
        return f"{value * 1e3:.2f} ms"
    if value < 120:
        return f"{value:.2f} s"
    if value < 2 * SECONDS_PER_HOUR:
        return f"{value / 60:.0f} minutes"
    if value < 3 * SECONDS_PER_DAY:
        return f"{value / SECONDS_PER_HOUR:.0f} hours"
    if value < SECONDS_PER_YEAR:
        return f"{value / SECONDS_PER_DAY:.0f} days"
    if value < 1000 * SECONDS_PER_YEAR:
        return f"{value / SECONDS_PER_YEAR:,.1f} years"
    return f"{value / SECONDS_PER_YEAR:,.0f} years"


def pct(value: float) -> str:
    """A share as a percentage: '40 %'."""
    return f"{value * 100:.0f} %"


def tflops(value: float) -> str:
    """FLOP/s in TFLOPS: '989 TFLOPS'."""
    return f"{value / 1e12:,.0f} TFLOPS"
