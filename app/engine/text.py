"""How the engine writes its numbers: one formatter for the engine's sentences, the templates (as Jinja filters)
and lesson prose, so a unit is written one way everywhere.

Bytes climb one ladder (GB up to 100,000 GB, then TB); durations one (µs, ms, s, minutes, hours, days, years), each to
three significant figures so a small time never reads as zero.
"""

from __future__ import annotations

from collections.abc import Callable
from decimal import ROUND_HALF_UP, Decimal

from app.engine.units import GB, SECONDS_PER_DAY, SECONDS_PER_HOUR, SECONDS_PER_YEAR, TB, GiB, TiB

SUPERSCRIPT = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")
TB_FROM = 1e5 * GB  # from 100,000 GB on a size is written in TB: '6,493.7 TB', never '6,493,700.00 GB'


def num(value: float, digits: int = 0) -> str:
    """A number with thousands separators: 8030261248 -> '8,030,261,248'."""
    return f"{value:,.{digits}f}"


GB_DIGITS = 2  # a GB figure is worked out to two decimals, as the widgets show it; a shorter one rounds that


def gb(nbytes: float, digits: int = 2) -> str:
    """Bytes as decimal gigabytes: '16.06 GB'; from 100,000 GB on, terabytes: '6,493.7 TB'. A figure with fewer
    decimals rounds the two-decimal one half up, so the panel's 12.1 GB is the widget's 12.05 GB, never 12.0."""
    if abs(nbytes) >= TB_FROM:
        return f"{nbytes / TB:,.1f} TB"
    if digits >= GB_DIGITS:
        return f"{nbytes / GB:,.{digits}f} GB"
    shown = Decimal(f"{nbytes / GB:.{GB_DIGITS}f}").quantize(Decimal(1).scaleb(-digits), rounding=ROUND_HALF_UP)
    return f"{shown:,.{digits}f} GB"


def gib(nbytes: float, digits: int = 2) -> str:
    """Bytes in binary gibibytes: 14.96 GiB."""
    return f"{nbytes / GiB:,.{digits}f} GiB"


def tib(nbytes: float, digits: int = 0) -> str:
    """Bytes in binary tebibytes: 2 TiB."""
    return f"{nbytes / TiB:,.{digits}f} TiB"


def tb_s(rate: float, digits: int = 2) -> str:
    """Bytes per second in TB/s."""
    return f"{rate / TB:,.{digits}f} TB/s"


def gb_s(rate: float, digits: int = 0) -> str:
    """Bytes per second in GB/s."""
    return f"{rate / GB:,.{digits}f} GB/s"


def sci(value: float, digits: int = 1) -> str:
    """Scientific notation with a real superscript: '3.8 × 10²⁵'."""
    if value == 0:
        return "0"
    mantissa, exponent = f"{value:.{digits}e}".split("e")
    return f"{mantissa} × 10{str(int(exponent)).translate(SUPERSCRIPT)}"


def flops(value: float, digits: int = 1) -> str:
    """A FLOP count: 3.8 × 10²⁵ FLOPs (plain digits below a million)."""
    if abs(value) < 1e6:
        return f"{value:,.0f} FLOPs"
    return f"{sci(value, digits)} FLOPs"


def flops_rate(value: float, digits: int = 0) -> str:
    """FLOP/s with the usual prefix: 989 TFLOPS."""
    for scale, unit in ((1e18, "EFLOPS"), (1e15, "PFLOPS"), (1e12, "TFLOPS"), (1e9, "GFLOPS")):
        if abs(value) >= scale:
            return f"{value / scale:,.{digits}f} {unit}"
    return f"{value:,.0f} FLOPS"


def tflops(value: float) -> str:
    """A chip's peak in TFLOPS, as its spec sheet quotes it: '989 TFLOPS', '1,979 TFLOPS'."""
    return f"{value / 1e12:,.0f} TFLOPS"


def sig(value: float, digits: int = 3) -> str:
    """`digits` significant figures, exact ties rounded up, as JavaScript's toPrecision does (54.25 -> 54.3),
    so a number formatted in the browser and on the server reads the same."""
    exact = Decimal(value)
    if exact == 0:
        return "0"
    step = Decimal(1).scaleb(exact.adjusted() - digits + 1)
    return format(exact.quantize(step, rounding=ROUND_HALF_UP).normalize(), "f")


