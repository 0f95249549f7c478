"""A class run all term, through the browser (issue 28): the instructor's list and link, resuming on a new device,
the roster, the room's message and timer, the answer on the projector, reopen, copy, exports and the report; every
new form refuses bad input beside its field with a 4xx, and every new control needs CSRF and the class's key."""

from __future__ import annotations

import csv
import html
import io
import re
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from app.drills.base import write
from app.drills.registry import all_drills
from app.drills.seeds import learner_question
from tests.conftest import make_settings
from tests.unit.drills.drill_helpers import answers_for
from tests.web.classroom_helpers import LESSON, Room, Student, csrf_of, field_error, room_fixture, room_for
from tests.web.drill_helpers import DrillLearner, write_lesson

__all__ = ["room_fixture"]
CY = "5d0c7a1e-2f4b-4c8e-9a6d-3b1f0e7c2a94"


def message(room: Room, **data: str) -> object:
    teacher = room.instructor.client
    token = csrf_of(teacher.get(f"/teach/{room.instructor.code}").text)
    return teacher.post(f"/teach/{room.instructor.code}/message", data={"csrf_token": token, **data},
                        follow_redirects=False)


def timer(room: Room, **data: str) -> object:
    teacher = room.instructor.client
    token = csrf_of(teacher.get(f"/teach/{room.instructor.code}").text)
    return teacher.post(f"/teach/{room.instructor.code}/timer", data={"csrf_token": token, **data},
                        follow_redirects=False)


def test_teach_lists_the_classes_made_in_this_browser_and_no_one_elses(room: Room) -> None:
    first = room.instructor.create("Monday group")
    second = room.instructor.create("Tuesday group")
    mine = room.instructor.client.get("/teach").text
    assert mine.index(f'data-class="{second.code}"') < mine.index(f'data-class="{first.code}"')  # newest first
    assert "0 learners" in mine and "Show my instructor link" in mine
    assert "shown once" not in mine.split("A new class")[1]  # the old, untrue "shown once" line is gone
    assert 'data-class="' not in room.learner().open("/teach")


def test_the_instructor_link_opens_the_list_on_another_device_and_replacing_it_closes_the_old_one(
        room: Room) -> None:
    created = room.instructor.create("Monday group")
    teacher = room.instructor.client
    assert teacher.post("/teach/link", data={}).status_code == 403  # no CSRF token
    shown = teacher.post("/teach/link", data={"csrf_token": csrf_of(teacher.get("/teach").text)})
    link = re.search(r'data-link="instructor" href="([^"]+)"', shown.text).group(1)  # type: ignore[union-attr]
    assert "Copy it now: this page shows it once" in shown.text and shown.headers["cache-control"] == "no-store"
    assert link not in teacher.get("/teach").text  # not in a page that reloads

    laptop = room.learner().client  # another device
    assert laptop.get(f"/teach/{created.code}").status_code == 403
    confirm = laptop.get(link.replace("http://testserver", ""))
    assert confirm.status_code == 200 and "Open these classes in this browser?" in confirm.text
    assert laptop.get(f"/teach/{created.code}").status_code == 403  # opening the link alone keeps nothing
    kept = laptop.post("/teach/me", data={"csrf_token": csrf_of(confirm.text),
                                         "key": link.split("key=")[1]}, follow_redirects=False)
    assert kept.status_code == 303 and "Path=/teach" in kept.headers["set-cookie"]
    assert f'data-class="{created.code}"' in laptop.get("/teach").text
    assert laptop.get(f"/teach/{created.code}").status_code == 200  # the list's key opens the dashboard

    replaced = teacher.post("/teach/link/replace", data={"csrf_token": csrf_of(teacher.get("/teach").text)})
    assert "The old link, and any browser that kept it, no longer opens your classes" in replaced.text
    assert laptop.get(f"/teach/{created.code}").status_code == 403
    assert laptop.get(link.replace("http://testserver", "")).status_code == 404
    assert teacher.get(f"/teach/{created.code}").status_code == 200  # this browser took the new key


