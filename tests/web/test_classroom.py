"""Hosting a class through the browser: create, join, watch, pace, close, export, delete."""

from __future__ import annotations

import csv
import io
import json
import re
from datetime import timedelta
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import func, select

from app.classroom.class_models import Classroom, Member
from app.classroom.db import Database
from app.classroom.models import DrillAttempt, utcnow
from app.classroom.progress import touch_learner
from app.main import create_app
from tests.conftest import make_settings
from tests.web.classroom_helpers import LESSON, Room, csrf_of, field_error, room_fixture, room_for, run_in

__all__ = ["room_fixture"]


def test_an_instructor_gets_a_code_for_the_room_and_private_links_shown_once(room: Room) -> None:
    created = room.instructor.create("GPU basics")
    assert re.fullmatch(r"[23456789ABCDEFGHJKMNPQRSTUVWXYZ]{6}", created.code)
    assert set(created.links) == {"dashboard", "projector", "cockpit"}
    assert "shown only in this browser" in created.page and '<svg role="img"' in created.page
    dashboard = room.instructor.open_dashboard(created)
    assert created.key not in dashboard  # never shown again
    assert "GPU basics" in dashboard and created.code in dashboard


async def count_classes(db: Database) -> int:
    async with db.session() as session:
        return int(await session.scalar(select(func.count()).select_from(Classroom)) or 0)


def test_reloading_the_page_of_a_new_class_creates_no_second_class(room: Room) -> None:
    created = room.instructor.create("Reload me")
    again = room.instructor.client.get(f"/teach/{created.code}/created")  # what a browser's reload sends
    assert again.status_code == 200 and f'data-code="{created.code}"' in again.text
    assert created.key in again.text  # the key comes back from this browser's cookie, not from the server
    assert run_in(room, count_classes) == 1
    stranger = TestClient(room.instructor.client.app)
    assert stranger.get(f"/teach/{created.code}/created").status_code == 403  # no cookie, no links


def test_the_private_link_becomes_an_httponly_cookie_and_leaves_the_address_bar(room: Room) -> None:
    created = room.instructor.create()
    r = room.instructor.client.get(f"/teach/{created.code}?key={created.key}", follow_redirects=False)
    assert r.status_code == 303 and r.headers["location"] == f"/teach/{created.code}"
    cookie = r.headers["set-cookie"]
    assert "HttpOnly" in cookie and "SameSite=lax" in cookie and f"Path=/teach/{created.code}" in cookie
    assert "Secure" not in cookie  # plain HTTP on a laptop; see the secure_cookies test for HTTPS


def test_over_https_the_learner_and_class_cookies_are_secure(tmp_path: Path) -> None:
    """HTTPS (directly, or X-Forwarded-Proto from a trusted proxy, which uvicorn applies) makes every cookie
    Secure without any setting."""
    for r in room_for(make_settings(tmp_path), base_url="https://testserver"):
        fresh = r.learner()
        assert "Secure" in fresh.client.get("/join").headers["set-cookie"]
        created = r.instructor.create()
        resp = r.instructor.client.get(f"/teach/{created.code}?key={created.key}", follow_redirects=False)
        assert "Secure" in resp.headers["set-cookie"]


def test_the_secure_setting_marks_cookies_secure_even_when_the_proxy_says_http(tmp_path: Path) -> None:
    """For a TLS terminator that sends no X-Forwarded-Proto: GPU_CLASSROOM_SECURE_COOKIES."""
    for r in room_for(make_settings(tmp_path, secure_cookies=True)):
        assert "Secure" in r.learner().client.get("/join").headers["set-cookie"]


def test_a_title_left_blank_is_refused_beside_the_field(room: Room) -> None:
    client = room.instructor.client
    token = csrf_of(client.get("/teach").text)
    r = client.post("/teach", data={"csrf_token": token, "title": "  ", "lesson": LESSON})
    assert r.status_code == 422 and "Give the class a title" in field_error(r.text, "title")
    r = client.post("/teach", data={"csrf_token": token, "title": "A class", "lesson": "no-such-lesson"})
    assert r.status_code == 422 and "Choose one of the lessons" in field_error(r.text, "lesson")


