"""Fixtures: a fresh app on a temp SQLite per test, and helpers that speak the learner's language."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from app.main import create_app
from app.settings import Settings

ROOT = Path(__file__).resolve().parents[1]
FIXTURE_LESSONS = ROOT / "tests" / "fixtures" / "lessons"
LESSONS = ROOT / "lessons"


def make_settings(tmp_path: Path, lessons: Path = FIXTURE_LESSONS, **extra: object) -> Settings:
    return Settings(data_dir=tmp_path / "data", lessons_dir=lessons, secret_key="test-secret-key", **extra)


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    return make_settings(tmp_path)


@pytest.fixture
def client(settings: Settings) -> Iterator[TestClient]:
    """A browser-like client of a fresh app over the tiny fixture lesson."""
    with TestClient(create_app(settings)) as c:
        yield c


@pytest.fixture
def lessons_client(tmp_path: Path) -> Iterator[TestClient]:
    """A client of a fresh app over the real lessons/ folder."""
    with TestClient(create_app(make_settings(tmp_path, LESSONS))) as c:
        yield c


class Learner:
    """A learner's actions, in their words."""

    def __init__(self, client: TestClient) -> None:
        self.client = client

    def csrf(self, page_html: str) -> str:
        match = re.search(r'name="csrf_token" value="([^"]+)"', page_html)
        assert match, "the page carries no CSRF token"
        return match.group(1)

    def open(self, url: str) -> str:
        response = self.client.get(url)
        assert response.status_code == 200, response.text[:500]
        return response.text

    def finish_step(self, slug: str, number: int) -> str:
        token = self.csrf(self.open(f"/lessons/{slug}/{number}"))
        response = self.client.post(f"/lessons/{slug}/{number}/done", data={"csrf_token": token},
                                    follow_redirects=False)
        assert response.status_code == 303
        return str(response.headers["location"])


@pytest.fixture
def learner(client: TestClient) -> Learner:
    return Learner(client)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Run the browser tests last: Playwright's sync API keeps an event loop running in this thread for the
    rest of the session, and tests that call asyncio.run() cannot run after it."""
    items.sort(key=lambda item: "/tests/e2e/" in str(item.path))