def test_a_learner_on_a_new_device_gets_back_in_with_their_name_and_resume_code(room: Room) -> None:
    created = room.instructor.create()
    cy = room.learner(CY)
    cy.open(cy.joins(created.code, "Cy"))
    cy.open(cy.finish(1))  # Done, next: on step 2
    own = cy.open(f"/class/{created.code}")
    code = re.search(r"data-resume-code>(\w+)<", own).group(1)  # type: ignore[union-attr]
    resume_link = html.unescape(re.search(r'data-resume-link href="([^"]+)"', own).group(1))  # type: ignore[union-attr]

    phone = room.learner()
    refused = phone.join(created.code, "cy")
    assert refused.status_code == 409 and "type your resume code below" in field_error(refused.text, "name")
    assert '<details class="resume" open>' in refused.text
    form = phone.open(resume_link.replace("http://testserver", ""))
    assert 'value="Cy"' in form and f'value="{code}"' in form
    token = csrf_of(form)
    wrong = phone.client.post("/join", data={"csrf_token": token, "code": created.code, "name": "Cy",
                                             "resume": "ZZZZZZ"}, follow_redirects=False)
    assert wrong.status_code == 403 and "not Cy's resume code" in html.unescape(field_error(wrong.text, "resume"))
    back = phone.client.post("/join", data={"csrf_token": token, "code": created.code, "name": "Cy",
                                            "resume": code}, follow_redirects=False)
    assert back.status_code == 303 and back.headers["location"] == f"/lessons/{LESSON}/2"
    mine = phone.open(f"/class/{created.code}")
    assert "you joined as <strong data-name>Cy</strong>" in mine and "1 of 2 steps done" in mine
    dashboard = room.instructor.open_dashboard(created)
    assert dashboard.count("<tr data-learner=") == 1  # no ghost row


def test_a_new_resume_code_from_the_instructor_replaces_the_old_one_everywhere(room: Room) -> None:
    created = room.instructor.create()
    room.instructor.open_dashboard(created)
    cy = room.learner(CY)
    cy.open(cy.joins(created.code, "Cy"))
    cy.open(cy.finish(1))  # on step 2
    teacher = room.instructor.client
    member = re.search(r'/learners/(\d+)">Cy<', teacher.get(f"/teach/{created.code}").text).group(1)  # type: ignore[union-attr]
    url = f"/teach/{created.code}/learners/{member}"

    def code_and_link(page: str) -> tuple[str, str]:
        code = re.search(r"data-resume-code>(\w+)<", page).group(1)  # type: ignore[union-attr]
        return code, html.unescape(re.search(r'data-resume-link href="([^"]+)"', page).group(1))  # type: ignore[union-attr]

    old, _ = code_and_link(teacher.get(url).text)
    assert code_and_link(cy.open(f"/class/{created.code}"))[0] == old
    replaced = teacher.post(f"{url}/resume", data={"csrf_token": csrf_of(teacher.get(url).text)},
                            follow_redirects=False)
    assert replaced.status_code == 303 and replaced.headers["location"] == url
    new, link = code_and_link(teacher.get(url).text)
    assert new != old and link.endswith(f"/join/{created.code}?name=Cy&resume={new}")  # the instructor's new link
    assert code_and_link(cy.open(f"/class/{created.code}")) == (new, link)  # and Cy's own page says the same

    phone = room.learner()
    token = csrf_of(phone.open(f"/join/{created.code}"))
    stale = phone.client.post("/join", data={"csrf_token": token, "code": created.code, "name": "Cy", "resume": old},
                              follow_redirects=False)
    assert stale.status_code == 403 and "not Cy's resume code" in html.unescape(field_error(stale.text, "resume"))
    form = phone.open(link.replace("http://testserver", ""))  # the new link fills in the form
    assert 'value="Cy"' in form and f'value="{new}"' in form
    back = phone.client.post("/join", data={"csrf_token": csrf_of(form), "code": created.code, "name": "Cy",
                                            "resume": new}, follow_redirects=False)
    assert back.status_code == 303 and back.headers["location"] == f"/lessons/{LESSON}/2"  # Cy's seat, Cy's step
    assert "you joined as <strong data-name>Cy</strong>" in phone.open(f"/class/{created.code}")


