"""What a server process does once at startup."""

from __future__ import annotations

import gc

import pytest
from fastapi.testclient import TestClient

import app.main
from app.main import create_app
from app.settings import Settings


def test_startup_hides_its_own_objects_from_the_collector(settings: Settings, monkeypatch: pytest.MonkeyPatch) -> None:
    """A full collection walked ~150,000 startup objects (~90 ms with the event loop stopped); after startup
    they are frozen, so a full collection walks only what requests have made since."""
    monkeypatch.setattr(app.main, "_heap_frozen", False)  # as in a fresh server process
    gc.unfreeze()
    before = len(gc.get_objects())
    try:
        with TestClient(create_app(settings)) as client:
            assert client.get("/healthz").status_code == 200
            assert gc.get_freeze_count() > before / 2
            assert len(gc.get_objects()) < before / 10
            second = create_app(settings)  # a second app in the same process does not collect again
        with TestClient(second):
            assert not app.main.freeze_startup_heap()
    finally:
        gc.unfreeze()
