"""Reading writes nothing: a visitor without a cookie gets pages, and no row, until they do something that is
stored (the next visit, with the cookie they were given, records where they are)."""

from __future__ import annotations

from pathlib import Path

from fastapi.testclient import TestClient
from sqlalchemy import text

from app.main import create_app
from tests.conftest import LESSONS, make_settings

TABLES = ("learners", "step_progress", "drill_state", "drill_attempts", "predictions", "workload_sheets")


def counts(client: TestClient) -> dict[str, int]:
    db = client.app.state.db  # type: ignore[attr-defined]

    async def read() -> dict[str, int]:
        async with db.session() as s:
            return {t: int((await s.execute(text(f"SELECT COUNT(*) FROM {t}"))).scalar_one()) for t in TABLES}

    assert client.portal is not None
    return client.portal.call(read)


def test_cookieless_reads_of_every_step_create_no_rows(tmp_path: Path) -> None:
    with TestClient(create_app(make_settings(tmp_path, LESSONS))) as client:
        lessons = client.app.state.lessons  # type: ignore[attr-defined]
        urls = ["/", "/join", "/teach"] + [f"/lessons/{le.slug}" for le in lessons]
        urls += [f"/lessons/{le.slug}/{s.number}" for le in lessons for s in le.steps]
        for url in urls:
            client.cookies.clear()
            r = client.get(url)
            assert r.status_code == 200, url
        assert counts(client) == dict.fromkeys(TABLES, 0)


def test_the_cookie_given_on_the_first_read_records_the_next_visit(tmp_path: Path) -> None:
    with TestClient(create_app(make_settings(tmp_path, LESSONS))) as client:
        slug = client.app.state.lessons[0].slug  # type: ignore[attr-defined]
        client.get(f"/lessons/{slug}/1")
        assert counts(client)["learners"] == 0
        client.get(f"/lessons/{slug}/2")  # now with the cookie
        assert counts(client)["learners"] == 1 and counts(client)["step_progress"] == 1
