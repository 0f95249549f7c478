"""The answers that stream (a class export, author mode's event stream) hand the event loop back between their
parts, so no download holds up the room; the event stream is capped, and it and the held banner poll are
rate-limited (reliability review, F1: a socket that
answered its queue without yielding froze every other request)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import httpx
from fastapi import FastAPI
from fastapi.testclient import TestClient

from app.classroom import classes
from app.main import create_app
from app.web.author import OPENS_A_MINUTE, RETRY_LATER_MS, STREAMS_MAX
from app.web.classroom import POLLS_A_MINUTE
from tests.conftest import make_settings
from tests.tally import held
from tests.web.classroom_helpers import LESSON, Room, room_fixture, run_in

__all__ = ["room_fixture"]
LEARNERS = 40


def _on_the_loop(app: FastAPI, client: TestClient, work: Any) -> Any:
    """Run `work(http)` on the app's own event loop with an ASGI client, beside a task that counts how often the
    loop let it run: (work's result, the count)."""

    async def call() -> Any:
        ticks, done = 0, False

        async def ticker() -> None:
            nonlocal ticks
            while not done:
                ticks += 1
                await asyncio.sleep(0)

        task = asyncio.create_task(ticker())
        await asyncio.sleep(0)
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://testserver") as http:
            result = await work(http)
        done = True
        await task
        return result, ticks

    portal = client.portal
    assert portal is not None
    return portal.call(call)


def test_a_class_export_lets_other_requests_in_between_learners(room: Room) -> None:
    created = room.instructor.create()
    run_in(room, lambda db: _join_many(db, created.code))
    for name in ("attempts.csv", "class.json"):

        async def export(http: httpx.AsyncClient, name: str = name) -> httpx.Response:
            return await http.get(f"/teach/{created.code}/export/{name}?key={created.key}")

        with held("streams yield, are capped and rate-limited"):
            r, ticks = _on_the_loop(room.app, room.instructor.client, export)
            assert r.status_code == 200 and (name != "class.json" or r.text.count('"learner-') == LEARNERS)
            assert ticks >= LEARNERS, f"{name}: the loop ran others only {ticks} times in {LEARNERS} learners"


async def _join_many(db: Any, code: str) -> None:
    for n in range(LEARNERS):
        await classes.join(db, code, f"learner-{n}", f"00000000-0000-4000-8000-{n:012d}", f"10.0.{n // 200}.{n}")


def test_author_event_streams_are_capped_and_the_loop_serves_others_meanwhile(tmp_path: Path) -> None:
    with TestClient(create_app(make_settings(tmp_path), author=True)) as client:
        app: FastAPI = client.app  # type: ignore[assignment]

        async def streams(http: httpx.AsyncClient) -> tuple[list[str], int, str]:
            async def one() -> str:
                return (await http.get("/author/events?version=0&lesson=tiny-never")).text

            opened = [asyncio.create_task(one()) for _ in range(STREAMS_MAX)]
            while app.state.author_streams < STREAMS_MAX:
                await asyncio.sleep(0.01)
            extra = await asyncio.wait_for(one(), 5)  # past the cap: told to come back, at once
            health = (await asyncio.wait_for(http.get("/healthz"), 5)).status_code
            app.state.author_stopping.set()  # as at shutdown: every open stream ends
            return [await t for t in opened], health, extra

        with held("streams yield, are capped and rate-limited"):
            (texts, health, extra), ticks = _on_the_loop(app, client, streams)
            assert extra == f"retry: {RETRY_LATER_MS}\n\n"
            assert health == 200 and ticks > STREAMS_MAX  # the loop ran others while the streams waited
            assert all(t.startswith("retry: 300") for t in texts) and app.state.author_streams == 0
        app.state.author_stopping.clear()


def test_one_address_opening_event_streams_too_often_is_told_to_come_back_later(tmp_path: Path) -> None:
    """A page reopens its stream every 25 s; a client reopening it in a loop is told to retry in 25 s, at once,
    while another address still gets its stream."""
    with TestClient(create_app(make_settings(tmp_path), author=True)) as client:
        app: FastAPI = client.app  # type: ignore[assignment]

        async def opens(http: httpx.AsyncClient) -> list[str]:
            app.state.author_stopping.set()  # each stream that is let in ends at once, as at shutdown
            texts = [(await http.get("/author/events?version=0")).text for _ in range(OPENS_A_MINUTE + 3)]
            app.state.author_stopping.clear()
            return texts

        with held("streams yield, are capped and rate-limited"):
            texts, _ = _on_the_loop(app, client, opens)
            let_in = [t for t in texts if t.startswith("retry: 300")]
            told = [t for t in texts if t == f"retry: {RETRY_LATER_MS}\n\n"]
            assert len(let_in) == OPENS_A_MINUTE and len(told) == 3 and texts[-1] in told


def test_a_learner_polling_the_banner_in_a_loop_gets_429_and_others_are_not_slowed(room: Room) -> None:
    created = room.instructor.create()
    loud, quiet = room.learner(), room.learner()
    for student, name in ((loud, "Loud"), (quiet, "Quiet")):
        student.joins(created.code, name)
    step = [s.open(f"/lessons/{LESSON}/1") for s in (loud, quiet)]
    with held("streams yield, are capped and rate-limited"):
        answers = [loud.poll(step[0]) for _ in range(POLLS_A_MINUTE + 2)]
        codes = [r.status_code for r in answers]
        assert 429 not in codes[:POLLS_A_MINUTE] and codes[POLLS_A_MINUTE:] == [429, 429]
        refused = answers[-1]
        assert 1 <= int(refused.headers["Retry-After"]) <= 60 and "Wait" in refused.text
        assert quiet.poll(step[1]).status_code in (200, 204, 304)  # another learner: counted apart