def test_a_server_with_an_admin_token_asks_for_it(tmp_path: Path) -> None:
    for r in room_for(make_settings(tmp_path, admin_token="s3cret-admin")):
        client = r.instructor.client
        page = client.get("/teach").text
        assert 'name="admin_token"' in page
        token = csrf_of(page)
        refused = client.post("/teach", data={"csrf_token": token, "title": "T", "lesson": LESSON,
                                              "admin_token": "guess"})
        assert refused.status_code == 403 and "admin token" in field_error(refused.text, "admin_token")
        assert r.instructor.create("T", admin_token="s3cret-admin").code


def test_a_learner_joins_with_the_code_and_lands_on_a_step_under_the_class_banner(room: Room) -> None:
    created = room.instructor.create("Tuesday group")
    ada = room.learner()
    where = ada.joins(created.code.lower(), "  Ada  ")
    assert where == f"/lessons/{LESSON}/1"
    page = ada.open(where)
    assert 'id="class-banner"' in page and "Tuesday group" in page and ">Ada<" in page


def test_the_qr_address_opens_the_join_form_with_the_code_filled_in(room: Room) -> None:
    created = room.instructor.create()
    page = room.learner().open(f"/join/{created.code}")
    assert f'value="{created.code}"' in page and 'name="name"' in page


def test_a_wrong_code_and_a_taken_name_are_explained_beside_their_fields(room: Room) -> None:
    created = room.instructor.create()
    room.learner().joins(created.code, "Ada")
    bob = room.learner()
    r = bob.join("ZZZZZZ", "Bob")
    assert r.status_code == 404 and "No class has this code" in field_error(r.text, "code")
    r = bob.join(created.code, "ada")
    assert r.status_code == 409 and "already called" in field_error(r.text, "name")
    r = bob.join(created.code, "")
    assert r.status_code == 422 and field_error(r.text, "name")


def test_the_dashboards_poll_sends_only_the_rows_changed_since_the_pages_stamp(room: Room) -> None:
    """The page polls with the stamp of its last answer: the counts and drills come whole, out of band, and of
    the grid only the rows that changed since (here Ada's, not Bo's), for static/dashboard.js to put in place."""
    created = room.instructor.create()
    ada, bo = room.learner(), room.learner()
    ada.joins(created.code, "Ada")
    bo.joins(created.code, "Bo")
    page = room.instructor.open_dashboard(created)
    since = re.search(r'id="live-poll"[^>]*\?since=(\d+)"', page)
    assert since and page.count("<tr data-learner") == 2
    ada.finish(1)
    ada.open(f"/lessons/{LESSON}/2")
    r = room.instructor.live(f"?since={since.group(1)}")
    assert r.status_code == 200 and "<html" not in r.text
    rows = re.findall(r'<tr data-learner="\d+" data-step="(\d+)">.*?>(\w+)</a>', r.text, re.S)
    assert rows == [("2", "Ada")]
    assert 'id="grid-updates" hidden hx-swap-oob="true"' in r.text and 'id="live-summary" hx-swap-oob="true"' in r.text
    assert '<strong data-count="joined">2</strong>' in r.text
    again = re.search(r'id="live-poll"[^>]*\?since=(\d+)"', r.text)
    assert again and int(again.group(1)) > int(since.group(1))
    quiet = room.instructor.live(f"?since={again.group(1)}")
    assert "<tr data-learner" not in quiet.text and 'data-count="joined">2<' in quiet.text


def test_rejoining_from_the_same_browser_resumes_where_the_learner_was(room: Room) -> None:
    created = room.instructor.create()
    ada = room.learner()
    ada.joins(created.code, "Ada")
    ada.finish(1)
    ada.open(f"/lessons/{LESSON}/2")
    assert ada.joins(created.code, "Ada again") == f"/lessons/{LESSON}/2"
    page = ada.open(f"/join/{created.code}")
    assert "Welcome back, Ada" in page and f"/lessons/{LESSON}/2" in page


def test_the_dashboard_shows_a_learner_on_their_step_without_a_reload(room: Room) -> None:
    created = room.instructor.create()
    room.instructor.open_dashboard(created)
    ada = room.learner()
    ada.joins(created.code, "Ada")
    ada.finish(1)
    ada.open(f"/lessons/{LESSON}/2")
    r = room.instructor.live()
    assert r.status_code == 200 and "<html" not in r.text and "HX-Request" in r.headers["vary"]
    row = re.search(r'<tr data-learner="\d+" data-step="2">.*?</tr>', r.text, re.S)
    assert row and ">Ada<" in row.group(0) and 'class="c c-done"' in row.group(0)
    assert 'hx-trigger="every 2s"' in r.text
    assert '<strong data-count="joined">1</strong>' in r.text


