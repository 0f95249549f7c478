"""The companion lessons' profiling results: a report pasted from the terminal or posted by the browser's run,
checked before it is attached to the learner's workload sheet."""

from __future__ import annotations

from pathlib import Path

from pydantic import ValidationError

from app.companion import profiling
from app.widgets.base import readable


def report_error(exc: ValidationError) -> str:
    """Why a pasted or posted report is refused, in a sentence (the first problem only)."""
    first = exc.errors()[0]
    where = ".".join(str(p) for p in first["loc"])
    if first["type"] == "json_invalid":
        return "This is not JSON. Paste everything `gpu-classroom profile --json` printed, from { to }."
    return (
        f"This is not a profiling result: {where}: {readable(dict(first))}"
        if where
        else readable(dict(first))
    )


def parse_report(text: str, cache_dir: Path) -> tuple[profiling.ProfileReport | None, str]:
    """A profiling report from pasted or posted JSON, checked against the data file's known sum."""
    if not text.strip():
        return None, "Paste the JSON that `gpu-classroom profile --json` printed, or run the profile above."
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
