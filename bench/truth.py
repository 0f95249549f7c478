"""Published measurements of real runs beside the engine's figure for the same job, and the ratio.

Run: .venv/bin/python bench/truth.py [--sources]

The rows live in app/engine/anchors.py (the /numbers page shows the same); each names its source, the
hardware it ran on and the engine parameters used. A ratio of ×1.00 is a match; the note says what the
engine could not match.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from app.engine.anchors import AnchorRow, anchor_rows, ratio_text  # noqa: E402


def figure(value: float, unit: str) -> str:
    """A value with its unit, rounded as the unit deserves."""
    digits = 1 if unit in ("GiB", "GB", "%", "ms", "kW") else 0
    return f"{value:,.{digits}f} {unit}"


def table(rows: list[AnchorRow]) -> str:
    """The rows as a plain-text table: job, quantity, measured, engine, ratio."""
    head = ("anchor", "quantity", "measured", "engine", "ratio")
    body = [
        (r.id, r.quantity, figure(r.measured, r.unit), figure(r.engine, r.unit), ratio_text(r.ratio)) for r in rows
    ]
    widths = [max(len(line[i]) for line in (head, *body)) for i in range(len(head))]
    lines = ["  ".join(cell.ljust(w) for cell, w in zip(line, widths, strict=True)) for line in (head, *body)]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def details(rows: list[AnchorRow]) -> str:
    """Each row's job, source, hardware, engine parameters and note."""
    out = []
    for r in rows:
        out += [f"{r.id}: {r.job}", f"  source:     {r.source}", f"  hardware:   {r.hardware}",
                f"  parameters: {r.parameters}"]
        if r.note:
            out.append(f"  note:       {r.note}")
    return "\n".join(out)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sources", action="store_true", help="also print each row's source and parameters")
    args = parser.parse_args()
    rows = anchor_rows()
    print("Measured anchors: published figures beside the engine's (ratio = engine ÷ measured)\n")
    print(table(rows))
    if args.sources:
        print()
        print(details(rows))


if __name__ == "__main__":
    main()
