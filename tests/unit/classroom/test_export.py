"""Exports: what a spreadsheet shows is text, never a formula; JSON holds everything but the key."""

from __future__ import annotations

import csv
import io
import json

from app.classroom import export
from app.classroom.db import Database
from tests.unit.classroom.classroom_helpers import (
    answer,
    finish_step,
    join,
    new_class,
    open_step,
    rewind,
    run,
)


def test_a_cell_that_starts_like_a_formula_is_shown_as_text() -> None:
    for evil in ("=1+1", "+1", "-2+3", "@SUM(A1)", "\t=1", "\r=1", " =HYPERLINK(\"x\")", "＝1"):
        assert str(export.cell(evil)).startswith("'"), evil
    assert export.cell("Ada") == "Ada" and export.cell(-2) == -2 and export.cell(None) == ""


def _export(url: str, what: str) -> str:
    async def scenario(db: Database) -> str:
        klass, _ = await new_class(db)
        ada = await join(db, klass, "=HYPERLINK(\"http://evil\",\"x\")")
        bob = await join(db, klass, "<script>alert(1)</script>")
        await open_step(db, ada, 1)
        await rewind(db, ada, 42)
        await finish_step(db, ada, 1)
        await open_step(db, ada, 2)
        await answer(db, ada.learner_id, "=2*8", False)
        await answer(db, ada.learner_id, "16 bytes", True)
        await answer(db, bob.learner_id, "-1", False)
        return await export.export(db, klass, what)

    return run(url, scenario)


def test_learners_csv_has_progress_time_per_step_and_drill_scores(url: str) -> None:
    rows = list(csv.DictReader(io.StringIO(_export(url, "learners"))))
    by_name = {r["name"]: r for r in rows}
    ada = by_name["'=HYPERLINK(\"http://evil\",\"x\")"]
    assert ada["steps_done"] == "1" and ada["step_1_done"] == "yes" and ada["current_step"] == "2"
    assert 40 <= float(ada["step_1_seconds"]) <= 45
    assert ada["bytes-per-parameter@3_attempts"] == "2" and ada["bytes-per-parameter@3_correct"] == "1"
    assert "<script>alert(1)</script>" in by_name  # shown as the text it is


def test_attempts_csv_keeps_every_answer_as_typed_and_defused(url: str) -> None:
    rows = list(csv.DictReader(io.StringIO(_export(url, "attempts"))))
    assert [r["typed"] for r in rows] == ["'-1", "'=2*8", "16 bytes"]  # learners by name, then in order
    assert all(not r["name"].startswith(("=", "+", "-", "@")) for r in rows)


def test_the_json_export_holds_everything_but_the_key(url: str) -> None:
    data = json.loads(_export(url, "json"))
    assert {"class", "steps", "learners"} <= set(data)
    assert "key_hash" not in json.dumps(data) and "key" not in data["class"]
    names = {p["name"] for p in data["learners"]}
    assert names == {"=HYPERLINK(\"http://evil\",\"x\")", "<script>alert(1)</script>"}  # raw data, JSON-escaped
    ada = next(p for p in data["learners"] if p["name"].startswith("="))
    assert [a["answers"]["bytes"] for a in ada["attempts"]] == ["=2*8", "16 bytes"]


def test_the_streamed_exports_say_exactly_what_the_whole_ones_do(url: str) -> None:
    """The web streams class.json and attempts.csv learner by learner; the text parses to the same data."""

    async def scenario(db: Database) -> list[tuple[str, str]]:
        klass, _ = await new_class(db)
        for name in ("Ada", "Bob", "=1+1"):
            person = await join(db, klass, name)
            await open_step(db, person, 2)
            await answer(db, person.learner_id, "16 bytes", name == "Ada")
        pairs = []
        for what in export.FORMATS:
            streamed = "".join([chunk async for chunk in export.stream(db, klass, what)])
            pairs.append((await export.export(db, klass, what), streamed))
        return pairs

    (learners, learners_s), (attempts, attempts_s), (everything, everything_s) = run(url, scenario)
    assert learners_s == learners and attempts_s == attempts
    assert json.loads(everything_s) == json.loads(everything) and len(json.loads(everything_s)["learners"]) == 3
