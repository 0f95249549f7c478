"""The projector reads from the back of a room: what a revealed drill asks, right and wrong per part, the
commonest mistakes in words (never raw typed values from different questions) and the other wrong parts in good
English (as the class report counts them), how many reached a bring, who is
here on each step (a finished learner is done, not here), and a closed class says so."""

from __future__ import annotations

import html
import re
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest
from sqlalchemy import update

from app.classroom.class_models import Member
from app.classroom.db import Database
from app.classroom.models import utcnow
from app.drills.registry import all_drills
from app.drills.room import mistake_name
from app.drills.seeds import learner_question
from app.web.security import LEARNER_COOKIE, Signer
from tests.conftest import make_settings
from tests.unit.drills.drill_helpers import answers_for
from tests.web.classroom_helpers import Room, Student, room_fixture, room_for, run_in
from tests.web.drill_helpers import DrillLearner, write_lesson

__all__ = ["room_fixture"]
LEARNERS = ["5d0c7a1e-2f4b-4c8e-9a6d-3b1f0e7c2a94", "7a1e5d0c-4c8e-2f4b-9a6d-0e7c2a943b1f"]
DRILL = "bytes-per-parameter"


@pytest.fixture
def drill_room(tmp_path: Path) -> Iterator[Room]:
    yield from room_for(make_settings(tmp_path, write_lesson(tmp_path)))


def _answer_with_a_classic_mistake(room: Room, code: str, learner_id: str, name: str) -> str:
    person = room.learner()
    person.client.cookies.set(LEARNER_COOKIE, Signer("test-secret-key").cookie.dumps(learner_id))
    person.joins(code, name)
    drill = all_drills()[DRILL]
    question = learner_question(drill, learner_id, 0)
    wrong = next(v for v in drill.solve(question).variants
                 if v.part == "bytes_per_parameter" and v.id == "weights-only")
    answers = {**answers_for(DRILL, question.parameters), "bytes_per_parameter": f"{wrong.value:g}"}
    assert DrillLearner(person.client).answer(DRILL, answers).status_code == 200
    return mistake_name(wrong.message)


def test_a_revealed_drill_shows_what_it_asks_right_by_part_and_the_commonest_mistake(drill_room: Room) -> None:
    created = drill_room.instructor.create(lesson="drills")
    drill_room.instructor.open_dashboard(created)
    names = {_answer_with_a_classic_mistake(drill_room, created.code, lid, f"P{n}") for n, lid in enumerate(LEARNERS)}
    assert len(names) == 1  # two questions with their own numbers, one mistake in the same words
    assert drill_room.instructor.post("reveal", drill=f"1:{DRILL}", shown="1").status_code == 303
    page = html.unescape(drill_room.instructor.client.get(f"/teach/{created.code}/projector").text)
    reveal = page[page.index('data-revealed="true"'):]
    assert "Bytes of training state per parameter" in reveal and "Total training state before activations" in reveal
    parts = dict(re.findall(r'data-part="(\w+)">.*?class="dist-count">([^<]+)<', reveal))
    assert parts == {"bytes_per_parameter": "0 of 2", "total": "2 of 2", "gpus": "2 of 2"}
    mistake = re.search(r'<li data-mistake><span class="dist-label">(.*?) <span.*?class="dist-count">(\d+)<', reveal)
    assert mistake and mistake.groups() == (names.pop(), "2")
    assert "bytes_per_parameter:" not in page  # no raw ids with typed values


def _answer_with_an_unclassic_slip(person: Student, learner_id: str, gpus: str) -> None:
    """Every part right but the GPUs, where a figure no classic mistake gives."""
    question = learner_question(all_drills()[DRILL], learner_id, 0)
    answers = {**answers_for(DRILL, question.parameters), "gpus": gpus}
    assert DrillLearner(person.client).answer(DRILL, answers).status_code == 200


def test_other_wrong_parts_are_counted_in_good_english_on_the_projector_and_in_the_report(drill_room: Room) -> None:
    created = drill_room.instructor.create(lesson="drills")
    drill_room.instructor.open_dashboard(created)
    assert drill_room.instructor.post("reveal", drill=f"1:{DRILL}", shown="1").status_code == 303
    people = []
    for learner_id, name in zip(LEARNERS, ("Ada", "Bo"), strict=True):
        person = drill_room.learner()
        person.client.cookies.set(LEARNER_COOKIE, Signer("test-secret-key").cookie.dumps(learner_id))
        person.joins(created.code, name)
        people.append(person)
    teacher = drill_room.instructor.client

    def said() -> tuple[str, str]:
        projector = html.unescape(teacher.get(f"/teach/{created.code}/projector").text)
        other = re.search(r'<p class="proj-other">([^<]+)</p>', projector)
        report = teacher.get(f"/teach/{created.code}/export/report.md").text
        line = re.search(r"^\d+ other wrong parts? match(?:es)? no classic mistake\.$", report, re.M)
        assert other and line, "no count of the other wrong parts"
        return other.group(1), line.group(0)

    _answer_with_an_unclassic_slip(people[0], LEARNERS[0], "99")
    assert said() == ("And 1 other wrong part that matches no classic mistake.",
                      "1 other wrong part matches no classic mistake.")
    _answer_with_an_unclassic_slip(people[1], LEARNERS[1], "97")
    assert said() == ("And 2 other wrong parts that match no classic mistake.",
                      "2 other wrong parts match no classic mistake.")