def test_a_learners_poll_is_empty_until_the_instructor_changes_the_pace(room: Room) -> None:
    created = room.instructor.create()
    room.instructor.open_dashboard(created)
    ada = room.learner()
    page = ada.open(ada.joins(created.code, "Ada"))
    assert ada.poll(page).status_code == 204
    assert room.instructor.pace("bring", 2).status_code == 303
    r = ada.poll(page)
    assert r.status_code == 200 and "go to step 2" in r.text and f'href="/lessons/{LESSON}/2"' in r.text
    assert ada.poll(r.text).status_code == 204  # the new banner carries the new token


def test_bring_with_move_sends_the_learner_to_the_step_once(room: Room) -> None:
    created = room.instructor.create()
    room.instructor.open_dashboard(created)
    ada = room.learner()
    page = ada.open(ada.joins(created.code, "Ada"))
    room.instructor.pace("bring", 2, move=True)
    r = ada.poll(page)
    assert r.headers.get("hx-redirect") == f"/lessons/{LESSON}/2"
    assert ada.poll(page).headers.get("hx-redirect") == f"/lessons/{LESSON}/2"  # a move lost on the way: again
    ada.open(f"/lessons/{LESSON}/2")  # the browser follows HX-Redirect: they reached the step
    page1 = ada.open(f"/lessons/{LESSON}/1")  # they went back on purpose: no second push, no banner asking
    assert "hx-redirect" not in ada.poll(page1).headers and "data-bring" not in page1


def test_hold_shows_a_clear_message_instead_of_later_steps_until_release(room: Room) -> None:
    created = room.instructor.create()
    room.instructor.open_dashboard(created)
    ada = room.learner()
    page1 = ada.open(ada.joins(created.code, "Ada"))
    room.instructor.pace("hold", 1)
    locked = ada.open(f"/lessons/{LESSON}/2")
    assert "the class is held at step 1" in locked and "The last step gathers" not in locked
    assert 'data-nav="next"' not in locked and f'href="/lessons/{LESSON}/1"' in locked
    assert "held at step 1" in ada.poll(page1).text
    room.instructor.pace("free")
    assert ada.poll(locked).headers.get("hx-refresh") == "true"  # the held page reloads itself
    assert "The last step gathers" in ada.open(f"/lessons/{LESSON}/2")


def test_a_closed_class_keeps_learners_reading_but_records_and_accepts_nothing(room: Room) -> None:
    created = room.instructor.create()
    room.instructor.open_dashboard(created)
    ada = room.learner()
    ada.joins(created.code, "Ada")
    assert room.instructor.post("close").status_code == 303
    page = ada.open(f"/lessons/{LESSON}/2")
    assert "This class has ended" in page and "hx-get=\"/class-banner" not in page
    assert "This class has ended" in ada.open(f"/class/{created.code}")
    r = room.learner().join(created.code, "Late")
    assert r.status_code == 410 and "ended" in field_error(r.text, "code")
    assert room.instructor.pace("hold", 1).status_code == 409
    live = room.instructor.live().text
    assert 'data-step="0"' in live  # the visit after closing was not recorded
    assert "hx-trigger" not in live  # a closed class stops polling


def test_a_class_past_its_end_time_ends_as_a_closed_one_does(room: Room) -> None:
    created = room.instructor.create(ends="2")
    dashboard = room.instructor.open_dashboard(created)
    # two hours from now, less the test's own seconds, at a clock time the page shows in the viewer's time zone
    assert re.search(r"ends at <time datetime=\"[^\"]+\" data-local=\"time\">\d\d:\d\d UTC</time> \(in 1 h 5\d min\)",
                     dashboard)
    assert "hours" not in dashboard.split("ends at")[1][:120]
    ada = room.learner()
    ada.joins(created.code, "Ada")

    async def two_hours_pass() -> None:  # the clock reaches the end time: set it a minute ago
        from sqlalchemy import update

        from app.classroom.class_models import Classroom
        from app.classroom.models import utcnow

        async with room.app.state.db.session() as s:
            await s.execute(update(Classroom).where(Classroom.code == created.code)
                            .values(ends_at=utcnow() - timedelta(minutes=1)))

    room.instructor.client.portal.call(two_hours_pass)  # type: ignore[union-attr]
    page = ada.open(f"/lessons/{LESSON}/2")
    assert "This class has ended" in page and 'hx-get="/class-banner' not in page
    r = room.learner().join(created.code, "Late")
    assert r.status_code == 410 and "ended" in field_error(r.text, "code")
    assert room.instructor.pace("hold", 1).status_code == 409
    live = room.instructor.live().text
    assert 'data-step="0"' in live  # the visit after the end was not recorded
    assert "hx-trigger" not in live  # an ended class stops polling


