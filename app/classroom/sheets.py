"""The workload sheet: each learner's five fields, marked known or to measure, and the timings they measured.

The sheet never fills a field: what the learner did not write stays empty. A field still marked "to
measure" may hold a number only together with a note of where and how that number was measured.
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
from app.profiling import ProfileReport
from app.worksheet import FIELD_KEYS, FIELDS

Status = Literal["known", "to_measure"]
STATUS_LABELS: dict[str, str] = {"known": "known", "to_measure": "to measure"}
MAX_VALUE, MAX_NOTE = 2000, 500
MAX_PROFILES = 10
CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
DIGIT = re.compile(r"\d")


class SheetField(BaseModel):
    """What the learner wrote under one heading."""

    value: str = ""
    status: Status = "to_measure"
    note: str = Field(default="", description="Where and how the number was measured")


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


def check_field(field: SheetField) -> str:
    """Why a field cannot be saved as it stands, or '' when it can."""
    if len(field.value) > MAX_VALUE:
        return f"Keep it under {MAX_VALUE:,} characters; this has {len(field.value):,}."
    if len(field.note) > MAX_NOTE:
        return f"Keep the note under {MAX_NOTE:,} characters; it has {len(field.note):,}."
    if field.status == "to_measure" and DIGIT.search(field.value) and not field.note.strip():
        return ("This field is marked to measure but holds a number. Say where and how that number was "
                "measured in the note, mark the field known, or take the number out.")  # fmt: skip
    return ""


def merge(current: SheetField, form: Mapping[str, str], key: str) -> tuple[SheetField | None, str]:
    """The field as the form changes it, or None with the reason it cannot be saved."""
    status = form.get(f"{key}_status", current.status)
    if status not in STATUS_LABELS:
        return None, "Choose known or to measure."
    candidate = SheetField(
        value=_clean(form.get(key, current.value)), status=status,
        note=_clean(form.get(f"{key}_note", current.note)),
    )  # fmt: skip
    error = check_field(candidate)
    return (None, error) if error else (candidate, "")


def touched(form: Mapping[str, str]) -> list[str]:
    """Field keys the form carries a value, status or note for."""
    return [k for k in FIELD_KEYS if any(n in form for n in (k, f"{k}_status", f"{k}_note"))]


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


class ExportField(BaseModel):
    key: str
    label: str
    question: str
    value: str
    status: str = Field(description="known or to measure")
    note: str


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
                    status=STATUS_LABELS[sheet.field(f.key).status], note=sheet.field(f.key).note)
        for f in FIELDS
    ]  # fmt: skip
    return SheetExport(
        exported_at=utcnow(), revision=sheet.revision, fields=rows, measurements=sheet.profiles
    )