def test_the_instructor_renames_merges_and_removes_learners_with_messages_beside_each_field(room: Room) -> None:
    created = room.instructor.create()
    room.instructor.open_dashboard(created)
    old, new, eve = room.learner(), room.learner(), room.learner()
    old.open(old.joins(created.code, "Cy"))
    old.finish(1)
    new.joins(created.code, "Cy R")
    eve.joins(created.code, "Eve")
    page = room.instructor.client.get(f"/teach/{created.code}").text
    ids = dict((n, i) for i, n in re.findall(r'/learners/(\d+)">([^<]+)</a>', page))
    teacher = room.instructor.client

    def post(member: str, action: str, **data: str) -> object:
        token = csrf_of(teacher.get(f"/teach/{created.code}/learners/{ids[member]}").text)
        return teacher.post(f"/teach/{created.code}/learners/{ids[member]}/{action}",
                            data={"csrf_token": token, **data}, follow_redirects=False)

    learner_page = teacher.get(f"/teach/{created.code}/learners/{ids['Cy']}").text
    assert "data-resume-code>" in learner_page and f"/join/{created.code}?name=Cy&amp;resume=" in learner_page
    blank = post("Cy R", "rename", name="   ")
    assert blank.status_code == 422 and "Enter the name" in field_error(blank.text, "name")  # type: ignore[attr-defined]
    taken = post("Cy R", "rename", name="eve")
    assert taken.status_code == 409 and "already called 'eve'" in html.unescape(field_error(taken.text, "name"))  # type: ignore[attr-defined]
    unchosen = post("Cy", "merge", into="", keep="this")
    assert unchosen.status_code == 422 and "Choose the learner" in field_error(unchosen.text, "into")  # type: ignore[attr-defined]
    merged = post("Cy", "merge", into=ids["Cy R"], keep="this")
    assert merged.status_code == 303 and merged.headers["location"].endswith(f"/learners/{ids['Cy R']}")  # type: ignore[attr-defined]
    unticked = post("Eve", "remove")
    assert unticked.status_code == 422 and "Tick the box" in field_error(unticked.text, "confirm")  # type: ignore[attr-defined]
    assert post("Eve", "remove", confirm="on").status_code == 303  # type: ignore[attr-defined]
    dashboard = teacher.get(f"/teach/{created.code}").text
    assert re.findall(r'/learners/\d+">([^<]+)</a>', dashboard) == ["Cy"]
    assert ">Cy<" in new.open(f"/lessons/{LESSON}/1")  # the device that stayed is Cy now, with Cy's step done
    assert "1 of 2 steps done" in new.open(f"/class/{created.code}")
    rows = list(csv.DictReader(io.StringIO(teacher.get(f"/teach/{created.code}/export/learners.csv").text)))
    assert [(r["name"], r["steps_done"]) for r in rows] == [("Cy", "1")]
    # a stranger, and a form without its token, change nothing
    stranger = TestClient(teacher.app)
    assert stranger.post(f"/teach/{created.code}/learners/{ids['Cy R']}/rename",
                         data={"csrf_token": csrf_of(stranger.get("/join").text), "name": "X"}).status_code == 403
    assert teacher.post(f"/teach/{created.code}/learners/{ids['Cy R']}/rename", data={"name": "X"}).status_code == 403


def test_a_message_reaches_every_banner_and_the_projector_until_cleared(room: Room) -> None:
    created = room.instructor.create()
    room.instructor.open_dashboard(created)
    ada = room.learner()
    page = ada.open(ada.joins(created.code, "Ada"))
    empty = message(room, text="   ", action="send")
    assert empty.status_code == 422 and "Type a message" in field_error(empty.text, "message")  # type: ignore[attr-defined]
    long = message(room, text="x" * 250, action="send")
    assert long.status_code == 422 and "200 characters" in field_error(long.text, "message")  # type: ignore[attr-defined]
    assert message(room, text="<b>Five</b> minutes left", action="send").status_code == 303  # type: ignore[attr-defined]
    polled = ada.poll(page).text
    assert "From your instructor: <strong>&lt;b&gt;Five&lt;/b&gt; minutes left</strong>" in polled
    assert "&lt;b&gt;Five&lt;/b&gt; minutes left" in room.instructor.client.get(f"/teach/{created.code}/projector").text
    assert message(room, action="clear").status_code == 303  # type: ignore[attr-defined]
    assert "From your instructor" not in ada.open(f"/lessons/{LESSON}/1")


def test_a_drill_timer_counts_down_on_the_projector(drill_room: Room) -> None:
    created = drill_room.instructor.create(lesson="drills")
    drill_room.instructor.open_dashboard(created)
    bad = timer(drill_room, drill="1:bytes-per-parameter", minutes="two", action="start")
    assert bad.status_code == 422 and "from 1 to 60" in field_error(bad.text, "timer_minutes")  # type: ignore[attr-defined]
    assert timer(drill_room, drill="9:nope", minutes="2").status_code == 404  # type: ignore[attr-defined]
    assert timer(drill_room, drill="1:bytes-per-parameter", minutes="2").status_code == 303  # type: ignore[attr-defined]
    projector = drill_room.instructor.client.get(f"/teach/{created.code}/projector").text
    assert re.search(r'data-timer-ends="[^"]+" data-timer-prefix="Step 1:">Step 1: (1 min 5\d s|2 min) left', projector)
    assert timer(drill_room, action="stop").status_code == 303  # type: ignore[attr-defined]
    assert "data-timer-ends" not in drill_room.instructor.client.get(f"/teach/{created.code}/projector").text


