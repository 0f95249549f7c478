"""The companion lessons' profiling results: a report pasted from the terminal or posted by the browser's run,
checked before it is attached to the learner's workload sheet."""

from __future__ import annotations

from pathlib import Path

from pydantic import ValidationError

from app.companion import profiling
from app.widgets.base import readable

COMMAND = "“gpu-classroom profile --json”"
PASTE_ALL = f"Paste everything {COMMAND} printed, from the first {{ to the last }}."


def report_error(exc: ValidationError) -> str:
    """Why a pasted or posted report is refused, in a sentence a learner can act on (never a validator's words
    such as "source: Field required")."""
    errors = exc.errors()
    first = errors[0]
    if first["type"] == "json_invalid":
        return f"This is not JSON. {PASTE_ALL}"
    missing = [".".join(str(p) for p in e["loc"]) for e in errors if e["type"] == "missing"]
    if missing:
        names = ", ".join(f"“{m}”" for m in missing[:3]) + (" and more" if len(missing) > 3 else "")
        verb = "is" if len(missing) == 1 else "are"
        return f"This is not a whole profiling result: {names} {verb} missing. {PASTE_ALL}"
    where = " ".join(str(p) for p in first["loc"] if isinstance(p, str)).replace("_", " ")
    said = readable(dict(first))
    return f"This is not a profiling result we can use: its {where}: {said[:1].lower() + said[1:]}" if where else said


def parse_report(text: str, cache_dir: Path) -> tuple[profiling.ProfileReport | None, str]:
    """A profiling report from pasted or posted JSON, checked against the data file's known sum."""
    if not text.strip():
        return None, f"Paste the JSON that {COMMAND} printed, or run the profile above."
    if len(text) > 100_000:
        return None, "That is far longer than a profiling result; paste only the JSON the command printed."
    try:
        report = profiling.ProfileReport.model_validate_json(text)
    except ValidationError as exc:
        return None, report_error(exc)
    expected = profiling.cached_sum(cache_dir, report.size_bytes)
    if expected is not None and abs(report.checksum - expected) > 1e-6 * expected:
        return None, (
            f"The parsed numbers add up to {report.checksum:,.2f}, not the file's {expected:,.2f}: "
            "the parse missed or misread some numbers, so these timings are not comparable."
        )
    return report, ""
