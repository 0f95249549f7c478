"""Security of classes: the key guards the instructor's pages, learners see only themselves, CSRF, rate
limits, cookies, and a name made of markup shown as text everywhere (CSV included)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from app.classroom import classes
from tests.conftest import make_settings
from tests.web.classroom_helpers import (
    LESSON,
    Instructor,
    Room,
    Student,
    csrf_of,
    field_error,
    room_fixture,
    room_for,
)

__all__ = ["room_fixture"]

XSS = "<script>alert(1)</script>"
ESCAPED = "&lt;script&gt;alert(1)&lt;/script&gt;"
INSTRUCTOR_GETS = ["", "/created", "/projector", "/cockpit", "/export/learners.csv", "/export/attempts.csv",
                   "/export/class.json", "/learners/1"]
FORM = {"mode": "hold", "step": "1", "minutes": "3", "drill": "1:x", "shown": "1", "confirm": "X", "text": "hi",
        "seconds": "60", "name": "N", "into": "1", "title": "T", "flag": "1", "what": "x"}


def instructor_posts() -> list[tuple[str, dict[str, str]]]:
    """Every state-changing route under /teach/{code}/ the app has (read from its routes, so a new control is
    swept the day it is added), as the action after the code with a learner id of 1, and a form that fills
    any field those routes read."""
    from fastapi.routing import iter_route_contexts

    from app.main import create_app

    paths = sorted({route.path for route in iter_route_contexts(create_app().routes)
                    if "POST" in (route.methods or ()) and (route.path or "").startswith("/teach/{code}/")})
    assert len(paths) >= 15, paths  # pace ... learners' rename, merge, remove, resume
    return [(path.removeprefix("/teach/{code}/").replace("{member_id}", "1"), FORM) for path in paths]


INSTRUCTOR_POSTS = instructor_posts()


def test_instructor_pages_and_controls_answer_403_without_the_class_key(room: Room) -> None:
    created = room.instructor.create()
    stranger = room.learner()
    stranger.joins(created.code, "Mallory")
    token = csrf_of(stranger.open("/join"))
    for view in INSTRUCTOR_GETS:
        assert stranger.client.get(f"/teach/{created.code}{view}").status_code == 403, view
        assert stranger.client.get(f"/teach/{created.code}{view}?key=wrong").status_code == 403, view
    for action, data in INSTRUCTOR_POSTS:
        r = stranger.client.post(f"/teach/{created.code}/{action}", data={"csrf_token": token, **data})
        assert r.status_code == 403, action
    assert "Mallory" not in stranger.client.get(f"/teach/{created.code}").text


def test_one_class_key_does_not_open_another_class(room: Room) -> None:
    first = room.instructor.create("First")
    second = Instructor(room.learner().client).create("Second")  # another instructor, in another browser
    r = room.instructor.client.get(f"/teach/{second.code}?key={first.key}", follow_redirects=False)
    assert r.status_code == 403
    room.instructor.open_dashboard(first)  # the cookie is scoped to /teach/FIRST
    assert room.instructor.client.get(f"/teach/{second.code}").status_code == 403


def test_a_learner_sees_only_their_own_progress_and_answers(room: Room) -> None:
    created = room.instructor.create()
    room.instructor.open_dashboard(created)
    ada, bob = room.learner(), room.learner()
    ada.joins(created.code, "Ada Secret")
    bob.joins(created.code, "Bob")
    live = room.instructor.live().text
    ids = dict((name, int(i)) for i, name in re.findall(r'/learners/(\d+)">([^<]+)</a>', live))
    for member_id in ids.values():  # guessing ids: the instructor's route needs the key
        assert bob.client.get(f"/teach/{created.code}/learners/{member_id}").status_code == 403
    own = bob.open(f"/class/{created.code}")
    assert "Bob" in own and "Ada Secret" not in own
    own_with_ids = bob.client.get(f"/class/{created.code}?member={ids['Ada Secret']}&learner=1").text
    assert "Ada Secret" not in own_with_ids
    assert room.instructor.client.get(f"/teach/{created.code}/learners/{ids['Ada Secret']}").status_code == 200


def test_an_instructor_cannot_read_a_learner_of_another_class_through_their_own_key(room: Room) -> None:
    mine = room.instructor.create("Mine")
    other = room.instructor.create("Other")
    room.learner().joins(other.code, "Elsewhere")
    room.instructor.open_dashboard(mine)
    for member_id in range(1, 4):
        r = room.instructor.client.get(f"/teach/{mine.code}/learners/{member_id}")
        assert r.status_code == 404 and "Elsewhere" not in r.text


def test_every_state_changing_form_needs_its_csrf_token(room: Room) -> None:
    created = room.instructor.create()
    room.instructor.open_dashboard(created)
    client = room.instructor.client
    assert client.post("/teach", data={"title": "T", "lesson": LESSON}).status_code == 403
    assert client.post("/join", data={"code": created.code, "name": "X"}).status_code == 403
    assert client.post("/class-activity", data={"lesson": LESSON}).status_code == 403
    for action, data in INSTRUCTOR_POSTS:
        r = client.post(f"/teach/{created.code}/{action}", data={"csrf_token": "forged", **data})
        assert r.status_code == 403, action
    assert "Learners move at their own pace" in room.instructor.live().text  # nothing changed
    assert client.get(f"/teach/{created.code}").status_code == 200  # not closed, not deleted


class _MidWindow:
    """A clock stopped in the middle of a rate-limit window, so a burst never straddles two windows."""

    def __init__(self) -> None:
        import time

        self.now = (time.time() // 600) * 600 + 300

    def time(self) -> float:
        return self.now


@pytest.fixture
def mid_window(monkeypatch: pytest.MonkeyPatch) -> None:
    clock = _MidWindow()
    monkeypatch.setattr("app.classroom.ratelimit.time", clock)
    monkeypatch.setattr("app.classroom.classes.time", clock)


def wrong_code(n: int) -> str:
    return f"{n:06d}".translate(str.maketrans("0123456789", "23456789AB"))


@pytest.mark.usefixtures("mid_window")
def test_a_burst_of_wrong_codes_gets_429_but_the_right_code_still_gets_in(room: Room) -> None:
    created = room.instructor.create()
    guesser = room.learner()
    limit = classes.WRONG_CODE_LIMIT[0]
    statuses = [guesser.join(wrong_code(n), "G").status_code for n in range(limit + 1)]
    assert statuses[:limit] == [404] * limit and statuses[limit] == 429
    r = guesser.join(wrong_code(99), "G")
    assert r.status_code == 429 and int(r.headers["retry-after"]) > 0
    assert "Too many attempts" in field_error(r.text, "code")
    assert guesser.join(created.code, "G").status_code == 303  # the right code is checked before any count


@pytest.mark.usefixtures("mid_window")
def test_a_prankster_hammering_an_address_never_locks_out_30_learners_on_it(room: Room) -> None:
    """12 fresh cookies x 10 wrong codes, and empty posts, from the room's one address, interleaved with 30
    learners joining with the right code: every learner gets in; the prankster ends up refused."""
    created = room.instructor.create()
    pranksters = [room.learner() for _ in range(12)]
    learners = [room.learner() for _ in range(30)]
    prank_statuses: list[int] = []
    for n, learner in enumerate(learners):
        for k in range(4):
            prankster = pranksters[(n * 4 + k) % len(pranksters)]
            prank_statuses.append(prankster.join(wrong_code(n * 4 + k) if k % 2 else "", "").status_code)
        assert learner.join(created.code, f"L{n}").status_code == 303, n
    assert 429 in prank_statuses and 500 not in prank_statuses
    for n in range(classes.WRONG_CODE_ADDRESS_LIMIT[0]):  # and however long it goes on
        pranksters[n % 12].join(wrong_code(500 + n), "")
    late = room.learner()
    assert late.join(created.code, "Late").status_code == 303


@pytest.mark.usefixtures("mid_window")
def test_one_browser_guessing_codes_does_not_lock_out_a_room_on_the_same_address(room: Room) -> None:
    """Every client of the test app comes from one address, as a room on venue Wi-Fi does."""
    created = room.instructor.create()
    prankster = room.learner()
    for n in range(classes.WRONG_CODE_LIMIT[0] + 5):
        prankster.join(wrong_code(n), "P")
    assert prankster.join(wrong_code(99), "P").status_code == 429
    typists = [room.learner() for _ in range(6)]
    for n, typist in enumerate(typists):  # each mistypes once, then gets it right
        assert typist.join(wrong_code(100 + n), f"T{n}").status_code == 404
        assert typist.join(created.code, f"T{n}").status_code == 303


@pytest.mark.usefixtures("mid_window")
def test_an_address_that_rotates_browsers_is_still_stopped(room: Room, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(classes, "WRONG_CODE_ADDRESS_LIMIT", (12, classes.WRONG_CODE_ADDRESS_LIMIT[1]))
    created = room.instructor.create()
    statuses = [room.learner().join(wrong_code(n), "G").status_code for n in range(13)]  # a new cookie per guess
    assert statuses[:12] == [404] * 12 and statuses[12] == 429
    assert room.learner().join(wrong_code(77), "G").status_code == 429
    assert room.learner().join(created.code, "G").status_code == 303


@pytest.mark.usefixtures("mid_window")
def test_creating_classes_is_rate_limited_too(room: Room) -> None:
    client = room.instructor.client
    token = csrf_of(client.get("/teach").text)
    statuses = {client.post("/teach", data={"csrf_token": token, "title": "", "lesson": LESSON}).status_code
                for _ in range(classes.CREATE_LIMIT[0] + 1)}
    assert statuses == {422, 429}


@pytest.mark.usefixtures("mid_window")
def test_admin_token_guesses_never_lock_out_the_real_instructor(tmp_path: Path) -> None:
    for r in room_for(make_settings(tmp_path, admin_token="s3cret-admin")):
        guesser = r.learner()
        statuses = set()
        for n in range(classes.CREATE_LIMIT[0] + 5):
            token = csrf_of(guesser.client.get("/teach").text)
            statuses.add(guesser.client.post("/teach", data={"csrf_token": token, "title": "T", "lesson": LESSON,
                                                            "admin_token": f"guess{n}"}).status_code)
        assert statuses == {403, 429}
        assert r.instructor.create("Real class", admin_token="s3cret-admin").code


def test_cookies_are_httponly_and_samesite_lax(room: Room) -> None:
    fresh = room.learner()
    cookie = fresh.client.get("/join").headers["set-cookie"]
    assert "HttpOnly" in cookie and "SameSite=lax" in cookie


@pytest.fixture
def marked_up(room: Room) -> tuple[Room, Student, str]:
    """A class whose learner called themselves <script>alert(1)</script> and answered with markup."""
    created = room.instructor.create(f"Class {XSS}")
    room.instructor.open_dashboard(created)
    learner = room.learner()
    learner.joins(created.code, XSS)
    return room, learner, created.code


def test_a_name_made_of_markup_shows_as_text_in_every_view(marked_up: tuple[Room, Student, str]) -> None:
    room, learner, code = marked_up
    client = room.instructor.client
    live = room.instructor.live().text
    member_id = re.search(r"/learners/(\d+)", live).group(1)  # type: ignore[union-attr]
    views = {
        "dashboard": client.get(f"/teach/{code}").text, "live": live,
        "cockpit": client.get(f"/teach/{code}/cockpit").text,
        "learner detail": client.get(f"/teach/{code}/learners/{member_id}").text,
        "own page": learner.open(f"/class/{code}"), "welcome back": learner.open(f"/join/{code}"),
        "step banner": learner.open(f"/lessons/{LESSON}/1"),
        "projector": client.get(f"/teach/{code}/projector").text,
    }
    for where, html in views.items():
        assert XSS not in html, where
        assert "<script>alert" not in html, where
    for where in ("dashboard", "live", "cockpit", "learner detail", "own page", "welcome back", "step banner"):
        assert ESCAPED in views[where], where
    csv_text = client.get(f"/teach/{code}/export/learners.csv").text
    assert f"\r\n{XSS}," in csv_text  # plain text in the CSV: it is a spreadsheet, not a page


def test_a_name_that_looks_like_a_formula_cannot_run_in_a_spreadsheet(room: Room) -> None:
    created = room.instructor.create()
    room.instructor.open_dashboard(created)
    room.learner().joins(created.code, '=HYPERLINK("http://e.vil","x")')
    csv_text = room.instructor.client.get(f"/teach/{created.code}/export/learners.csv").text
    first_cells = [line.split(",")[0] for line in csv_text.splitlines()[1:]]
    assert first_cells == ['"\'=HYPERLINK(""http://e.vil""']


def test_bad_input_to_the_learner_poll_is_a_4xx_never_a_500(room: Room) -> None:
    learner = room.learner()
    for query in ("step=abc", "locked=yes", "lesson=" + "x" * 500 + "&step=1", "v=" + "9" * 100):
        r = learner.client.get(f"/class-banner?{query}")
        assert r.status_code in (200, 204, 422), query
    assert learner.client.get("/class-banner?lesson=tiny&step=1").status_code == 200  # not in a class


def test_a_long_name_or_code_is_refused_politely(room: Room) -> None:
    created = room.instructor.create()
    learner = room.learner()
    r = learner.join(created.code, "x" * 41)
    assert r.status_code == 422 and "40 characters" in field_error(r.text, "name")
    r = learner.join("x" * 200, "Ada")
    assert r.status_code == 422 and "Traceback" not in r.text


def test_the_access_log_never_shows_an_instructors_key(room: Room) -> None:
    import logging

    created = room.instructor.create()
    access = logging.getLogger("uvicorn.access")  # uvicorn's own record: client, method, path, version, status
    record = logging.LogRecord("uvicorn.access", logging.INFO, __file__, 1, '%s - "%s %s HTTP/%s" %d',
                               ("127.0.0.1:5000", "GET", f"/teach/{created.code}?key={created.key}", "1.1", 303),
                               None)
    assert access.filter(record)
    line = record.getMessage()
    assert created.key not in line and f"/teach/{created.code}?key=…" in line
    token = logging.LogRecord("uvicorn.access", logging.INFO, __file__, 1, "%s", ("/teach?x=1&admin_token=s3cret",),
                              None)
    access.filter(token)
    assert "s3cret" not in token.getMessage()


def test_a_class_title_made_of_markup_shows_as_text_on_every_instructor_and_learner_page(room: Room) -> None:
    created = room.instructor.create(title=XSS)
    client = room.instructor.client
    views = {"created": created.page, "dashboard": room.instructor.open_dashboard(created),
             "cockpit": client.get(f"/teach/{created.code}/cockpit").text,
             "projector": client.get(f"/teach/{created.code}/projector").text}
    learner = room.learner()
    learner.joins(created.code, "Ada")
    views["own page"] = learner.open(f"/class/{created.code}")
    views["step"] = learner.open(f"/lessons/{LESSON}/1")
    views["deleted"] = room.instructor.post("delete", confirm=created.code).text
    for where, html in views.items():
        assert XSS not in html and "<script>alert" not in html, where
    assert all(ESCAPED in views[w] for w in ("created", "dashboard", "cockpit", "deleted")), views["deleted"][:3000]
