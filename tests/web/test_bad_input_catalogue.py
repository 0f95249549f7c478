"""The bad-input catalogue, on SQLite and on PostgreSQL: ids out of range, NUL and other control characters in
any text, huge numbers. Every answer is a 4xx with a sentence; never a 500."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote

import pytest

from tests.conftest import make_settings
from tests.web.classroom_helpers import Room, csrf_of, room_for

BACKENDS = ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)]


@pytest.fixture(params=BACKENDS)
def any_room(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Room]:
    if request.param == "sqlite":
        yield from room_for(make_settings(tmp_path))
        return
    from tests.postgres.pg import fresh_database

    with fresh_database() as url:
        yield from room_for(make_settings(tmp_path, database_url=url))


def catalogue(code: str) -> list[tuple[str, str, dict[str, str], set[int]]]:
    """(method, url, form, acceptable statuses)."""
    big = [str(2**31), str(2**63), str(2**64), "-1", "0", "99999999999999999999999"]
    rows: list[tuple[str, str, dict[str, str], set[int]]] = []
    rows += [("GET", f"/teach/{code}/learners/{n}", {}, {404, 422}) for n in big]
    rows += [("GET", f"/lessons/tiny/{n}", {}, {404, 422}) for n in big]
    rows += [("POST", f"/lessons/tiny/{n}/done", {}, {404, 422}) for n in big]
    rows += [("GET", f"/class-banner?lesson=tiny&step={n}", {}, {200, 204, 422}) for n in big]
    rows += [("POST", f"/companion/sheet/profiles/{n}/delete", {}, {200, 303, 404, 422}) for n in big]
    for bad in ("\x00", "a\x00b", "\x01", "\x1b[31m", "\x7f", "\x85"):
        q = quote(bad)
        rows += [
            ("GET", f"/class-banner?lesson={q}", {}, {422}),
            ("POST", "/class-activity", {"lesson": bad}, {422}),
            ("POST", "/teach", {"title": f"Class {bad}", "lesson": "tiny"}, {422}),
            ("POST", "/join", {"code": code, "name": f"N{bad}"}, {422}),
            ("POST", "/join", {"code": f"{code}{bad}", "name": "N"}, {422}),
            ("GET", f"/join/{code}{q}", {}, {404, 422}),
            ("GET", f"/lessons/tiny/1?w1.parameters=7e9{q}", {}, {422}),
            ("POST", "/companion/sheet", {"workload": bad}, {422}),
        ]
    return rows


def test_the_bad_input_catalogue_is_4xx_on_both_databases(any_room: Room) -> None:
    created = any_room.instructor.create()
    client = any_room.instructor.client
    token = csrf_of(client.get("/join").text)
    client.get(f"/teach/{created.code}?key={created.key}")  # the key cookie
    for method, url, form, expected in catalogue(created.code):
        if method == "GET":
            r = client.get(url)
        else:
            r = client.post(url, data={"csrf_token": token, **form}, follow_redirects=False)
        assert r.status_code in expected, (method, url, form, r.status_code, r.text[-300:])
        assert r.status_code < 500
        if r.status_code >= 400:
            assert re.search(r'class="(error|field-error)[^"]*"[^>]*>\s*\S', r.text) or r.status_code in (404,), (
                url, "a refusal without a sentence")
