"""`gpu-classroom new LESSON_SLUG "Title"`: a new lesson folder to edit, whose two steps already pass `check`.

The first step is prose with an engine number and a widget, the second a drill declared in the file. Nothing is
ever overwritten: an existing folder is an error.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from app.lessons.loader import SLUG

LESSON_YAML = """\
slug: {slug}
title: {title_yaml}
summary: One sentence on what the learner will be able to do after this lesson.
minutes: 5
order: 50
sections:
  - title: First steps
    steps:
      - 01-a-model-is-its-weights.md
      - 02-drill-memory-for-the-weights.md
"""

STEP_ONE = """\
---
title: A model is its weights
summary: Weights take parameters × bytes per parameter; fewer bits, less memory.
minutes: 2
formula: "bytes = parameters × bits ÷ 8"
---

Write short paragraphs. Numbers come from the engine, never typed by hand: Llama 3.1 8B has
{{{{ model("llama-3.1-8b").parameters | billions }}}} parameters, and in bf16 each takes
{{{{ bytes_per_parameter("bf16") | num }}}} bytes.

Move the slider: the widget below computes the weights' size on the server.

```widget weight-storage
parameters: 8.03e+9
bits: 16
```
"""

STEP_TWO = """\
---
title: "Drill: memory for the weights"
summary: Multiply the parameters by the bytes of their precision; 1 GB is 10⁹ bytes.
minutes: 3
---

Each learner gets their own model size and precision; the server grades the answer.

```drill weights-to-serve
kind: numeric
title: Memory for the weights
description: The memory a model's weights take at a precision.
mastery: 3
parameters:
  size:
    range: [1.0e+9, 4.0e+11]
    log: true
    digits: 2
  precision:
    choices: [fp32, bf16, fp8, int4]
let:
  weights: size * bytes_per_parameter(precision)
prompt: >-
  You will serve a model of {{ size | billions }} parameters with its weights stored in {{ precision }}.
  How much memory do the weights take?
givens:
  - label: Units
    text: 1 GB = 10⁹ bytes
parts:
  - id: weights
    prompt: Memory for the weights
    unit: GB
    tolerance: 0.02
    answer: weights
    mistakes:
      - id: bits-for-bytes
        answer: weights * 8
        message: That counts bits, not bytes. A byte holds 8 bits, so divide by 8.
      - id: gib-for-gb
        answer: weights / 2**30 * 1e9
        message: That is the size in GiB; the question asks for GB, and 1 GB = 10⁹ bytes.
solution:
  - >-
    {{ size | billions }} parameters × {{ "%g" | format(bytes_per_parameter(precision)) }} bytes in {{ precision }}
    = {{ weights | gb }}.
hints:
  - Each parameter takes the bytes of its precision; multiply them by the number of parameters.
```
"""


def write_lesson(folder: Path, slug: str, title: str) -> list[Path]:
    """Write lesson.yaml and two steps into a new folder; FileExistsError if it exists, ValueError for a bad slug."""
    if not SLUG.match(slug):
        raise ValueError(f"'{slug}' is not a slug: lowercase words and digits joined by -, e.g. my-first-lesson")
    if not title.strip():
        raise ValueError("the title is empty")
    folder.mkdir(parents=True, exist_ok=False)  # FileExistsError: never overwrite an author's work
    title_yaml = '"' + title.strip().replace("\\", "\\\\").replace('"', '\\"') + '"'
    files = {
        "lesson.yaml": LESSON_YAML.format(slug=slug, title_yaml=title_yaml),
        "01-a-model-is-its-weights.md": STEP_ONE.format(),
        "02-drill-memory-for-the-weights.md": STEP_TWO,
    }
    for name, text in files.items():
        (folder / name).write_text(text, encoding="utf-8")
    return [folder / name for name in files]


def cmd_new(args: argparse.Namespace) -> int:
    """Write lessons/SLUG (or DIR/SLUG) with two steps that pass `check`."""
    folder = Path(args.dir) / args.slug
    try:
        written = write_lesson(folder, args.slug, args.title)
    except FileExistsError:
        print(f"error: {folder} already exists; nothing was written (choose another slug or --dir)", file=sys.stderr)
        return 1
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    for path in written:
        print(f"wrote {path}")
    print(f"next: gpu-classroom author {args.dir}   (then open http://127.0.0.1:8000/lessons/{args.slug}/1)")
    return 0


def add_parser(parser: argparse.ArgumentParser) -> None:
    """Arguments of `gpu-classroom new`."""
    parser.description = "Write a new lesson folder (lesson.yaml, a step with a widget, a step with a drill)."
    parser.add_argument("slug", help="the lesson's slug, e.g. my-first-lesson: its folder and its URL")
    parser.add_argument("title", help='the lesson\'s title, e.g. "My first lesson"')
    parser.add_argument("--dir", default="lessons", help="the lessons folder to write it in (default: lessons)")
    parser.set_defaults(func=cmd_new)
