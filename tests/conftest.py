"""Fixtures: a fresh app on a temp SQLite per test, and helpers that speak the learner's language."""

from __future__ import annotations

import logging
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


class _Unhandled(logging.Handler):
    """Keeps the app's "unhandled error" log records (app/web/errors.py logs each 500 it answers)."""

    def __init__(self) -> None:
        super().__init__(logging.ERROR)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        if record.getMessage().startswith("unhandled error"):
            self.records.append(record)


# Tests that force a 500 without asking for `server_errors`: the socket's, which go with it (issue 26).
@pytest.fixture(autouse=True)
def _no_unhandled_errors(request: pytest.FixtureRequest) -> Iterator[_Unhandled]:
    """A 500 fails the test that caused it, even where the test never looked at the status: the app answers an
    unhandled error itself (it no longer reaches TestClient as an exception). A test that forces 500s on purpose
    asks for `server_errors` and reads them there."""
    handler = _Unhandled()
    logger = logging.getLogger("gpu_classroom")
    logger.addHandler(handler)
    yield handler
    logger.removeHandler(handler)
    asked = "server_errors" in request.fixturenames
    if not asked and handler.records:
        first = handler.records[0]
        text = logging.Formatter().formatException(first.exc_info) if first.exc_info else ""
        pytest.fail(f"{len(handler.records)} unhandled error(s), the first: {first.getMessage()}\n{text}")


@pytest.fixture
def server_errors(_no_unhandled_errors: _Unhandled) -> list[logging.LogRecord]:
    """The unhandled errors the app logged during this test (a test that forces them asks for this)."""
    return _no_unhandled_errors.records


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
