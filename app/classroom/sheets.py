"""The workload sheet: each learner's five fields, the numbers under each marked known or to measure one by one,
and the timings they measured.

The sheet never fills a field: what the learner did not write stays empty. A number still marked "to measure"
may hold a figure only together with a note of where and how that figure was measured.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Mapping
from datetime import datetime
from typing import Literal

from pydantic import BaseModel, Field
from sqlalchemy import JSON, DateTime, ForeignKey, Integer, select
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import Mapped, mapped_column

from app.classroom.db import Base, Database
from app.classroom.models import utcnow
from app.classroom.progress import touch_learner
from app.companion.profiling import ProfileReport
from app.engine.worksheet import FIELD_KEYS, FIELDS

Status = Literal["known", "to_measure"]
STATUS_LABELS: dict[str, str] = {"known": "known", "to_measure": "to measure"}
MAX_VALUE, MAX_NOTE = 2000, 500
MAX_PROFILES = 10
MAX_NUMBERS = 8  # numbers under one heading
MAX_LABEL = 200
CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
DIGIT = re.compile(r"\d")


class SheetNumber(BaseModel):
    """One number under a heading, marked known or to measure on its own."""

    label: str = Field(default="", description="What the number counts, e.g. photos in the training set")
    value: str = Field(default="", description="The number as the learner wrote it, with its unit")
    status: Status = "to_measure"
    note: str = Field(default="", description="Where and how the number was measured")

    def empty(self) -> bool:
        return not (self.label.strip() or self.value.strip() or self.note.strip())


class SheetField(BaseModel):
    """What the learner wrote under one heading: a description and the numbers it rests on."""

    value: str = ""
    numbers: list[SheetNumber] = Field(default_factory=list)


class AttachedProfile(BaseModel):
    """A profiling run the learner attached to the sheet."""

    id: str
    attached_at: datetime
    report: ProfileReport


class Sheet(BaseModel):
    """A learner's sheet: one entry per field (empty until written) and the attached timings, newest first."""

    fields: dict[str, SheetField]
    profiles: list[AttachedProfile] = Field(default_factory=list)
    revision: int = 0
    updated_at: datetime | None = None

    def field(self, key: str) -> SheetField:
        return self.fields.get(key) or SheetField()


class SaveResult(BaseModel):
    """What a save kept, and why it refused the rest (a message per field key)."""

    sheet: Sheet
    saved: list[str]
    errors: dict[str, str]


class WorkloadSheetRow(Base):
    """One sheet per learner, its fields and attached profiles as JSON."""

    __tablename__ = "workload_sheets"

    learner_id: Mapped[str] = mapped_column(ForeignKey("learners.id", ondelete="CASCADE"), primary_key=True)
    fields: Mapped[dict[str, dict[str, str]]] = mapped_column(JSON, default=dict)
    profiles: Mapped[list[dict[str, object]]] = mapped_column(JSON, default=list)
    revision: Mapped[int] = mapped_column(Integer, default=0)
    updated_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


def empty_sheet() -> Sheet:
    return Sheet(fields={k: SheetField() for k in FIELD_KEYS})


def _sheet(row: WorkloadSheetRow | None) -> Sheet:
    if row is None:
        return empty_sheet()
    fields = {k: SheetField.model_validate(row.fields.get(k, {})) for k in FIELD_KEYS}
    profiles = [AttachedProfile.model_validate(p) for p in row.profiles or []]
    return Sheet(fields=fields, profiles=profiles, revision=row.revision, updated_at=row.updated_at)


def _clean(text: str) -> str:
    """Learner text without control characters (newlines and tabs kept)."""
    return CONTROL.sub("", text.replace("\r\n", "\n"))


def _number_name(n: SheetNumber, i: int) -> str:
    return f"“{n.label.strip()}”" if n.label.strip() else f"number {i + 1}"


def check_field(field: SheetField) -> str:
    """Why a field cannot be saved as it stands, or '' when it can."""
    if len(field.value) > MAX_VALUE:
        return f"Keep it under {MAX_VALUE:,} characters; this has {len(field.value):,}."
    if len(field.numbers) > MAX_NUMBERS:
        return f"Keep to {MAX_NUMBERS} numbers under one heading."
    for i, n in enumerate(field.numbers):
        if len(n.label) > MAX_LABEL or len(n.value) > MAX_LABEL:
            return f"Keep {_number_name(n, i)} and its value under {MAX_LABEL} characters each."
        if len(n.note) > MAX_NOTE:
            return f"Keep the note of {_number_name(n, i)} under {MAX_NOTE:,} characters; it has {len(n.note):,}."
        if n.status == "to_measure" and DIGIT.search(n.value) and not n.note.strip():
            return (f"{_number_name(n, i).capitalize()} is marked to measure but holds a figure. Say where and how "
                    "it was measured in its note, mark it known, or take the figure out.")
    return ""


def _rows(form: Mapping[str, str], key: str) -> list[int]:
    """Indices of the number rows the form carries for a heading."""
    prefix = re.compile(rf"^{re.escape(key)}_(\d+)_(label|value|status|note)$")
    found = {int(m.group(1)) for name in form if (m := prefix.match(name))}
    return sorted(i for i in found if i < MAX_NUMBERS * 2)


