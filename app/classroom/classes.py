"""Class instances: create, join, pace, close and delete; every piece of state lives in the database."""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
import time
import unicodedata
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import delete, func, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncConnection

from app.classroom.class_models import Classroom, Member, StepTime
from app.classroom.db import Database
from app.classroom.models import DrillAttempt, RateHit, utcnow
from app.classroom.outline import Outline
from app.classroom.progress import touch_learner
from app.classroom.ratelimit import RateLimited, hit
from app.classroom.seat import horizon, is_open, pass_steps

# 31 symbols: digits and capitals without the look-alikes 0/O, 1/I/L. 31**6 = 887,503,681 codes.
CODE_ALPHABET = "23456789ABCDEFGHJKMNPQRSTUVWXYZ"
CODE_LENGTH = 6
NAME_MAX = 40
TITLE_MAX = 120
PACE_MODES = ("free", "bring", "hold")
MESSAGE_MAX = 200
TIMER_MINUTES = (1, 60)
RESUME_LENGTH = 6  # a resume code: 6 symbols of CODE_ALPHABET, 887,503,681 codes, wrong tries rate-limited

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


def clean_title(title: str) -> str:
    title = " ".join(title.split())
    if not title:
        raise ClassError("title", "Give the class a title the room will recognise, such as 'GPU basics, Tuesday'.")
    if len(title) > TITLE_MAX:
        raise ClassError("title", f"Keep the title to {TITLE_MAX} characters or fewer.")
    return title


async def create_class(
    db: Database, title: str, outline: Outline, ends_in_hours: float | None, owner_id: int | None = None,
    like: Classroom | None = None,
) -> tuple[Classroom, str]:
    """A new class and its instructor key (returned once; only its hash is stored). `like`: a class whose settings
    and pacing the new one copies (the next section of the same course), without its learners."""
    title = clean_title(title)
    key = secrets.token_urlsafe(24)
    now = utcnow()
    ends = now + timedelta(hours=ends_in_hours) if ends_in_hours else None
    copied: dict[str, Any] = {"pace_mode": "free", "pace_step": None, "pace_move": False, "pace_hold": False,
                              "idle_minutes": 5}  # a copied bring is reached by each newcomer, landing on its step
    if like is not None:
        copied = {k: getattr(like, k) for k in copied}
    for _ in range(8):  # a collision among 887 million codes is rare; try again when it happens
        klass = Classroom(code=new_code(), title=title, lesson=outline.slug, key_hash=hash_key(key), created_at=now,
                          ends_at=ends, revealed=[], outline=outline.to_json(), pace_version=0, owner_id=owner_id,
                          message="", answers_shown={}, **copied)
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


async def members(db: Database, klass: Classroom) -> list[Member]:
    """Every member of the class, in name order."""
    async with db.session() as s:
        return list((await s.execute(select(Member).where(Member.class_id == klass.id)
                                     .order_by(Member.name_key))).scalars())


async def member_counts(db: Database, class_ids: list[int]) -> dict[int, int]:
    """How many joined each class: one grouped read."""
    if not class_ids:
        return {}
    async with db.session() as s:
        rows = await s.execute(select(Member.class_id, func.count()).where(Member.class_id.in_(class_ids))
                               .group_by(Member.class_id))
        return {class_id: int(n) for class_id, n in rows}


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


@dataclass(frozen=True)
class Joined:
    """Who joined (or came back), and the step they land on."""

    klass: Classroom
    member: Member
    step: int
    resumed: bool = False  # by a resume code: this browser becomes the member's learner