@pytest.fixture
def drill_room(tmp_path: Path) -> Iterator[Room]:
    yield from room_for(make_settings(tmp_path, write_lesson(tmp_path)))


def test_the_projector_shows_the_right_answer_and_the_engines_worked_solution_of_the_question_on_screen(
        drill_room: Room) -> None:
    created = drill_room.instructor.create(lesson="drills")
    drill_room.instructor.open_dashboard(created)
    ada = drill_room.learner(CY)
    ada.joins(created.code, "Ada")
    drill = all_drills()["bytes-per-parameter"]
    question = learner_question(drill, CY, 0)
    assert DrillLearner(ada.client).answer(drill.name, {**answers_for(drill.name, question.parameters),
                                                        "gpus": "99"}).status_code == 200
    assert drill_room.instructor.post("reveal", drill="1:bytes-per-parameter", shown="1").status_code == 303
    projector = drill_room.instructor.client.get(f"/teach/{created.code}/projector").text
    assert 'class="join-line"' in projector and 'class="qr"' not in projector  # the join panel stepped aside
    assert "The right answer" not in projector and "Show the answer" in projector
    seed = re.search(r'name="seed" value="(\d+)"', projector).group(1)  # type: ignore[union-attr]
    assert int(seed) == question.seed  # the question on screen is the one answered
    teacher = drill_room.instructor.client
    shown = teacher.post(f"/teach/{created.code}/answer", data={
        "csrf_token": csrf_of(projector), "drill": "1:bytes-per-parameter", "seed": seed, "view": "projector"},
        follow_redirects=False)
    assert shown.status_code == 303 and shown.headers["location"] == f"/teach/{created.code}/projector"
    page = html.unescape(teacher.get(f"/teach/{created.code}/projector").text)
    worked = drill.solve(question)
    for part in question.parts:
        assert f"{part.prompt}: {write(part, worked.expected[part.id])}" in re.sub(r"</?strong>", "", page)
    assert all(line in page for line in worked.solution) and question.prompt in page
    assert teacher.post(f"/teach/{created.code}/answer", data={"drill": "1:bytes-per-parameter"}).status_code == 403


def test_the_dashboard_and_the_cockpit_name_each_wrong_part_by_what_it_asks_never_by_its_id(
        drill_room: Room) -> None:
    created = drill_room.instructor.create(lesson="drills")
    drill_room.instructor.open_dashboard(created)
    ada = drill_room.learner(CY)
    ada.joins(created.code, "Ada")
    drill = all_drills()["bytes-per-parameter"]
    right = answers_for(drill.name, learner_question(drill, CY, 0).parameters)
    assert right["bytes_per_parameter"] != "3" and right["total"] != "1"
    DrillLearner(ada.client).answer(drill.name, {**right, "bytes_per_parameter": "3", "total": "1"})
    said = "Bytes of training state per parameter: 3; Total training state before activations: 1"
    teacher = drill_room.instructor.client
    dashboard = html.unescape(teacher.get(f"/teach/{created.code}").text)
    polled = html.unescape(drill_room.instructor.live().text)  # the 2-second poll, from the board it keeps
    cockpit = html.unescape(teacher.get(f"/teach/{created.code}/cockpit").text)
    for page, where in ((dashboard, '<ol class="wrong">'), (polled, '<ol class="wrong">'),
                        (cockpit, "most common wrong:")):
        shown = page[page.index(where):]
        assert shown.split("</q>")[0].endswith(f"<q>{said}"), shown[:300]
        assert "bytes_per_parameter:" not in page and "total:" not in shown and "gpus:" not in shown


def test_a_wrong_delete_code_keeps_the_dashboard_with_the_message_beside_the_field(room: Room) -> None:
    created = room.instructor.create()
    room.instructor.open_dashboard(created)
    r = room.instructor.post("delete", confirm="WRONG1")
    assert r.status_code == 422 and f"Type the class code {created.code}" in field_error(r.text, "confirm")
    assert '<details class="danger-zone" open>' in r.text and "Learners and steps" in r.text  # no dead end
    assert room.instructor.client.get(f"/teach/{created.code}").status_code == 200  # nothing was deleted