def from_form(current: SheetField, form: Mapping[str, str], key: str) -> SheetField:
    """The field as the form writes it, unchecked. A form that carries any of the heading's number rows replaces its
    numbers with those rows (empty rows dropped; a status that is neither known nor to measure reads to measure)."""
    numbers = current.numbers
    rows = _rows(form, key)
    if rows:
        numbers = []
        for i in rows:
            status = form.get(f"{key}_{i}_status", "to_measure")
            number = SheetNumber(label=_clean(form.get(f"{key}_{i}_label", "")),
                                 value=_clean(form.get(f"{key}_{i}_value", "")),
                                 status="known" if status == "known" else "to_measure",
                                 note=_clean(form.get(f"{key}_{i}_note", "")))
            if not number.empty():
                numbers.append(number)
    return SheetField(value=_clean(form.get(key, current.value)), numbers=numbers)


def merge(current: SheetField, form: Mapping[str, str], key: str) -> tuple[SheetField | None, str]:
    """The field as the form changes it, or None with the reason it cannot be saved."""
    if any(form.get(f"{key}_{i}_status", "known") not in STATUS_LABELS for i in _rows(form, key)):
        return None, "Choose known or to measure."
    candidate = from_form(current, form, key)
    error = check_field(candidate)
    return (None, error) if error else (candidate, "")


def touched(form: Mapping[str, str]) -> list[str]:
    """Field keys the form carries a value or a number row for."""
    return [k for k in FIELD_KEYS if k in form or _rows(form, k)]


async def get_sheet(db: Database, learner_id: str) -> Sheet:
    """The learner's sheet, empty if they never wrote one."""
    async with db.session() as s:
        return _sheet(await s.get(WorkloadSheetRow, learner_id))


async def _row(s: AsyncSession, learner_id: str) -> WorkloadSheetRow:
    """The learner's row, locked for this transaction where the database can; created when missing."""
    await touch_learner(s, learner_id)
    query = select(WorkloadSheetRow).where(WorkloadSheetRow.learner_id == learner_id).with_for_update()
    row = (await s.execute(query)).scalar_one_or_none()
    if row is None:
        row = WorkloadSheetRow(learner_id=learner_id, fields={}, profiles=[], revision=0, updated_at=utcnow())
        s.add(row)
    return row


async def save(db: Database, learner_id: str, form: Mapping[str, str]) -> SaveResult:
    """Save every field the form changes that passes its check; the others keep what was saved before."""
    keys = touched(form)
    errors: dict[str, str] = {}
    saved: list[str] = []
    async with db.session() as s:
        row = await _row(s, learner_id)
        current = _sheet(row)
        fields = {k: current.field(k).model_dump() for k in FIELD_KEYS}
        for key in keys:
            merged, error = merge(current.field(key), form, key)
            if merged is None:
                errors[key] = error
            elif merged != current.field(key):
                fields[key] = merged.model_dump()
                saved.append(key)
        if saved:
            row.fields = fields
            row.revision = (row.revision or 0) + 1
            row.updated_at = utcnow()
        sheet = _sheet(row)
    return SaveResult(sheet=sheet, saved=saved, errors=errors)


async def attach_profile(db: Database, learner_id: str, report: ProfileReport) -> Sheet:
    """Attach a profiling run to the sheet (newest first, the last ten kept)."""
    entry = AttachedProfile(id=uuid.uuid4().hex[:12], attached_at=utcnow(), report=report)
    async with db.session() as s:
        row = await _row(s, learner_id)
        kept = [entry.model_dump(mode="json"), *(row.profiles or [])][:MAX_PROFILES]
        row.profiles = kept
        row.revision = (row.revision or 0) + 1
        row.updated_at = utcnow()
        return _sheet(row)


async def remove_profile(db: Database, learner_id: str, profile_id: str) -> Sheet:
    """Detach one profiling run; an unknown id changes nothing."""
    async with db.session() as s:
        row = await _row(s, learner_id)
        kept = [p for p in row.profiles or [] if p.get("id") != profile_id]
        if len(kept) != len(row.profiles or []):
            row.profiles = kept
            row.revision = (row.revision or 0) + 1
            row.updated_at = utcnow()
        return _sheet(row)


class ExportNumber(BaseModel):
    label: str
    value: str
    status: str = Field(description="known or to measure")
    note: str


class ExportField(BaseModel):
    key: str
    label: str
    question: str
    value: str
    numbers: list[ExportNumber]


class SheetExport(BaseModel):
    """The sheet as it is exported, in JSON and (through a template) in Markdown."""

    title: str = "Workload sheet"
    exported_at: datetime
    revision: int
    fields: list[ExportField]
    measurements: list[AttachedProfile]


def export(sheet: Sheet) -> SheetExport:
    """The sheet with its headings; an empty field stays empty."""
    rows = [
        ExportField(key=f.key, label=f.label, question=f.question, value=sheet.field(f.key).value,
                    numbers=[ExportNumber(label=n.label, value=n.value, status=STATUS_LABELS[n.status], note=n.note)
                             for n in sheet.field(f.key).numbers])
        for f in FIELDS
    ]
    return SheetExport(
        exported_at=utcnow(), revision=sheet.revision, fields=rows, measurements=sheet.profiles
    )