def resume_code(secret: str, member: Member) -> str:
    """A member's resume code: derived from the server's secret, the member and their salt (never stored), so
    only their own page and their instructor show it, and a new salt replaces it."""
    digest = hmac.new(secret.encode(), f"resume\x1f{member.id}\x1f{member.resume_salt}".encode(),
                      hashlib.sha256).digest()
    n = int.from_bytes(digest[:8], "big")
    return "".join(CODE_ALPHABET[(n // len(CODE_ALPHABET) ** i) % len(CODE_ALPHABET)] for i in range(RESUME_LENGTH))


def normalise_resume(text: str) -> str:
    return re.sub(r"[\s-]", "", text).upper()[:20]


async def join(db: Database, code_text: str, name_text: str, learner_id: str, client: str, *, resume: str = "",
               secret: str = "") -> Joined:
    """Attach the learner to the class under a unique name; a learner already in it simply resumes, and a learner
    on a new device with their resume code takes their seat back. A newcomer lands where the class is."""
    klass = await find_open_class(db, code_text, client, learner_id)
    if resume.strip():
        return await _resume(db, klass, name_text, resume, learner_id, client, secret)
    existing = await membership(db, klass, learner_id)
    if existing is not None:
        return Joined(klass, existing, existing.step or 1)
    name, name_key = clean_name(name_text)
    now = utcnow()
    try:
        async with db.session() as s:
            conn = await s.connection()
            step = await landing_step(conn, klass, now)
            seat = (await conn.execute(select(func.count()).select_from(Member).where(
                Member.class_id == klass.id))).scalar_one()
            await touch_learner(conn, learner_id)
            member = Member(class_id=klass.id, learner_id=learner_id, name=name, name_key=name_key, joined_at=now,
                            last_active=now, moved_version=klass.bring_version, seat=int(seat),
                            resume_salt=secrets.token_hex(4))
            s.add(member)
            await s.flush()
            await pass_steps(conn, member.id, learner_id, klass.lesson, 1, step)
    except IntegrityError:
        again = await membership(db, klass, learner_id)  # a double submit from the same browser
        if again is not None:
            return Joined(klass, again, again.step or 1)
        raise ClassError("name", f"Someone in this class is already called '{name}'. If that is you on another "
                         "device, type your resume code below (it is on your class page, or ask your instructor); "
                         "if not, add an initial.", status=409) from None
    return Joined(klass, member, step)


async def landing_step(s: AsyncConnection, klass: Classroom, now: datetime) -> int:
    """Where a newcomer lands: where the class is. At their own pace, step 1. During a bring that most active
    learners have not reached yet, its step; otherwise the middle step of the active learners (the class moved on),
    never past a hold."""
    if klass.pace_mode == "free" or not klass.pace_step:
        return 1
    rows = (await s.execute(select(Member.step, Member.moved_version).where(
        Member.class_id == klass.id, Member.last_active >= now - timedelta(minutes=klass.idle_minutes)))).all()
    reached = sum(1 for _, version in rows if version >= klass.bring_version)
    steps = sorted(step for step, _ in rows if step)
    if klass.pace_mode == "bring" and (not steps or 2 * reached < len(rows)):
        step = klass.pace_step
    else:
        step = steps[(len(steps) - 1) // 2] if steps else klass.pace_step
    held = klass.pace_step if klass.pace_mode == "hold" or klass.pace_hold else None
    return min(step, held) if held else step


async def _resume(db: Database, klass: Classroom, name_text: str, code: str, learner_id: str, client: str,
                  secret: str) -> Joined:
    """A member on a new device: their name and resume code give this browser their seat (and their progress).
    Wrong codes count against the same limits as wrong class codes."""
    _, name_key = clean_name(name_text)
    async with db.session() as s:
        member: Member | None = (await s.execute(select(Member).where(
            Member.class_id == klass.id, Member.name_key == name_key))).scalar_one_or_none()
    if member is not None and hmac.compare_digest(resume_code(secret, member), normalise_resume(code)):
        return Joined(klass, member, member.step or 1, resumed=True)
    limits = {f"resume-wrong:{client}:{learner_id}": WRONG_CODE_LIMIT,
              f"resume-wrong:{client}": WRONG_CODE_ADDRESS_LIMIT}
    wait = await _over(db, limits)
    if wait is not None:
        raise RateLimited(wait, COUNTED)
    for key, limit in limits.items():
        await _count(db, key, limit)
    if member is None:
        raise ClassError("name", "Nobody in this class has that name: type it as you joined, or leave the resume "
                         "code empty to join as someone new.", status=404)
    raise ClassError("resume", f"That is not {member.name}'s resume code. It is on their class page; the "
                     "instructor can read it out from the dashboard.", status=403)


# --- the instructor's controls ------------------------------------------------------------------------


def _changed() -> dict[str, Any]:
    """Every learner's banner may change: the polls waiting on the class wake (app/classroom/bell.py)."""
    return {"pace_version": Classroom.pace_version + 1}


async def _set(db: Database, klass: Classroom, **values: Any) -> None:
    async with db.session() as s:
        await s.execute(update(Classroom).where(Classroom.id == klass.id).values(**values))


async def set_pace(db: Database, klass: Classroom, mode: str, step: int | None, move: bool, steps: int,
                   hold: bool = False) -> None:
    """Bring everyone to a step (and maybe hold them there), hold the class at one, or release it."""
    if not is_open(klass):
        raise ClassError("mode", "This class is closed; pacing no longer applies.", status=409)
    if mode not in PACE_MODES:
        raise ClassError("mode", "Choose bring, hold or release.")
    if mode != "free" and (step is None or not 1 <= step <= steps):
        raise ClassError("step", f"Choose a step from 1 to {steps}.")
    bring = {"bring_version": Classroom.pace_version + 1} if mode == "bring" else {}  # this bring's own number
    await _set(db, klass, pace_mode=mode, pace_step=step if mode != "free" else None,
               pace_move=move and mode == "bring", pace_hold=hold and mode == "bring", **bring, **_changed())


async def set_idle(db: Database, klass: Classroom, minutes: int) -> None:
    if not 1 <= minutes <= 120:
        raise ClassError("idle_minutes", "Choose between 1 and 120 minutes.")
    await _set(db, klass, idle_minutes=minutes)


async def reveal(db: Database, klass: Classroom, drill_key: str, shown: bool) -> None:
    """Show or hide one drill's answer distribution on the projector (hiding it hides its answer too)."""
    revealed = [k for k in (klass.revealed or []) if k != drill_key] + ([drill_key] if shown else [])
    answers = {k: v for k, v in (klass.answers_shown or {}).items() if k in revealed}
    await _set(db, klass, revealed=revealed, answers_shown=answers)


async def show_answer(db: Database, klass: Classroom, drill_key: str, seed: int | None) -> None:
    """Show the right answer and worked solution of the question on the projector (`seed`), or hide them (None).
    Showing an answer reveals the drill too."""
    answers = dict(klass.answers_shown or {})
    revealed = list(klass.revealed or [])
    if seed is None:
        answers.pop(drill_key, None)
    else:
        answers = {drill_key: seed}  # one answer on the screen at a time: the one the room discusses
        revealed = revealed if drill_key in revealed else [*revealed, drill_key]
    await _set(db, klass, revealed=revealed, answers_shown=answers)


def clean_message(text: str) -> str:
    message = " ".join(unicodedata.normalize("NFKC", text).split())
    if any(unicodedata.category(c).startswith("C") for c in message):
        raise ClassError("message", "Use letters, digits and punctuation only.")
    if not message:
        raise ClassError("message", "Type a message for the room, such as 'Five minutes left', or press Clear.")
    if len(message) > MESSAGE_MAX:
        raise ClassError("message", f"Keep it to {MESSAGE_MAX} characters or fewer (this one has {len(message)}).")
    return message


async def set_message(db: Database, klass: Classroom, text: str | None) -> None:
    """A message on every learner's page and the projector until cleared (None clears it)."""
    if not is_open(klass):
        raise ClassError("message", "This class is closed: learners no longer see messages.", status=409)
    message = "" if text is None else clean_message(text)
    await _set(db, klass, message=message, message_at=utcnow() if message else None, **_changed())


async def set_timer(db: Database, klass: Classroom, drill_key: str, minutes_text: str | None) -> None:
    """A countdown for one drill on the projector ("two minutes for this one"); None stops it."""
    if minutes_text is None:
        await _set(db, klass, timer_key=None, timer_ends_at=None)
        return
    if not is_open(klass):
        raise ClassError("timer_minutes", "This class is closed; timers no longer run.", status=409)
    low, high = TIMER_MINUTES
    text = minutes_text.strip().replace(",", ".")
    try:
        minutes = float(text)
    except ValueError:
        minutes = -1.0
    if not low <= minutes <= high:
        raise ClassError("timer_minutes", f"Give the minutes as a number from {low} to {high}, such as 2.")
    await _set(db, klass, timer_key=drill_key, timer_ends_at=utcnow() + timedelta(minutes=minutes))


async def close(db: Database, klass: Classroom) -> None:
    """Stop recording: learners keep reading, the class's views freeze at this moment."""
    async with db.session() as s:
        await s.execute(update(Classroom).where(Classroom.id == klass.id, Classroom.closed_at.is_(None)).values(
            closed_at=utcnow(), **_changed()))


async def reopen(db: Database, klass: Classroom, ends_in_hours: float | None) -> None:
    """Open a closed (or ended) class again, with a new end time or none: recording goes on where it stopped."""
    if is_open(klass):
        raise ClassError("reopen", "This class is open already (reopened from another tab?): nothing changed.",
                         status=409)
    ends = utcnow() + timedelta(hours=ends_in_hours) if ends_in_hours else None
    await _set(db, klass, closed_at=None, ends_at=ends, **_changed())


async def delete_class(db: Database, klass: Classroom) -> int:
    """Delete the class, its members' names, time on task, and the attempts made in it. Returns members."""
    end = horizon(klass)
    # driven by the members (the attempts' learner and lesson index), never a scan of every class's attempts of the
    # lesson: a term of classes of one lesson made that grow with each class
    joined = select(Member.joined_at).where(Member.class_id == klass.id,
                                            Member.learner_id == DrillAttempt.learner_id).scalar_subquery()
    attempts = delete(DrillAttempt).where(
        DrillAttempt.learner_id.in_(select(Member.learner_id).where(Member.class_id == klass.id)),
        DrillAttempt.lesson == klass.lesson, DrillAttempt.created_at >= joined)
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