def test_a_closed_class_hides_its_join_address_reopens_and_copies_for_the_next_section(room: Room) -> None:
    created = room.instructor.create("Monday group")
    room.instructor.open_dashboard(created)
    assert room.instructor.pace("hold", 1).status_code == 303
    assert room.instructor.post("close").status_code == 303
    closed = room.instructor.client.get(f"/teach/{created.code}").text
    assert "learners join at" not in closed and "closed: nobody can join" in closed and "Reopen the class" in closed
    bad = room.instructor.post("reopen", ends="5")
    assert bad.status_code == 422 and "Choose one of the end times" in field_error(bad.text, "ends")
    assert room.instructor.post("reopen", ends="").status_code == 303
    assert "learners join at" in room.instructor.client.get(f"/teach/{created.code}").text
    stale = room.instructor.post("reopen", ends="2")  # the same form again, from a tab opened while it was closed
    assert stale.status_code == 409 and "This class is open already" in field_error(stale.text, "reopen")
    assert "Close the class" in stale.text and "Reopen the class" not in stale.text  # the message by the control
    assert "ends at" not in room.instructor.client.get(f"/teach/{created.code}").text  # nothing changed
    blank = room.instructor.post("copy", title="  ", copy_ends="")
    assert blank.status_code == 422 and "Give the class a title" in field_error(blank.text, "title")
    assert '<details class="copy-zone" open>' in blank.text
    copied = room.instructor.post("copy", title="Tuesday group", copy_ends="2")
    assert copied.status_code == 303 and copied.headers["location"].endswith("/created")
    new_code = copied.headers["location"].split("/")[2]
    new = room.instructor.client.get(f"/teach/{new_code}").text
    assert "held at <strong>step 1</strong>" in new and "Nobody has joined yet" in new  # pacing, no learners
    listed = room.instructor.client.get("/teach").text
    assert f'data-class="{new_code}"' in listed and f'data-class="{created.code}"' in listed


def test_the_join_page_names_the_class_and_a_finished_learner_is_told_so(room: Room) -> None:
    created = room.instructor.create("GPU basics, Tuesday")
    ada = room.learner()
    assert "Join <span data-class-title>GPU basics, Tuesday</span>" in ada.open(f"/join/{created.code}")
    assert "data-class-title" not in ada.open("/join/ZZZZZZ")
    ada.joins(created.code, "Ada")
    ada.finish(1)
    ada.finish(2)
    mine = ada.open(f"/class/{created.code}")
    assert "You finished the lesson" in mine and "Continue at step" not in mine
    assert 'data-state="done"' in mine and 'data-state="current"' not in mine and "2 of 2 steps done" in mine
    bo = room.learner()
    bo.joins(created.code, "Bo")
    bo.finish(2)  # the last step only: not finished, and sent back to the step still to do (learner walk X1)
    theirs = bo.open(f"/class/{created.code}")
    assert "You finished the lesson" not in theirs and "Continue at step 1" in theirs


def test_the_exports_carry_expected_values_and_the_markdown_report_names_nobody(drill_room: Room) -> None:
    created = drill_room.instructor.create(lesson="drills")
    drill_room.instructor.open_dashboard(created)
    ada = drill_room.learner(CY)
    ada.joins(created.code, "Ada Secretname")
    drill = all_drills()["bytes-per-parameter"]
    question = learner_question(drill, CY, 0)
    right = answers_for(drill.name, question.parameters)
    wrong = next(v for v in drill.solve(question).variants if v.part == "bytes_per_parameter")
    DrillLearner(ada.client).answer(drill.name, {**right, "bytes_per_parameter": f"{wrong.value:g}"})
    teacher = drill_room.instructor.client
    rows = {r["part"]: r for r in csv.DictReader(io.StringIO(
        teacher.get(f"/teach/{created.code}/export/attempts.csv").text))}
    worked = drill.solve(question)
    assert rows["total"]["unit"] == "GB" and rows["total"]["question"] == "1"
    assert float(rows["total"]["expected"]) == pytest.approx(worked.expected["total"] / 1e9, rel=1e-5)
    assert float(rows["bytes_per_parameter"]["value"]) == wrong.value
    assert rows["bytes_per_parameter"]["mistake"] == wrong.id and rows["bytes_per_parameter"]["mistake_name"]
    assert rows["total"]["mistake"] == "" and rows["gpus"]["mistake"] == ""  # the mistake on its own part only
    report = teacher.get(f"/teach/{created.code}/export/report.md")
    assert report.status_code == 200 and report.headers["content-type"].startswith("text/markdown")
    text = report.text
    assert "# Tuesday group: class report" in text and "| Step | Title | Done |" in text
    assert "### Step 1: Bytes per parameter to train" in text and "Commonest mistakes:" in text
    assert "Secretname" not in text
    assert TestClient(teacher.app).get(f"/teach/{created.code}/export/report.md").status_code == 403


