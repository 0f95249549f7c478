"""Settings read from the environment under the names the README gives."""

from __future__ import annotations

import pytest

from app.settings import Settings


@pytest.mark.parametrize("name", ["ADMIN_TOKEN", "GPU_CLASSROOM_ADMIN_TOKEN"])
def test_the_admin_token_is_read_under_either_name(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(name, "s3cret")
    assert Settings().admin_token == "s3cret"


def test_no_admin_token_leaves_class_creation_open(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ADMIN_TOKEN", raising=False)
    monkeypatch.delenv("GPU_CLASSROOM_ADMIN_TOKEN", raising=False)
    assert Settings().admin_token == ""


@pytest.mark.parametrize("name", ["DATABASE_URL", "GPU_CLASSROOM_DATABASE_URL"])
def test_a_postgres_url_is_read_under_either_name_and_given_the_async_driver(
    name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(name, "postgresql://postgres@127.0.0.1:5432/test")
    assert Settings().resolved_database_url() == "postgresql+asyncpg://postgres@127.0.0.1:5432/test"


def test_keywords_still_set_fields_by_name() -> None:
    assert Settings(admin_token="t", database_url="sqlite+aiosqlite:///x.db").admin_token == "t"
