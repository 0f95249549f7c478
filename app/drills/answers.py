"""Answers as people type them: thousands separators, exponents, magnitude words and units.

Every parser returns a plain number (bytes for sizes) or raises AnswerError with a sentence for the
learner. An AnswerError means the input could not be read: it is never graded and never counts as an
attempt.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass


class AnswerError(ValueError):
    """Input that cannot be read as an answer of the asked kind; the message says how to write it."""


# Units of size, matched without regard to case ("gb", "GB" and "Gb" all mean gigabytes; bits are
# written out: "Gbit"). Decimal units count 10^3, binary ones 2^10, as nvidia-smi's MiB do.
_DECIMAL = {"k": 10**3, "m": 10**6, "g": 10**9, "t": 10**12, "p": 10**15}
_BINARY = {"ki": 2**10, "mi": 2**20, "gi": 2**30, "ti": 2**40, "pi": 2**50}
_WORDS = {
    "kilo": "k",
    "mega": "m",
    "giga": "g",
    "tera": "t",
    "peta": "p",
    "kibi": "ki",
    "mebi": "mi",
    "gibi": "gi",
    "tebi": "ti",
    "pebi": "pi",
}


def _size_units() -> dict[str, float]:
    units: dict[str, float] = {"b": 1, "byte": 1, "bytes": 1, "bit": 1 / 8, "bits": 1 / 8}
    for prefix, factor in {**_DECIMAL, **_BINARY}.items():
        units[f"{prefix}b"] = factor
        units[f"{prefix}bit"] = units[f"{prefix}bits"] = factor / 8
    for word, prefix in _WORDS.items():
        factor = {**_DECIMAL, **_BINARY}[prefix]
        units[f"{word}byte"] = units[f"{word}bytes"] = factor
        units[f"{word}bit"] = units[f"{word}bits"] = factor / 8
    return units


SIZE_UNITS: dict[str, float] = _size_units()

# How the docs and the property test write each unit: canonical spellings a learner would type.
SIZE_SPELLINGS: tuple[str, ...] = (
    "B",
    "bytes",
    "KB",
    "MB",
    "GB",
    "TB",
    "PB",
    "KiB",
    "MiB",
    "GiB",
    "TiB",
    "gigabytes",
    "gibibytes",
    "Gbit",
    "bits",
)

MAGNITUDES = {"thousand": 1e3, "million": 1e6, "billion": 1e9, "bn": 1e9, "trillion": 1e12}
NUMBER_WORDS = {
    w: i for i, w in enumerate("zero one two three four five six seven eight nine ten eleven twelve".split())
}

_SUPERSCRIPTS = str.maketrans("⁻⁺⁰¹²³⁴⁵⁶⁷⁸⁹", "-+0123456789")
_APPROX = re.compile(r"^(?:~|≈|about|approx\.?|approximately|around|roughly)\s*", re.IGNORECASE)
_SPACES = re.compile(r"[\u00a0\u2007\u2009\u202f\s]+")
_NUMBER = re.compile(
    r"""^(?P<sign>[+-])?
        (?P<mantissa>\d{1,3}(?:,\d{3})+(?:\.\d*)?      # 128,000 or 1,234.5
                    |\d{1,3}(?:\ \d{3})+(?:\.\d*)?     # 128 000
                    |\d+(?:\.\d*)?                     # 128 or 128.5 or 128.
                    |\.\d+)                            # .5
        (?:\s*[eE]\s*(?P<exp>[+-]?\d+)
          |\s*[x×*·]\s*10\s*(?:\^|\*\*)\s*(?P<exp2>[+-]?\d+)
          |\s*[x×*·]\s*10(?P<sup>[⁻⁺]?[⁰¹²³⁴⁵⁶⁷⁸⁹]+))?
    """,
    re.VERBOSE,
)

# Units that are a quantity of another kind, with what to say about them in a size answer.
_OTHER_KINDS: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"flop"), "counts arithmetic (FLOPs), not memory"),
    (
        re.compile(r"(/\s*s(ec(ond)?)?$|ps$|per\s*s(ec(ond)?)?$|a\s*second$)"),
        "is a rate (an amount per second), not an amount of memory",
    ),
    (re.compile(r"^%|^percent"), "is a percentage, not an amount of memory"),
    (re.compile(r"^(k|m)?w(att)?s?$|^kwh$"), "is power or energy, not memory"),
    (re.compile(r"^(s|ms|µs|us|sec|secs|seconds?|minutes?|min|hours?|h|days?)$"), "is a time, not memory"),
)


@dataclass(frozen=True)
class Quantity:
    """A number as typed and the words after it (lower case, spaces collapsed)."""

    value: float
    unit: str
    typed_unit: str = ""


def normalise(text: str) -> str:
    """One space between words, plain minus signs, no surrounding space."""
    return _SPACES.sub(" ", text.replace("\u2212", "-").replace("\u2013", "-")).strip()


def read_quantity(text: str) -> Quantity:
    """The leading number (with its exponent and magnitude word) and the unit text after it."""
    text = _APPROX.sub("", normalise(text))
    if not text:
        raise AnswerError("Enter an answer: a number, with a unit if you like.")
    word, _, rest = text.partition(" ")
    if word.lower() in NUMBER_WORDS:
        return Quantity(float(NUMBER_WORDS[word.lower()]), rest.lower(), rest)
    match = _NUMBER.match(text)
    if match is None:
        raise AnswerError(
            f"'{_clip(text)}' does not start with a number. Write it like 128, 128.5 or 1.2e11."
        )
    mantissa = match["mantissa"].replace(",", "").replace(" ", "")
    exponent = match["exp"] or match["exp2"] or (match["sup"] or "").translate(_SUPERSCRIPTS) or "0"
    try:
        value = float(mantissa) * 10.0 ** int(exponent)
    except (OverflowError, ValueError):
        raise AnswerError("That number is too large to be an answer here.") from None
    if not math.isfinite(value):
        raise AnswerError("That number is too large to be an answer here.")
    if match["sign"] == "-":
        value = -value
    rest = text[match.end() :].strip()
    if re.match(r"^[,.]\d", rest):
        raise AnswerError(
            "Use a point for decimals (128.5) and commas only between groups of three digits (128,000)."
        )
    head, _, tail = rest.partition(" ")
    if head.lower() in MAGNITUDES:
        value *= MAGNITUDES[head.lower()]
        rest = tail.strip()
    return Quantity(value, rest.lower(), rest)


def _clip(text: str, n: int = 24) -> str:
    return text if len(text) <= n else text[: n - 1] + "…"


_QUALIFIERS = re.compile(
    r"\s*(?:(?:per|/|a|each|on each)\s*(?:gpu|device|card)|each|in total|total|of memory)$"
)


def parse_size(text: str, default_unit: str = "GB") -> float:
    """Bytes from an answer such as '128 GB', '119.6 GiB', '1.2e11 bytes' or '128' (in default_unit)."""
    nbytes = _size(text, default_unit)
    if not math.isfinite(nbytes):
        raise AnswerError("That number is too large to be an answer here.")
    return nbytes


def _size(text: str, default_unit: str) -> float:
    q = read_quantity(text)
    unit = _QUALIFIERS.sub("", q.unit).strip().replace(" ", "")
    if q.value < 0:
        raise AnswerError("A size cannot be negative.")
    if not unit:
        if q.value >= 1e6:
            raise AnswerError(
                f"A bare {_plain(q.value)} would mean {_plain(q.value)} {default_unit}. Add the unit you "
                "meant, "
                f"such as bytes or {default_unit}."
            )
        return q.value * SIZE_UNITS[default_unit.lower()]
    if unit in SIZE_UNITS:
        return q.value * SIZE_UNITS[unit]
    for pattern, why in _OTHER_KINDS:
        if pattern.search(unit):
            raise AnswerError(f"'{q.typed_unit}' {why}. Give a size, such as 128 {default_unit}.")
    raise AnswerError(
        f"Unknown unit '{q.typed_unit}'. Use B, KB, MB, GB or TB (powers of 1000) or KiB, MiB, GiB, TiB."
    )


_SUPERSCRIPT_DIGITS = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")


def _plain(value: float) -> str:
    """A large number as people write it: 1,000,000, or 1 × 10³⁰ past a million billion (never 1e+30)."""
    if value < 1e15:
        return f"{value:,.0f}"
    exponent = math.floor(math.log10(value))
    return f"{value / 10**exponent:.3g} × 10{str(exponent).translate(_SUPERSCRIPT_DIGITS)}"


_PER_PARAMETER = re.compile(
    r"^(?:b|bytes?)?\s*"
    r"(?:(?:/|per|a|an|for each|each)\s*(?:p|param|params|parameter|parameters|weight|number)?)?$"
)


def parse_per_parameter(text: str) -> float:
    """Bytes per parameter from '16', '16 B', '16 bytes' or '16 bytes per parameter'."""
    q = read_quantity(text)
    if q.value < 0:
        raise AnswerError("Bytes per parameter cannot be negative.")
    if _PER_PARAMETER.match(q.unit):
        return q.value
    if q.unit.replace(" ", "") in SIZE_UNITS:
        raise AnswerError(
            f"'{q.typed_unit}' makes this a total size. This part asks for bytes per parameter, such as 2 or "
            "16."
        )
    raise AnswerError(
        f"Write bytes per parameter as a number, such as 16 or '16 bytes'; '{q.typed_unit}' is not a unit "
        "here."
    )


def parse_count(text: str, nouns: Sequence[str]) -> float:
    """A count of things, such as '2', '2 GPUs' or 'two'; the noun is optional."""
    q = read_quantity(text)
    if q.value < 0:
        raise AnswerError("A count cannot be negative.")
    unit = q.unit.rstrip(".")
    if unit and unit not in nouns:
        raise AnswerError(
            f"Give a number of {nouns[-1]}, such as 2; '{q.typed_unit}' is not a count of them."
        )
    return q.value


YES = {"yes", "y", "true", "fits", "it fits", "it does", "does fit", "it will fit", "will fit"}
NO = {
    "no",
    "n",
    "false",
    "does not fit",
    "doesn't fit",
    "it does not fit",
    "it doesn't fit",
    "it does not",
    "won't fit",
    "will not fit",
    "not",
    "does not",
}


def parse_yes_no(text: str) -> str:
    """'yes' or 'no' from the ways people say them."""
    word = normalise(text).lower().rstrip(".!")
    if word in YES:
        return "yes"
    if word in NO:
        return "no"
    if not word:
        raise AnswerError("Choose yes or no.")
    raise AnswerError("Answer yes or no.")


def parse_choice(text: str, choices: Sequence[tuple[str, Sequence[str]]]) -> str:
    """The value of the choice whose value or one of whose names matches the text."""
    word = normalise(text).lower().rstrip(".")
    if not word:
        raise AnswerError("Choose one of the options.")
    simple = re.sub(r"[\s_-]+", " ", word)
    for value, names in choices:
        if simple in {re.sub(r"[\s_-]+", " ", n.lower()) for n in (value, *names)}:
            return value
    raise AnswerError("Choose one of the options listed.")


def write_size(nbytes: float, unit: str, digits: int | None = None) -> str:
    """nbytes written in `unit` (any case of a SIZE_UNITS key): write_size(1.2e11, 'GB') = '120.0 GB'."""
    value = nbytes / SIZE_UNITS[unit.lower()]
    text = repr(value) if digits is None else f"{value:.{digits}f}"
    return f"{text} {unit}"
