"""Workload sheets: known or to measure per number instead of per heading.

A heading used to carry one mark and one note for everything written under it. Each heading now keeps its text
and a list of numbers, each with its own mark and note. A heading that carried a mark worth keeping (known, or a
note, or a figure in its text) becomes one number, "the figures above", with that mark and note, so no sheet loses
what its learner wrote; the learner can split it into numbers of its own.

Revision ID: 0006_sheet_numbers
Revises: 0004
"""

import re
from typing import Any

import sqlalchemy as sa
from alembic import op

revision = "0006_sheet_numbers"
down_revision = "0004"
branch_labels = None
depends_on = None

CARRIED = "the figures above"
DIGIT = re.compile(r"\d")

sheets = sa.table(
    "workload_sheets",
    sa.column("learner_id", sa.String),
    sa.column("fields", sa.JSON),
)


def per_number(fields: dict[str, Any]) -> dict[str, Any]:
    """A sheet's fields, marked per heading, as fields marked per number."""
    out: dict[str, Any] = {}
    for key, old in (fields or {}).items():
        if not isinstance(old, dict) or "numbers" in old:
            out[key] = old
            continue
        value, status, note = str(old.get("value", "")), old.get("status", "to_measure"), str(old.get("note", ""))
        numbers = []
        if status == "known" or note.strip() or DIGIT.search(value):
            numbers.append({"label": CARRIED, "value": "", "status": status if status == "known" else "to_measure",
                            "note": note})
        out[key] = {"value": value, "numbers": numbers}
    return out


def per_heading(fields: dict[str, Any]) -> dict[str, Any]:
    """Back: a heading is known when every number under it is (and it has one); the notes are joined."""
    out: dict[str, Any] = {}
    for key, new in (fields or {}).items():
        if not isinstance(new, dict) or "numbers" not in new:
            out[key] = new
            continue
        numbers = new.get("numbers") or []
        known = bool(numbers) and all(n.get("status") == "known" for n in numbers)
        extra = [f"{n.get('label', '')}: {n.get('value', '')}".strip(": ") for n in numbers
                 if n.get("label") != CARRIED and (n.get("label") or n.get("value"))]
        value = "\n".join([str(new.get("value", "")), *extra]).strip()
        note = "; ".join(str(n.get("note", "")) for n in numbers if n.get("note"))
        out[key] = {"value": value, "status": "known" if known else "to_measure", "note": note[:500]}
    return out


def _rewrite(convert: Any) -> None:
    bind = op.get_bind()
    for learner_id, fields in bind.execute(sa.select(sheets.c.learner_id, sheets.c.fields)).all():
        bind.execute(sheets.update().where(sheets.c.learner_id == learner_id).values(fields=convert(fields)))


def upgrade() -> None:
    _rewrite(per_number)


def downgrade() -> None:
    _rewrite(per_heading)