def test_a_flag_marked_by_the_instructor_needs_csrf_the_key_and_a_real_flag(room: Room) -> None:
    created = room.instructor.create()
    room.instructor.open_dashboard(created)
    ada = room.learner()
    ada.joins(created.code, "Ada")
    member = re.search(r'/learners/(\d+)"', room.instructor.client.get(f"/teach/{created.code}").text).group(1)  # type: ignore[union-attr]
    assert room.instructor.post("flags", member=member, flag="idle", outcome="helped").status_code == 303
    assert room.instructor.post("flags", member=member, flag="<script>", outcome="helped").status_code == 404
    assert room.instructor.post("flags", member=member, flag="idle", outcome="ignored").status_code == 422
    assert room.instructor.post("flags", member="999999", flag="idle").status_code == 404
    assert room.instructor.client.post(f"/teach/{created.code}/flags", data={"member": member, "flag": "idle"}
                                       ).status_code == 403


def test_a_waiting_banner_poll_brings_a_move_within_a_second_and_a_quiet_one_costs_one_request(room: Room) -> None:
    created = room.instructor.create()
    room.instructor.open_dashboard(created)
    ada = room.learner()
    page = ada.open(ada.joins(created.code, "Ada"))
    url = re.search(r'hx-get="(/class-banner\?[^"]+)"', page).group(1).replace("&amp;", "&")  # type: ignore[union-attr]
    tag = '"banner-' + re.search(r'data-token="([^"]+)"', page).group(1) + '"'  # type: ignore[union-attr]
    got: dict[str, object] = {}

    def poll() -> None:
        r = ada.client.get(url + "&wait=1", headers={"HX-Request": "true", "If-None-Match": tag})
        got["answer"], got["at"] = r, time.perf_counter()

    waiting = threading.Thread(target=poll)
    waiting.start()
    time.sleep(0.8)
    assert "answer" not in got  # held: nothing changed yet
    moved = time.perf_counter()
    room.instructor.pace("bring", 2, move=True)
    waiting.join(timeout=10)
    assert got["answer"].headers.get("hx-redirect") == f"/lessons/{LESSON}/2"  # type: ignore[attr-defined]
    assert got["at"] - moved < 1.5  # type: ignore[operator]


def test_without_wait_a_poll_answers_at_once_as_before(room: Room) -> None:
    created = room.instructor.create()
    ada: Student = room.learner()
    page = ada.open(ada.joins(created.code, "Ada"))
    start = time.perf_counter()
    assert ada.poll(page).status_code in (200, 204)
    assert time.perf_counter() - start < 2


def test_gpu_classroom_export_writes_the_dashboards_files_with_words_and_the_report(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    from app.cli import main

    lessons = write_lesson(tmp_path)
    settings = make_settings(tmp_path, lessons)
    for r in room_for(settings):
        created = r.instructor.create(lesson="drills")
        ada = r.learner(CY)
        ada.joins(created.code, "Ada")
        drill = all_drills()["bytes-per-parameter"]
        question = learner_question(drill, CY, 0)
        DrillLearner(ada.client).answer(drill.name, answers_for(drill.name, question.parameters))
        web_report = r.instructor.client.get(f"/teach/{created.code}/export/report.md").text
    monkeypatch.setenv("GPU_CLASSROOM_DATA_DIR", str(settings.data_dir))
    monkeypatch.setenv("GPU_CLASSROOM_LESSONS_DIR", str(lessons))
    assert main(["export", created.code, "--what", "attempts"]) == 0
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert rows[0]["question_text"] == question.prompt and all(r["expected"] and r["unit"] for r in rows)
    assert main(["export", created.code, "--what", "report"]) == 0
    cli_report = capsys.readouterr().out

    def body(text: str) -> str:  # all but the line that says when it was written
        return re.sub(r" · written [^\n]+", "", text)

    assert body(cli_report) == body(web_report) and "### Step 1: Bytes per parameter to train" in cli_report
