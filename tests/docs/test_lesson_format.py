"""docs/lesson-format.md and docs/authoring.md tell all: every documented field, key, name and filter exists in the
code, and every one the code has is documented (a new engine field or drill key fails here until it is written up)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from pydantic import BaseModel

from app.drills.declarative import DrillSpec, PartSpec
from app.engine.hardware import get_gpu, node
from app.engine.models import get_model
from app.engine.plan import PlanRequest, make_plan
from app.lessons.expressions import Evaluator, fields_of
from app.lessons.loader import LessonSpec
from app.lessons.model import StepMeta

DOCS = Path(__file__).resolve().parents[2] / "docs"
FORMAT = (DOCS / "lesson-format.md").read_text()
AUTHORING = (DOCS / "authoring.md").read_text()
JINJA_OWN = {"range", "dict", "namespace"}


def section(doc: str, heading: str) -> str:
    """The text under a heading (any level), up to the next heading."""
    start = doc.index(f"{heading}\n")
    rest = doc[start + len(heading) + 1:]
    following = re.search(r"^#{1,4} ", rest, re.M)
    return rest[: following.start()] if following else rest


def first_column(text: str, table: int = 0) -> list[str]:
    """The names in the first column of the `table`-th table of a text: `name`, `name(args)` -> name."""
    tables = re.findall(r"((?:^\|.*\|\n?)+)", text, re.M)
    rows = [r for r in tables[table].splitlines()[2:] if r.startswith("|")]
    names = []
    for row in rows:
        cell = row.split("|")[1]
        names += [re.split(r"[(.]", n)[0] for n in re.findall(r"`([^`]+)`", cell)]
    return names


def fields(model: BaseModel | type[BaseModel]) -> set[str]:
    cls = model if isinstance(model, type) else type(model)
    return set(cls.model_fields)


def test_every_field_of_model_is_documented_and_every_documented_one_exists() -> None:
    documented = first_column(section(FORMAT, "### `model(id)` fields"))
    assert set(documented) == set(fields_of(get_model("mistral-7b")))
    assert "sliding_window" in documented


@pytest.mark.parametrize(("heading", "model"), [
    ("### `gpu(id)` fields", get_gpu("h100")),
    ("### `node()` fields", node()),
    ("### `plan(...)` request fields", PlanRequest),
    ("## lesson.yaml", LessonSpec),
    ("## A step file", StepMeta),
])
def test_a_reference_table_lists_exactly_the_fields_of_its_object(heading: str, model: BaseModel) -> None:
    assert set(first_column(section(FORMAT, heading))) == fields(model)


def test_the_plan_tables_list_exactly_the_plans_fields() -> None:
    text = section(FORMAT, "### `plan(...)` fields")
    serving = make_plan(PlanRequest(model="llama-3.1-8b", mode="serve"))
    training = make_plan(PlanRequest(model="llama-3.1-8b", mode="train", gpus=8))
    assert set(first_column(text, 0)) == fields(serving)
    assert set(first_column(text, 1)) == fields(serving.per_gpu)
    for name, part in (("serve", serving.serve), ("train", training.train)):
        line = next(x for x in text.split("\n\n") if x.startswith(f"`plan(...).{name}`:"))
        assert part is not None and set(re.findall(r"`(\w+)`", line)) == fields(part)


def test_the_parts_said_to_be_zero_are_zero_in_that_mode_and_the_others_are_not() -> None:
    rows = [r.split("|") for r in section(FORMAT, "### `plan(...)` fields").splitlines() if r.startswith("| `")]
    rows = [r for r in rows if len(r) == 6]  # the per-GPU table: field, what, serving, training
    assert rows
    for mode, column in (("serve", 3), ("train", 4)):
        plan = make_plan(PlanRequest(model="llama-3.1-8b", mode=mode, gpus=8 if mode == "train" else 1))
        for row in rows:
            name = re.findall(r"`(\w+)`", row[1])[0]
            said_zero = "**0**" in row[column]
            assert (getattr(plan.per_gpu, name) == 0) == said_zero, (mode, name)


def test_every_expression_name_is_documented_and_every_documented_name_exists() -> None:
    documented = set(first_column(section(FORMAT, "### The names")))
    assert documented == set(Evaluator().env.globals)
    assert JINJA_OWN <= documented


def test_every_filter_is_documented_and_every_documented_filter_exists() -> None:
    text = section(FORMAT, "### Filters")
    ours = set(first_column(text))
    jinja = set(re.findall(r"`(\w+)`", text.split("and these of Jinja's own:", 1)[1]))
    assert ours | jinja == set(Evaluator().env.filters)
    assert "plural" in ours


@pytest.mark.parametrize(("heading", "table", "model"), [
    ("## The drill block, key by key", 0, DrillSpec),
    ("## The drill block, key by key", 1, PartSpec),
])
def test_the_drill_block_tables_list_exactly_its_keys(heading: str, table: int, model: type[BaseModel]) -> None:
    assert set(first_column(section(AUTHORING, heading), table)) == fields(model)
