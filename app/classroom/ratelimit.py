"""Rate limits kept in the database, so several app processes share one count."""

from __future__ import annotations

import math
import time

from sqlalchemy import delete, select
from sqlalchemy.ext.asyncio import AsyncSession

from app.classroom.db import Database
from app.classroom.models import RateHit
from app.classroom.progress import _insert


class RateLimited(Exception):
    """Too many requests from one client; retry_after is in seconds."""

    def __init__(self, retry_after: int, by: str = "") -> None:
        self.retry_after = retry_after
        super().__init__(f"Too many attempts{f' from {by}' if by else ''}. Wait {retry_after} s and try again.")


async def hit(
    db: Database, key: str, limit: int, window_seconds: int, now: float | None = None, by: str = ""
) -> int:
    """Count one request for key in the current window; RateLimited (naming `by`, who is counted) past `limit`.
    Returns the count."""
    now = time.time() if now is None else now
    async with db.session() as s:
        count = await count_hit(s, key, window_seconds, now)
    check(count, limit, window_seconds, now, by)
    return count


async def count_hit(s: AsyncSession, key: str, window_seconds: int, now: float) -> int:
    """Count one request inside a caller's transaction (commit it, then `check`); returns the count so far.

    The count slides: this window's hits plus the previous window's, weighted by the share of it still inside
    the last `window_seconds`, so a burst that straddles two windows is counted whole (a fixed window would
    start again from zero half-way through it)."""
    window = int(now // window_seconds)
    stmt = _insert(s, RateHit).values(key=key, window=window, hits=1)
    stmt = stmt.on_conflict_do_update(index_elements=["key", "window"], set_={"hits": RateHit.hits + 1})
    count: int = (await s.execute(stmt.returning(RateHit.hits))).scalar_one()
    before = select(RateHit.hits).where(RateHit.key == key, RateHit.window == window - 1)
    previous: int = (await s.execute(before)).scalar_one_or_none() or 0
    if window % 16 == 0:  # now and then, forget old windows
        await s.execute(delete(RateHit).where(RateHit.window < window - 2))
    still_inside = 1 - (now % window_seconds) / window_seconds
    return math.ceil(count + previous * still_inside)


def check(count: int, limit: int, window_seconds: int, now: float, by: str = "") -> None:
    """RateLimited when `count` is past `limit`, with the seconds left in the window."""
    if count > limit:
        raise RateLimited(int(window_seconds - now % window_seconds) + 1, by)


class Window:
    """A count a key over the last `window_seconds`, kept in this process's memory: for connections held open
    (a banner poll, an event stream), where a database write on each would cost more than the connection. A
    process forgets its oldest key past `keys_max`, so a flood of keys cannot grow it."""

    def __init__(self, limit: int, window_seconds: float, keys_max: int = 50_000) -> None:
        self.limit, self.window_seconds, self.keys_max = limit, window_seconds, keys_max
        self.hits: dict[str, list[float]] = {}

    def hit(self, key: str, now: float | None = None, by: str = "") -> None:
        """Count one for `key`; RateLimited (with the seconds until the oldest hit leaves the window) past `limit`."""
        now = time.monotonic() if now is None else now
        since = now - self.window_seconds
        kept = [t for t in self.hits.pop(key, []) if t > since]  # popped and put back: the dict stays oldest-first
        if len(kept) >= self.limit:
            self.hits[key] = kept
            raise RateLimited(max(1, math.ceil(kept[0] - since)), by)
        kept.append(now)
        self.hits[key] = kept
        while len(self.hits) > self.keys_max:
            del self.hits[next(iter(self.hits))]
