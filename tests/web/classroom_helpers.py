"""An instructor and learners, each with their own browser (cookie jar), speaking in their own words."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient
from httpx import Response

from app.main import create_app
from app.settings import Settings
from app.web.security import LEARNER_COOKIE, Signer
from tests.conftest import make_settings

LESSON = "tiny"


def csrf_of(html: str) -> str:
    match = re.search(r'name="csrf_token" value="([^"]+)"', html)
    assert match, "the page carries no CSRF token"
    return match.group(1)


def field_error(html: str, name: str) -> str:
    match = re.search(rf'id="f-{name}-error">([^<]*)<', html)
    return match.group(1) if match else ""


@dataclass
class Created:
    code: str
    key: str
    links: dict[str, str]
    page: str


class Instructor:
    """Creates and runs a class from the dashboard."""

    def __init__(self, client: TestClient) -> None:
        self.client = client
        self.code = ""

    def create(self, title: str = "Tuesday group", lesson: str = LESSON, **extra: str) -> Created:
        token = csrf_of(self.client.get("/teach").text)
        r = self.client.post("/teach", data={"csrf_token": token, "title": title, "lesson": lesson, **extra})
        assert r.status_code == 200 and r.history[0].status_code == 303, r.text[:800]  # post, redirect, get
        links = dict(re.findall(r'data-link="(\w+)" href="([^"]+)"', r.text))
        code = re.search(r'data-code="(\w+)"', r.text).group(1)  # type: ignore[union-attr]
        key = links["dashboard"].split("key=")[1]
        self.code = code
        return Created(code=code, key=key, links=links, page=r.text)

    def open_dashboard(self, created: Created) -> str:
        r = self.client.get(re.sub(r"^https?://testserver", "", created.links["dashboard"]))
        assert r.status_code == 200, r.text[:500]
        return r.text

    def live(self, view: str = "") -> Response:
        return self.client.get(f"/teach/{self.code}{view}", headers={"HX-Request": "true"})

    def post(self, action: str, **data: str) -> Response:
        token = csrf_of(self.client.get(f"/teach/{self.code}").text)
        return self.client.post(f"/teach/{self.code}/{action}", data={"csrf_token": token, **data},
                                follow_redirects=False)

    def pace(self, mode: str, step: int | None = None, move: bool = False) -> Response:
        data = {"mode": mode, "step": str(step or "")} | ({"move": "on"} if move else {})
        return self.post("pace", **data)


class Student:
    """A learner in their own browser."""

    def __init__(self, client: TestClient) -> None:
        self.client = client

    def join(self, code: str, name: str) -> Response:
        token = csrf_of(self.client.get("/join").text)
        return self.client.post("/join", data={"csrf_token": token, "code": code, "name": name},
                                follow_redirects=False)

    def joins(self, code: str, name: str) -> str:
        r = self.join(code, name)
        assert r.status_code == 303, r.text[:800]
        return str(r.headers["location"])

    def open(self, url: str) -> str:
        r = self.client.get(url)
        assert r.status_code == 200, r.text[:500]
        return r.text

    def poll(self, page: str) -> Response:
        match = re.search(r'hx-get="(/class-banner\?[^"]+)"', page)
        assert match, "the page does not poll the class banner"
        return self.client.get(match.group(1).replace("&amp;", "&"), headers={"HX-Request": "true"})

    def finish(self, number: int) -> str:
        token = csrf_of(self.open(f"/lessons/{LESSON}/{number}"))
        r = self.client.post(f"/lessons/{LESSON}/{number}/done", data={"csrf_token": token}, follow_redirects=False)
        assert r.status_code == 303
        return str(r.headers["location"])


@dataclass
class Room:
    """One app, one instructor and a way to let more learners in, each with their own cookies."""

    app: FastAPI
    instructor: Instructor
    clients: list[TestClient]
    base_url: str = "http://testserver"

    def learner(self, learner_id: str = "") -> Student:
        """A learner in a browser of their own; with `learner_id`, one whose cookie names that learner (so a test
        knows which questions they are dealt)."""
        c = TestClient(self.app, base_url=self.base_url)
        if learner_id:
            signer = Signer(self.app.state.settings.resolved_secret_key())
            c.cookies.set(LEARNER_COOKIE, signer.cookie.dumps(learner_id))
        self.clients.append(c)
        return Student(c)


def room_for(settings: Settings, base_url: str = "http://testserver") -> Iterator[Room]:
    app = create_app(settings)
    with TestClient(app, base_url=base_url) as first:
        room = Room(app=app, instructor=Instructor(first), clients=[first], base_url=base_url)
        yield room
        for c in room.clients[1:]:
            c.close()


@pytest.fixture(name="room")
def room_fixture(tmp_path: Path) -> Iterator[Room]:
    yield from room_for(make_settings(tmp_path))


def run_in(room: Room, make: Any) -> Any:
    """Call an async function of the app's database inside the app's own event loop."""

    async def call() -> Any:
        return await make(room.app.state.db)

    portal = room.clients[0].portal
    assert portal is not None
    return portal.call(call)
