"""The dashboard's poll by increments: each process keeps a class's Board and, at every poll, reads only the members
whose change stamp (`class_members.last_active`, bumped by every visit, completion, answer and widget move) moved
since its last read, and sends the page only the rows that changed since the page's own stamp.

The stamps are the writers' clocks, not the commit order: a transaction stamped just before a read can commit just
after it. So every read goes back GRACE before the last one; a member read again unchanged keeps the time the board
found their last change, and a page gets the rows the board found changed after the page's stamp (the time of the
read that answered its last poll), whichever process answered it. The counts, the drills and the stuck list are
computed for the whole class at every poll from the board (no per-learner query), the texts that change with the
clock ("2 min ago") by the page from timestamps in each row."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from weakref import WeakKeyDictionary

from app.classroom.class_models import Classroom
from app.classroom.dashboard import Board, Dashboard, assemble, read_class, read_marks
from app.classroom.db import Database
from app.classroom.figures import outline_of, part_labels
from app.classroom.models import utcnow

GRACE = timedelta(seconds=5)  # longer than a write transaction takes from its stamp to its commit
KEPT = 32  # classes whose board a process keeps


@dataclass
class Kept:
    board: Board
    read_at: datetime
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)


_kept: WeakKeyDictionary[Database, dict[tuple[int, str], Kept]] = WeakKeyDictionary()


EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
MICROSECOND = timedelta(microseconds=1)


def stamp_of(moment: datetime) -> str:
    """A time as whole microseconds since 1970: exact both ways, unlike a float."""
    return str((moment - EPOCH) // MICROSECOND)


def parse_stamp(text: str) -> datetime | None:
    """A page's stamp back as a time; None for none or nonsense (the poll then sends every row)."""
    if not text.isdigit() or len(text) > 18:
        return None
    moment = EPOCH + int(text) * MICROSECOND
    return moment if moment <= utcnow() else None


async def dashboard(db: Database, klass: Classroom, since: str = "", rows: bool = True) -> Dashboard:
    """The dashboard now: every row when `since` is no stamp (the page's first load), else only the rows changed
    since that stamp; no rows at all for `rows=False` (the cockpit). The rows are read on the event loop (the
    connection lives there); the board is built and assembled on a worker thread, under the board's lock.

    The instructor's changes (the roster, pacing, a message: anything that bumps the class's pace_version) make
    the next poll read the whole class again, in whichever process answers it; rows gone since are sent as gone."""
    now, after = utcnow(), parse_stamp(since)
    boards = _kept.setdefault(db, {})
    key = (klass.id, klass.code)
    kept = boards.get(key)
    stamp = stamp_of(now)
    if kept is None or after is None:  # a page's first load reads the whole class, and keeps it for its polls
        kept = await _read_whole(db, klass, now, None)
        boards.pop(key, None)
        boards[key] = kept
        while len(boards) > KEPT:
            boards.pop(next(iter(boards)))
        chosen: list[int] | None = None if rows else []
    else:
        async with kept.lock:
            if kept.board.version != klass.pace_version:
                kept = boards[key] = await _read_whole(db, klass, now, kept.board)
            else:
                await _catch_up(db, klass, kept, now)
            kept.board.remark(await read_marks(db, klass), now)
        chosen = [i for i, x in kept.board.learners.items() if x.changed_at and x.changed_at > after] if rows else []
    async with kept.lock:
        return await asyncio.to_thread(assemble, klass, kept.board, now, chosen, stamp, after)


async def _read_whole(db: Database, klass: Classroom, now: datetime, old: Board | None) -> Kept:
    """The whole class, read again; rows the old board held that are gone now are remembered as gone."""
    facts = await read_class(db, klass)
    outline = outline_of(klass)
    board = await asyncio.to_thread(Board.of, facts, now, part_labels(outline), len(outline.steps))
    board.version = klass.pace_version
    board.marks = await read_marks(db, klass)
    if old is not None:
        board.gone = {**old.board_gone_since(now), **{i: now for i in set(old.learners) - set(board.learners)}}
    return Kept(board=board, read_at=now)


async def _catch_up(db: Database, klass: Classroom, kept: Kept, now: datetime) -> None:
    """The members changed since the board's last read (less GRACE): their rows, answers as typed included."""
    facts = await read_class(db, klass, since=kept.read_at - GRACE)
    kept.board.merge(facts, now)
    kept.read_at = now

