"""The lesson expressions of the reliability probe (shared/reviews/reliability-2026-12-04.md, F5) that hung `check`,
kept `serve` from listening, spun author mode's reload for good or took gigabytes: each as a prose line, and the
nested loops as a declared drill's prompt, the way the probe wrote them."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

CLI = str(Path(sys.executable).with_name("gpu-classroom"))

# (the expression as the probe wrote it, a few words of what the refusal says)
PROSE = [
    ("{{ 9**(9**9) }}", "bits"),
    ("{{ (10**(10**7)) is number }}", "bits"),
    ("{{ lipsum(1000000) | length }}", "'lipsum' is not a name"),
    ("{{ ('a' * 10**9) | length }}", "repeating"),
    ("{{ '%0999999999d' | format(1) | length }}", "width or precision"),
    ("{{ 'x' | center(2000000000) | length }}", "width=2e+09"),
    ("{{ ('a' * 10**10) | length }}", "repeating"),
    ("{{ ([1] * 10**9) | length }}", "repeating"),
    ("{{ ((range(100000)|list) * 100000) | length }}", "range(100000)"),
]
LOOPS = "{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}"
LOOPS_WITHIN_RANGE = "{% for i in range(10000) %}{% for j in range(10000) %}{% endfor %}{% endfor %}"


def new_lesson(root: Path, slug: str = "probe") -> Path:
    """`gpu-classroom new` a lesson into root/slug (it passes check); returns its folder."""
    subprocess.run([CLI, "new", slug, "A probe", "--dir", str(root)], check=True, capture_output=True)
    return root / slug


def add_probe_lines(folder: Path, lines: list[str]) -> list[tuple[Path, int]]:
    """Append `Probe: ...` lines to the lesson's first step; (file, line) of each."""
    step = folder / "01-a-model-is-its-weights.md"
    text = step.read_text(encoding="utf-8").rstrip("\n") + "\n"
    at = []
    for line in lines:
        text += f"\nProbe: {line}\n"
        at.append((step, len(text.splitlines())))
    step.write_text(text, encoding="utf-8")
    return at


def add_looping_prompt(folder: Path, loops: str = LOOPS) -> tuple[Path, int]:
    """The nested loops in the declared drill's prompt; (file, line) of the prompt's key."""
    step = folder / "02-drill-memory-for-the-weights.md"
    text = step.read_text(encoding="utf-8")
    old = "prompt: >-\n"
    assert old in text
    step.write_text(text.replace(old, f"prompt: >-\n  {loops}\n", 1), encoding="utf-8")
    return step, text.splitlines().index("prompt: >-") + 1
