"""An instructor's own classes: the browser that creates a class gets an instructor key (kept in a cookie; the
server stores only its hash), and /teach lists every class made under that key. The same key, carried to another
device by the instructor link, lists and opens them there; replacing it makes the old link worthless."""

from __future__ import annotations

import secrets

from sqlalchemy import select, update

from app.classroom.class_models import Classroom, Instructor
from app.classroom.classes import hash_key
from app.classroom.db import Database
from app.classroom.models import utcnow


async def new_instructor(db: Database) -> tuple[Instructor, str]:
    """A new instructor and their key (returned once; only its hash is stored)."""
    key = secrets.token_urlsafe(24)
    instructor = Instructor(key_hash=hash_key(key), created_at=utcnow())
    async with db.session() as s:
        s.add(instructor)
    return instructor, key


async def instructor_by_key(db: Database, key: str | None) -> Instructor | None:
    """The instructor this key belongs to (looked up by its hash), if any."""
    if not key or len(key) > 100:
        return None
    async with db.session() as s:
        found: Instructor | None = (await s.execute(
            select(Instructor).where(Instructor.key_hash == hash_key(key)))).scalar_one_or_none()
        return found


async def replace_key(db: Database, instructor: Instructor) -> str:
    """A new key for the same instructor: links and cookies holding the old one stop working."""
    key = secrets.token_urlsafe(24)
    async with db.session() as s:
        await s.execute(update(Instructor).where(Instructor.id == instructor.id).values(key_hash=hash_key(key)))
    return key


async def classes_of(db: Database, instructor: Instructor) -> list[Classroom]:
    """Every class the instructor created, newest first."""
    async with db.session() as s:
        return list((await s.execute(select(Classroom).where(Classroom.owner_id == instructor.id)
                                     .order_by(Classroom.created_at.desc(), Classroom.id.desc()))).scalars())


def owns(klass: Classroom, instructor: Instructor | None) -> bool:
    return instructor is not None and klass.owner_id == instructor.id


async def take_over(db: Database, kept: Instructor, other: Instructor | None) -> int:
    """A browser that held `other`'s key opened `kept`'s link: its classes join `kept`'s list (the same person
    held both keys). Returns how many moved."""
    if other is None or other.id == kept.id:
        return 0
    async with db.session() as s:
        result = await s.execute(update(Classroom).where(Classroom.owner_id == other.id).values(owner_id=kept.id))
        return int(getattr(result, "rowcount", 0) or 0)