def test_the_projector_shows_code_qr_and_progress_but_no_names(room: Room) -> None:
    created = room.instructor.create()
    room.instructor.open_dashboard(created)
    room.learner().joins(created.code, "Zanzibar")
    page = room.instructor.client.get(f"/teach/{created.code}/projector").text
    assert f'data-code="{created.code}"' in page and f"/join/{created.code}" in page
    assert '<svg role="img" viewBox' in page and "<title>Join class" in page
    assert "Zanzibar" not in page
    assert '<strong data-count="joined">1</strong>' in room.instructor.live("/projector").text


def _answer(room: Room, typed: str, correct: bool) -> None:
    """Store an attempt of the newest member, as the drills module would (it owns the answer form)."""

    async def add(db: Database) -> None:
        async with db.session() as s:
            learner = (await s.execute(select(Member.learner_id).order_by(Member.id.desc()))).scalars().first()
            assert learner is not None
            await touch_learner(s, learner)
            s.add(DrillAttempt(learner_id=learner, drill="bytes-per-parameter", lesson=LESSON, step=2, question=0,
                               seed=1, answers={"bytes": typed}, parsed={}, correct_parts={"bytes": correct},
                               score=float(correct), correct=correct, mistake=None, created_at=utcnow()))

    run_in(room, add)


def test_drill_answers_stay_hidden_on_the_projector_until_revealed(room: Room) -> None:
    created = room.instructor.create()
    room.instructor.open_dashboard(created)
    ada = room.learner()
    ada.joins(created.code, "Ada")
    _answer(room, "<img src=x onerror=alert(1)>", False)
    projector = room.instructor.live("/projector").text
    assert 'data-revealed="false"' in projector and "onerror" not in projector
    dashboard = room.instructor.live().text
    assert "&lt;img src=x onerror=alert(1)&gt;" in dashboard  # the instructor sees it, as text
    assert room.instructor.post("reveal", drill="2:bytes-per-parameter", shown="1").status_code == 303
    projector = room.instructor.live("/projector").text
    assert 'data-revealed="true"' in projector and "onerror" not in projector  # parts and mistakes, not typed text
    assert "<img src=x" not in projector
    assert room.instructor.post("reveal", drill="9:nothing", shown="1").status_code == 404


def test_the_cockpit_works_on_a_phone_and_lists_pacing_buttons(room: Room) -> None:
    created = room.instructor.create()
    room.instructor.open_dashboard(created)
    page = room.instructor.client.get(f"/teach/{created.code}/cockpit").text
    assert "Bring everyone to this step" in page and "Hold at this step" in page
    assert 'name="view" value="cockpit"' in page
    r = room.instructor.post("pace", mode="hold", step="1", view="cockpit")
    assert r.headers["location"] == f"/teach/{created.code}/cockpit"


def test_exports_download_progress_and_attempts_as_csv_and_everything_as_json(room: Room) -> None:
    created = room.instructor.create()
    room.instructor.open_dashboard(created)
    ada = room.learner()
    ada.joins(created.code, "Ada")
    ada.finish(1)
    _answer(room, "=1+1", False)
    get = room.instructor.client.get
    learners = get(f"/teach/{created.code}/export/learners.csv")
    assert learners.headers["content-type"].startswith("text/csv")
    assert f'filename="class-{created.code}-learners.csv"' in learners.headers["content-disposition"]
    row = next(csv.DictReader(io.StringIO(learners.text)))
    assert row["name"] == "Ada" and row["step_1_done"] == "yes"
    attempts = list(csv.DictReader(io.StringIO(get(f"/teach/{created.code}/export/attempts.csv").text)))
    assert attempts[0]["typed"] == "'=1+1"
    data = json.loads(get(f"/teach/{created.code}/export/class.json").text)
    assert data["class"]["code"] == created.code and data["learners"][0]["attempts"][0]["answers"] == {"bytes": "=1+1"}
    assert get(f"/teach/{created.code}/export/secrets.txt").status_code == 404