def test_a_closed_class_says_so_and_offers_no_join_or_qr(drill_room: Room) -> None:
    created = drill_room.instructor.create(lesson="drills")
    drill_room.instructor.open_dashboard(created)
    projector = drill_room.instructor.client.get(f"/teach/{created.code}/projector").text
    assert "Join at" in projector and 'class="qr"' in projector
    assert drill_room.instructor.post("close").status_code == 303
    closed = drill_room.instructor.client.get(f"/teach/{created.code}/projector").text
    assert "This class is closed" in closed and "Join at" not in closed and 'class="qr"' not in closed
    assert "Scan to join" not in closed


def test_a_projector_open_when_the_class_closes_drops_its_join_panel_at_the_next_poll(drill_room: Room) -> None:
    created = drill_room.instructor.create(lesson="drills")
    drill_room.instructor.open_dashboard(created)
    assert drill_room.instructor.post("close").status_code == 303
    poll = drill_room.instructor.live("/projector").text  # a poll replaces the whole screen, join panel and all
    assert poll.startswith('<div id="projector-live"') and '<section class="join-panel closed" id="join-panel"' in poll
    assert "Join at" not in poll and "hx-get" not in poll  # and a closed class stops polling


def _pace_line(room: Room) -> str:
    """The projector's pacing line as the room reads it, without the counts after it."""
    page = room.instructor.client.get(f"/teach/{room.instructor.code}/projector").text
    line = re.search(r'<p class="pace-status big"[^>]*>(.*?)<span class="proj-counts">', page, re.S)
    assert line, "the projector has no pacing line"
    return html.unescape(" ".join(re.sub(r"<[^>]+>", "", line.group(1)).split()))


def _quiet(name: str, minutes: float) -> object:
    """Make a member look quiet for `minutes` (their last activity that long ago)."""
    async def make(db: Database) -> None:
        async with db.session() as s:
            await s.execute(update(Member).where(Member.name == name).values(
                last_active=utcnow() - timedelta(minutes=minutes)))
    return make


def test_a_bring_on_the_projector_counts_the_active_learners_there_and_stops_asking_once_all_are(
        room: Room) -> None:
    created = room.instructor.create()
    room.instructor.open_dashboard(created)
    people = {name: room.learner() for name in ("Ada", "Bo", "Cy", "Dee")}
    for name, person in people.items():
        person.open(person.joins(created.code, name))  # on step 1
    run_in(room, _quiet("Dee", 30))  # left the room: not counted either way
    assert room.instructor.post("pace", mode="bring-hold", step="2").status_code == 303
    assert _pace_line(room) == "Everyone: please go to step 2; we pause there. 0 of 3 are there."
    people["Ada"].open("/lessons/tiny/2")
    assert _pace_line(room) == "Everyone: please go to step 2; we pause there. 1 of 3 is there."
    people["Bo"].open("/lessons/tiny/2")
    people["Bo"].open("/lessons/tiny/1")  # back to re-read after reaching it: the bring is done for Bo
    assert _pace_line(room) == "Everyone: please go to step 2; we pause there. 2 of 3 are there."
    people["Cy"].open("/lessons/tiny/2")
    assert _pace_line(room) == "Everyone is at step 2; we pause there."
    assert room.instructor.pace("bring", 1).status_code == 303  # a new bring: those past step 1 are there
    assert _pace_line(room) == "Everyone is at step 1."


def test_a_learner_who_finished_the_lesson_reads_done_not_here_on_the_dashboard_and_the_projector(
        room: Room) -> None:
    created = room.instructor.create()
    room.instructor.open_dashboard(created)
    ada, bo, cy = room.learner(), room.learner(), room.learner()
    ada.joins(created.code, "Ada")
    ada.finish(1)
    assert ada.finish(2) == "/lessons/tiny/complete"  # through the lesson; their step stays the last one
    bo.open(bo.joins(created.code, "Bo"))
    bo.open("/lessons/tiny/2")  # here on step 2, step 1 only opened
    assert room.instructor.pace("bring", 2).status_code == 303
    cy.open(cy.joins(created.code, "Cy"))  # lands on step 2: step 1 passed with the class
    cy.finish(2)  # done or passed, every step: finished too
    dashboard = room.instructor.client.get(f"/teach/{created.code}").text

    def row(name: str) -> str:
        found = re.search(rf'<tr data-learner="\d+"[^>]*>\s*<th[^>]*><a [^>]*>{name}</a>(.*?)</tr>', dashboard, re.S)
        assert found, f"no row for {name}"
        return found.group(1)

    def cells(name: str) -> list[str]:
        return re.findall(r'<td class="c ?([^"]*)"', row(name))

    assert cells("Ada") == ["c-done", "c-done"] and "finished the lesson" in row("Ada")
    assert cells("Cy") == ["c-passed", "c-done"] and "finished the lesson" in row("Cy")
    assert cells("Bo") == ["c-seen", "c-current"] and "on step 2" in row("Bo")
    here = re.search(r'<th scope="row">Here now</th>(.*?)</tr>', dashboard, re.S)
    assert here and re.findall(r'<td class="c">(\d*)</td>', here.group(1)) == ["", "1"]
    projector = html.unescape(room.instructor.client.get(f"/teach/{created.code}/projector").text)
    bars = {n: (count, said) for n, count, said in re.findall(
        r'<li data-step="(\d)">.*?class="dist-count">([^<]+)</span><span class="visually-hidden">([^<]+)<',
        projector, re.S)}
    assert bars == {"1": ("1", " done"), "2": ("2 · 1 here", " done, here now")}  # Ada and Cy done, Bo here
