"""Class instances: create, join, pace, close and delete; every piece of state lives in the database."""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
import time
import unicodedata
from datetime import timedelta

from sqlalchemy import delete, exists, select, update
from sqlalchemy.exc import IntegrityError

from app.classroom.class_models import Classroom, Member, StepTime
from app.classroom.db import Database
from app.classroom.models import DrillAttempt, RateHit, utcnow
from app.classroom.outline import Outline
from app.classroom.progress import touch_learner
from app.classroom.ratelimit import RateLimited, hit
from app.classroom.seat import (
    horizon,
    is_open,
)

# 31 symbols: digits and capitals without the look-alikes 0/O, 1/I/L. 31**6 = 887,503,681 codes.
CODE_ALPHABET = "23456789ABCDEFGHJKMNPQRSTUVWXYZ"
CODE_LENGTH = 6
NAME_MAX = 40
TITLE_MAX = 120
PACE_MODES = ("free", "bring", "hold")

# Rate limits, shared by every process through the database (see docs/classroom.md). A room of 300 often
# shares one address (venue Wi-Fi, a NAT), so nobody's mistakes may lock the others out: the right class code
# (and the right admin token) is checked first and always gets in; only failures are counted and limited.
WRONG_CODE_LIMIT = (10, 600)  # codes that match no open class, per browser: 10 per 10 minutes
WRONG_CODE_ADDRESS_LIMIT = (100, 600)  # and per address, whatever the browser: 100 per 10 minutes
CREATE_LIMIT = (30, 600)  # class creations without an admin token, or wrong admin tokens: 30 per 10 minutes
COUNTED = "your network"  # who these limits count: the browser and its address, as the learner is told


class ClassError(Exception):
    """Input a person can fix: the message goes next to `field`, with an HTTP status."""

    def __init__(self, field: str, message: str, status: int = 422) -> None:
        self.field, self.message, self.status = field, message, status
        super().__init__(message)


def new_code() -> str:
    return "".join(secrets.choice(CODE_ALPHABET) for _ in range(CODE_LENGTH))