def test_deleting_a_class_needs_its_code_typed_and_then_leaves_nothing_behind(room: Room) -> None:
    created = room.instructor.create()
    room.instructor.open_dashboard(created)
    ada = room.learner()
    ada.joins(created.code, "Ada")
    assert room.instructor.post("delete", confirm="WRONG1").status_code == 422
    r = room.instructor.post("delete", confirm=created.code.lower())
    assert r.status_code == 200 and "deleted" in r.text
    assert room.instructor.client.get(f"/teach/{created.code}").status_code == 404
    poll = room.instructor.live()  # a dashboard still open in another tab: it reloads once and stops polling
    assert poll.status_code == 404 and poll.headers["hx-refresh"] == "true"
    assert room.instructor.client.get(f"/teach/{created.code}/export/class.json").status_code == 404
    assert ada.client.get(f"/class/{created.code}", follow_redirects=False).headers["location"] == "/join"
    assert 'id="class-banner"' not in ada.open(f"/lessons/{LESSON}/1")


def test_gpu_classroom_export_prints_a_class(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    from app.cli import main

    settings = make_settings(tmp_path)
    for r in room_for(settings):
        created = r.instructor.create()
        r.learner().joins(created.code, "Ada")
    monkeypatch.setenv("GPU_CLASSROOM_DATA_DIR", str(settings.data_dir))
    assert main(["export", created.code, "--what", "learners"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("name,joined_at") and "\nAda," in out.replace("\r\n", "\n")
    assert main(["export", "ZZZZZZ"]) == 2


def test_gpu_classroom_export_on_a_database_never_migrated_or_unreachable_says_so_in_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from app.cli import main
    from tests.unit.test_startup_failures import closed_port

    monkeypatch.setenv("GPU_CLASSROOM_DATA_DIR", str(tmp_path))  # an empty folder: a database with no tables
    assert main(["export", "ABCDEF"]) == 2
    err = capsys.readouterr().err
    assert "no such table: classes" in err and "gpu-classroom migrate" in err and "Traceback" not in err
    monkeypatch.setenv("DATABASE_URL", f"postgresql+asyncpg://postgres@127.0.0.1:{closed_port()}/test")
    assert main(["export", "ABCDEF"]) == 2
    err = capsys.readouterr().err
    assert "could not read the classes" in err and "Traceback" not in err and len(err.strip().splitlines()) == 1


def test_every_class_page_is_free_of_inline_script_and_style(room: Room) -> None:
    created = room.instructor.create()
    room.instructor.open_dashboard(created)
    ada = room.learner()
    ada.joins(created.code, "Ada")
    views = ("", "/projector", "/cockpit")
    pages = [room.instructor.client.get(f"/teach/{created.code}{v}").text for v in views]
    pages += [ada.open("/join"), ada.open(f"/class/{created.code}"), ada.open(f"/lessons/{LESSON}/1"),
              room.instructor.client.get("/teach").text]
    for html in pages:
        assert not re.search(r"<script(?![^>]*\bsrc=)", html) and " style=" not in html


def test_an_app_without_classes_still_serves_steps_with_no_banner(tmp_path: Path) -> None:
    with TestClient(create_app(make_settings(tmp_path))) as c:
        assert 'id="class-banner"' not in c.get(f"/lessons/{LESSON}/1").text


def test_a_held_class_refuses_answers_to_drills_past_the_hold_and_stores_nothing(tmp_path: Path) -> None:
    from tests.web.drill_helpers import STEPS, DrillLearner, write_lesson

    for room in room_for(make_settings(tmp_path, write_lesson(tmp_path))):
        created = room.instructor.create(lesson="drills")
        room.instructor.open_dashboard(created)
        ada = room.learner()
        ada.joins(created.code, "Ada")
        room.instructor.pace("hold", 1)
        token = csrf_of(ada.open("/lessons/drills/1"))
        form = {"csrf_token": token, "lesson": "drills", "step": str(STEPS["will-it-fit"]), "block": "1",
                "question": "0", "answer-fits": "yes"}
        for path in ("/drills/will-it-fit/answer", "/drills/will-it-fit/next"):
            r = ada.client.post(path, data=form, headers={"HX-Request": "true"})
            assert r.status_code == 423 and "held at step 1" in r.text and "Nothing was graded" in r.text

        async def stored(db: Database) -> int:
            async with db.session() as s:
                return int(await s.scalar(select(func.count()).select_from(DrillAttempt)) or 0)

        assert run_in(room, stored) == 0
        room.instructor.pace("free")
        DrillLearner(ada.client).answer_right("will-it-fit")  # released: the same learner's answer counts
        assert run_in(room, stored) == 1