def seconds(value: float) -> str:
    """A duration in the unit a person would use: 0.5 µs, 4.79 ms, 33 s, 90 minutes, 34 hours,
    66 days, 7.2 years (minutes and hours spelled out, as lesson prose and sentences write them)."""
    v = abs(value)
    if v == 0:
        return "0 s"
    if v < 1e-3:
        return f"{sig(value * 1e6)} µs"
    if v < 1:
        return f"{sig(value * 1e3)} ms"
    if v < 120:
        return f"{sig(value)} s"
    if v < 2 * SECONDS_PER_HOUR:
        return f"{value / 60:.3g} minutes"
    if v < 2 * SECONDS_PER_DAY:
        return f"{value / SECONDS_PER_HOUR:.3g} hours"
    if v < SECONDS_PER_YEAR:
        return f"{value / SECONDS_PER_DAY:.3g} days"
    years = value / SECONDS_PER_YEAR
    return f"{years:,.2g} years" if years < 10 else f"{years:,.0f} years"


def billions(value: float, digits: int = 2) -> str:
    """A parameter count in billions: 8.03 B."""
    return f"{value / 1e9:,.{digits}f} B"


def pct(value: float, digits: int = 0) -> str:
    """A share as a percentage: 0.4 -> '40 %'."""
    return f"{value * 100:.{digits}f} %"


def watts(value: float, digits: int = 0) -> str:
    """Power: 700 W, 10.2 kW."""
    if abs(value) >= 1000:
        return f"{value / 1000:,.1f} kW"
    return f"{value:,.{digits}f} W"


def ratio(value: float, digits: int = 1) -> str:
    """A multiple: 8×."""
    text = f"{value:,.{digits}f}"
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return f"{text}×"


def usd(value: float, digits: int = 0) -> str:
    """Money in US dollars: $1,234."""
    sign = "-" if value < 0 else ""
    return f"{sign}${abs(value):,.{digits}f}"


def size(nbytes: float) -> str:
    """Bytes with the decimal prefix that suits them, to three figures: 50 MB, 80 GB, 3.84 TB."""
    for scale, unit in ((1e12, "TB"), (1e9, "GB"), (1e6, "MB"), (1e3, "kB")):
        if abs(nbytes) >= scale:
            return f"{sig(nbytes / scale)} {unit}"
    return f"{nbytes:,.0f} B"


def plural(count: float, noun: str, nouns: str = "", digits: int | None = None) -> str:
    """A count with its noun, singular when it reads exactly 1: '1 GPU', '8 GPUs', '8,192 tokens' (`nouns`: an
    irregular plural, such as plural(n, "query", "queries"); `digits`: round as num() does, so 1.2 shown as '1'
    takes the singular). The one plural rule of every generated sentence."""
    if digits is not None:
        shown = num(count, digits)
    else:
        shown = f"{int(count):,}" if float(count).is_integer() else f"{count:,g}"
    word = noun if shown == "1" else nouns or noun + "s"
    return f"{shown} {word}"


def quantity(value: float, unit: str) -> str:
    """An engine figure in its unit, written the way the rest of the site writes that unit."""
    if unit == "bytes":
        return size(value)
    if unit == "bytes/s":
        return f"{sig(value / 1e12)} TB/s" if abs(value) >= 1e12 else f"{sig(value / 1e9)} GB/s"
    if unit == "FLOP/s":
        return f"{value / 1e12:,.{0 if abs(value) >= 1e14 else 1}f} TFLOPS"
    if unit == "W":
        return watts(value)
    if unit == "s":
        return seconds(value)
    if unit == "GHz":
        return f"{value:g} GHz"
    if unit in ("GiB", "GB", "%", "kW", "ms"):
        return f"{value:,.1f} {unit}"
    if unit == "share":
        return f"{value * 100:.1f} %"
    if unit == "USD":
        return f"${value:,.0f}"
    if unit == "USD/kWh":
        return f"${value:.2f} a kWh"
    if unit in ("count", "tokens"):
        return num(value)
    return f"{num(value)} {unit}"


FILTERS: dict[str, Callable[..., str]] = {
    "quantity": quantity,
    "num": num,
    "gb": gb,
    "gib": gib,
    "tib": tib,
    "tb_s": tb_s,
    "gb_s": gb_s,
    "sci": sci,
    "flops": flops,
    "flops_rate": flops_rate,
    "tflops": tflops,
    "seconds": seconds,
    "billions": billions,
    "pct": pct,
    "watts": watts,
    "ratio": ratio,
    "usd": usd,
    "plural": plural,
}
"""The formatter's functions by the name templates and lesson prose use them under."""