def hash_key(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()


def key_ok(klass: Classroom, key: str | None) -> bool:
    """Constant-time check of an instructor key against the stored hash."""
    return bool(key) and hmac.compare_digest(hash_key(key or ""), klass.key_hash)


def normalise_code(text: str) -> str | None:
    """'k7m-3qx ' -> 'K7M3QX'; None when it cannot be a class code."""
    code = re.sub(r"[\s-]", "", text).upper()
    if len(code) != CODE_LENGTH or any(c not in CODE_ALPHABET for c in code):
        return None
    return code


def clean_name(text: str) -> tuple[str, str]:
    """A display name trimmed and checked, and its case-folded key for uniqueness."""
    name = " ".join(unicodedata.normalize("NFKC", text).split())
    if any(unicodedata.category(c).startswith("C") for c in name):
        raise ClassError("name", "Use letters, digits and punctuation only.")
    if not name:
        raise ClassError("name", "Enter the name the instructor will see, such as your first name.")
    if len(name) > NAME_MAX:
        raise ClassError("name", f"Keep it to {NAME_MAX} characters or fewer.")
    return name, name.casefold()[:NAME_MAX]


def client_key(host: str | None) -> str:
    return host or "unknown"


async def _over(db: Database, limits: dict[str, tuple[int, int]]) -> int | None:
    """Seconds to wait when any key is already past its limit (count, window seconds) in its window, else None.
    One read for all the keys."""
    now = time.time()
    windows = {key: int(now // seconds) for key, (_, seconds) in limits.items()}
    async with db.session() as s:
        rows = (await s.execute(select(RateHit.key, RateHit.window, RateHit.hits).where(
            RateHit.key.in_(list(limits)), RateHit.window.in_(set(windows.values()))))).all()
    waits = [int(limits[key][1] - now % limits[key][1]) + 1
             for key, window, hits in rows if window == windows[key] and hits >= limits[key][0]]
    return max(waits) if waits else None


async def _count(db: Database, key: str, limit: tuple[int, int]) -> None:
    await hit(db, key, *limit, by=COUNTED)


# --- creating ---------------------------------------------------------------------------------------


async def guard_create(db: Database, client: str, token_ok: bool | None = None) -> None:
    """Count a try at creating a class against the client's limit. With an admin token configured (`token_ok` is
    not None) only wrong tokens count, and the right token always gets through."""
    if token_ok:
        return
    await _count(db, f"create:{client}", CREATE_LIMIT)


async def create_class(
    db: Database, title: str, outline: Outline, ends_in_hours: float | None
) -> tuple[Classroom, str]:
    """A new class and its instructor key (returned once; only its hash is stored)."""
    title = " ".join(title.split())
    if not title:
        raise ClassError("title", "Give the class a title the room will recognise, such as 'GPU basics, Tuesday'.")
    if len(title) > TITLE_MAX:
        raise ClassError("title", f"Keep the title to {TITLE_MAX} characters or fewer.")
    key = secrets.token_urlsafe(24)
    now = utcnow()
    ends = now + timedelta(hours=ends_in_hours) if ends_in_hours else None
    for _ in range(8):  # a collision among 887 million codes is rare; try again when it happens
        klass = Classroom(code=new_code(), title=title, lesson=outline.slug, key_hash=hash_key(key), created_at=now,
                          ends_at=ends, revealed=[], outline=outline.to_json(), pace_mode="free", pace_version=0,
                          idle_minutes=5)
        try:
            async with db.session() as s:
                s.add(klass)
            return klass, key
        except IntegrityError:
            continue
    raise ClassError("title", "Could not find a free class code; try again.", status=503)


async def get_class(db: Database, code: str) -> Classroom | None:
    norm = normalise_code(code)
    if norm is None:
        return None
    async with db.session() as s:
        found = await s.execute(select(Classroom).where(Classroom.code == norm))
        klass: Classroom | None = found.scalar_one_or_none()
        return klass


# --- joining ----------------------------------------------------------------------------------------


async def membership(db: Database, klass: Classroom, learner_id: str) -> Member | None:
    async with db.session() as s:
        found: Member | None = (await s.execute(select(Member).where(
            Member.class_id == klass.id, Member.learner_id == learner_id))).scalar_one_or_none()
        return found


async def find_open_class(db: Database, code_text: str, client: str, learner_id: str) -> Classroom:
    """The open class with this code. The right code always gets in; a wrong or empty one is refused (429 once
    the browser or its address is past its limit) and counted against both."""
    klass = await get_class(db, code_text) if code_text.strip() else None
    if klass is not None and is_open(klass):
        return klass
    limits = {f"join-wrong:{client}:{learner_id}": WRONG_CODE_LIMIT, f"join-wrong:{client}": WRONG_CODE_ADDRESS_LIMIT}
    wait = await _over(db, limits)
    if wait is not None:
        raise RateLimited(wait, COUNTED)
    for key, limit in limits.items():
        await _count(db, key, limit)
    if not code_text.strip():
        raise ClassError("code", "Enter the class code shown on the projector.")
    if normalise_code(code_text) is None:
        raise ClassError("code", "A class code is six letters and digits, such as K7M3QX.")
    if klass is not None:
        raise ClassError("code", "This class has ended. Ask the instructor for the new code.", status=410)
    raise ClassError("code", "No class has this code. Check the six characters on the projector.", status=404)


async def join(db: Database, code_text: str, name_text: str, learner_id: str, client: str) -> tuple[Classroom, Member]:
    """Attach the learner to the class under a unique name; a learner already in it simply resumes."""
    klass = await find_open_class(db, code_text, client, learner_id)
    existing = await membership(db, klass, learner_id)
    if existing is not None:
        return klass, existing
    name, name_key = clean_name(name_text)
    now = utcnow()
    member = Member(class_id=klass.id, learner_id=learner_id, name=name, name_key=name_key, joined_at=now,
                    last_active=now, moved_version=0)
    try:
        async with db.session() as s:
            await touch_learner(s, learner_id)
            s.add(member)
    except IntegrityError:
        again = await membership(db, klass, learner_id)  # a double submit from the same browser
        if again is not None:
            return klass, again
        raise ClassError("name", f"Someone in this class is already called '{name}'. Add an initial.",
                         status=409) from None
    return klass, member


# --- the instructor's controls ------------------------------------------------------------------------


async def set_pace(db: Database, klass: Classroom, mode: str, step: int | None, move: bool, steps: int) -> None:
    """Bring everyone to a step, hold the class at one, or release it."""
    if not is_open(klass):
        raise ClassError("mode", "This class is closed; pacing no longer applies.", status=409)
    if mode not in PACE_MODES:
        raise ClassError("mode", "Choose bring, hold or release.")
    if mode != "free" and (step is None or not 1 <= step <= steps):
        raise ClassError("step", f"Choose a step from 1 to {steps}.")
    async with db.session() as s:
        await s.execute(update(Classroom).where(Classroom.id == klass.id).values(
            pace_mode=mode, pace_step=step if mode != "free" else None, pace_move=move and mode == "bring",
            pace_version=Classroom.pace_version + 1))


async def set_idle(db: Database, klass: Classroom, minutes: int) -> None:
    if not 1 <= minutes <= 120:
        raise ClassError("idle_minutes", "Choose between 1 and 120 minutes.")
    async with db.session() as s:
        await s.execute(update(Classroom).where(Classroom.id == klass.id).values(idle_minutes=minutes))


async def reveal(db: Database, klass: Classroom, drill_key: str, shown: bool) -> None:
    """Show or hide one drill's answer distribution on the projector."""
    revealed = [k for k in (klass.revealed or []) if k != drill_key] + ([drill_key] if shown else [])
    async with db.session() as s:
        await s.execute(update(Classroom).where(Classroom.id == klass.id).values(revealed=revealed))


async def close(db: Database, klass: Classroom) -> None:
    """Stop recording: learners keep reading, the class's views freeze at this moment."""
    async with db.session() as s:
        await s.execute(update(Classroom).where(Classroom.id == klass.id, Classroom.closed_at.is_(None)).values(
            closed_at=utcnow(), pace_version=Classroom.pace_version + 1))


async def delete_class(db: Database, klass: Classroom) -> int:
    """Delete the class, its members' names, time on task, and the attempts made in it. Returns members."""
    end = horizon(klass)
    made_in_class = exists().where(Member.class_id == klass.id, Member.learner_id == DrillAttempt.learner_id,
                                   DrillAttempt.created_at >= Member.joined_at)
    attempts = delete(DrillAttempt).where(DrillAttempt.lesson == klass.lesson, made_in_class)
    if end is not None:
        attempts = attempts.where(DrillAttempt.created_at <= end)
    members = select(Member.id).where(Member.class_id == klass.id)
    async with db.session() as s:
        count = len((await s.execute(members)).all())
    async with db.session() as s:  # the writes in one transaction, starting with a write
        await s.execute(attempts)
        await s.execute(delete(StepTime).where(StepTime.member_id.in_(members)))
        await s.execute(delete(Member).where(Member.class_id == klass.id))
        await s.execute(delete(Classroom).where(Classroom.id == klass.id))
    return count
