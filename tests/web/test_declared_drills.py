"""A drill declared in a lesson file, through HTTP as a learner and an instructor meet it: the same guarantees as
the built-in drills (no answer before an attempt, units read, unreadable input not counted, attempts stored,
mastery, the class dashboard, the API), under its name `lesson-slug/drill-id`."""

from __future__ import annotations

import html
import json
import re
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from httpx import Response

from app.classroom import attempts
from app.drills.base import Drill, Question, typed_form
from app.drills.seeds import learner_seed
from app.main import create_app
from app.pages.lesson_drills import find_drill
from app.web.security import LEARNER_COOKIE, Signer
from tests.conftest import FIXTURE_LESSONS, make_settings
from tests.web.classroom_helpers import Instructor, Student
from tests.web.test_drills_secrets import ALLOWED_HIDDEN, everything, size_forms

ROOT = Path(__file__).resolve().parents[2]
DECLARED = ROOT / "tests" / "fixtures" / "declared"
NAME = "training-state/bytes-per-parameter"
STEP = "/lessons/training-state/1"
HX = {"HX-Request": "true"}


@pytest.fixture
def client(tmp_path: Path) -> Iterator[TestClient]:
    with TestClient(create_app(make_settings(tmp_path, DECLARED))) as c:
        yield c


def drill_of(client: TestClient) -> Drill:
    found = find_drill(client.app.state.lessons, NAME)  # type: ignore[attr-defined]
    assert found is not None
    return found


def shown(page: str) -> tuple[dict[str, Any], int, str]:
    """The question's parameters, its number and the CSRF token, as the page shows them."""
    params = re.search(r'data-drill-parameters="([^"]*)"', page)
    number = re.search(r'data-question="(\d+)"', page)
    token = re.search(r'name="csrf_token" value="([^"]+)"', page)
    assert params and number and token, "no declared drill on the page"
    return json.loads(html.unescape(params.group(1))), int(number.group(1)) - 1, token.group(1)


def question_on(client: TestClient, page: str) -> Question:
    params, _, _ = shown(page)
    d = drill_of(client)
    return d.question(0).model_copy(update={"parameters": params})


def right(client: TestClient, page: str) -> dict[str, str]:
    d, q = drill_of(client), question_on(client, page)
    solution = d.solve(q)
    return {p.id: typed_form(p, solution.expected[p.id]) for p in q.parts}


def answer(client: TestClient, answers: dict[str, str], htmx: bool = True) -> Response:
    page = client.get(STEP).text
    _, number, token = shown(page)
    form = {"lesson": "training-state", "step": "1", "block": "1", "question": str(number), "csrf_token": token,
            **{f"answer-{k}": v for k, v in answers.items()}}
    return client.post(f"/drills/{NAME}/answer", data=form, headers=HX if htmx else {}, follow_redirects=False)


def stored(client: TestClient) -> list[attempts.Attempt]:
    found: list[attempts.Attempt] = client.portal.call(  # type: ignore[union-attr]
        lambda: attempts.list_attempts(client.app.state.db, drill=NAME)  # type: ignore[attr-defined]
    )
    return found


def test_the_step_shows_the_declared_question_with_a_labelled_field_per_part(client: TestClient) -> None:
    page = client.get(STEP).text
    assert f'data-drill="{NAME}"' in page and "Drill: Bytes per parameter to train" in page
    assert f'action="/drills/{NAME}/answer"' in page and "with Adam in mixed precision" in page
    for part in ("bytes_per_parameter", "total", "gpus"):
        assert f'<label for="d1-{part}"' in page


@pytest.mark.parametrize("learner", [str(uuid.UUID(int=n * 7919 + 1)) for n in range(3)])
def test_no_response_before_an_answer_gives_the_answer_away(client: TestClient, learner: str) -> None:
    client.cookies.set(LEARNER_COOKIE, Signer("test-secret-key").cookie.dumps(learner))
    d = drill_of(client)
    q = d.question(learner_seed(learner, NAME, 0))
    total = d.solve(q).expected["total"]
    assert isinstance(total, float)
    hidden = size_forms(total) | {"Worked solution", "data-correct", "Expected:"}
    page = client.get(STEP)
    responses = [page, client.get(f"{STEP}?hints=9")]
    responses += [client.get(f"/drills/{NAME}/hint?lesson=training-state&step=1&block=1&shown={n}", headers=HX)
                  for n in range(3)]
    responses += [answer(client, {"bytes_per_parameter": "", "total": "5 GB/s", "gpus": "two cats"}),
                  answer(client, {"total": "5 GB/s"}, htmx=False)]
    for response in responses:
        assert response.status_code in (200, 422), response.status_code
        assert sorted(s for s in hidden if s in everything(response)) == [], response.request.url
        assert set(re.findall(r'type="hidden" name="([^"]+)"', response.text)) <= ALLOWED_HIDDEN
    assert shown(page.text)[0] == q.parameters  # the question checked is the one shown


def test_right_answers_in_any_unit_are_graded_right_and_stored_under_the_drill_name(client: TestClient) -> None:
    answers = right(client, client.get(STEP).text)
    total = float(answers["total"].split()[0]) * 1e9
    response = answer(client, {**answers, "total": f"{total / 2**30:.3f} GiB"})
    assert response.status_code == 200 and "✓ All right" in response.text and "Worked solution" in response.text
    [attempt] = stored(client)
    assert (attempt.drill, attempt.lesson, attempt.step, attempt.score) == (NAME, "training-state", 1, 1.0)
    assert attempt.answers["total"].endswith("GiB")


def test_a_named_mistake_gets_its_message_and_is_graded_wrong(client: TestClient) -> None:
    answers = right(client, client.get(STEP).text)
    response = answer(client, {**answers, "bytes_per_parameter": "2 bytes"})
    assert response.status_code == 200
    assert 'data-part="bytes_per_parameter" data-correct="false" data-mistake="weights-only"' in response.text
    assert "2 bytes is the weights alone, the figure for serving" in response.text
    [attempt] = stored(client)
    assert attempt.mistake == "weights-only" and attempt.correct_parts["bytes_per_parameter"] is False


def test_unreadable_input_gets_its_message_beside_the_field_and_costs_no_attempt(client: TestClient) -> None:
    answers = right(client, client.get(STEP).text)
    response = answer(client, {**answers, "total": "128 GB/s"})
    assert response.status_code == 422
    assert "is a rate (an amount per second), not an amount of memory" in response.text
    assert stored(client) == []


def test_three_right_first_tries_master_it_and_the_step_is_done(client: TestClient) -> None:
    for n in range(3):
        page = client.get(STEP).text
        response = answer(client, right(client, page))
        assert "✓ All right" in response.text
        if n < 2:
            _, number, token = shown(page)
            client.post(f"/drills/{NAME}/next", headers=HX, data={"lesson": "training-state", "step": "1",
                        "block": "1", "question": str(number), "csrf_token": token})
    assert "Drill mastered" in response.text
    assert 'data-state="mastered"' in client.get(STEP).text
    assert 'data-step="1" data-state="mastered"' in client.get("/lessons/training-state").text


def test_the_api_lists_asks_and_grades_the_declared_drill(client: TestClient) -> None:
    listed = {d["name"]: d for d in client.get("/api/drills").json()}
    assert NAME in listed and "bytes-per-parameter" in listed
    assert listed[NAME]["question"] == f"/api/drills/{NAME}/question?seed=0"
    q = client.get(f"/api/drills/{NAME}/question?seed=4").json()
    assert q["drill"] == NAME and "expected" not in json.dumps(q)
    d = drill_of(client)
    question = d.question(4)
    body = {"seed": 4, "answers": {p.id: typed_form(p, d.solve(question).expected[p.id]) for p in question.parts}}
    graded = client.post(f"/api/drills/{NAME}/grade", json=body).json()
    assert graded["correct"] is True and graded["score"] == 1.0
    assert client.get("/api/drills/training-state/nope/question?seed=1").status_code == 404
    assert client.post(f"/api/drills/{NAME}/grade", json={"seed": 4, "answers": {"total": "x"}}).status_code == 422


def test_the_class_dashboard_counts_the_declared_drill(tmp_path: Path) -> None:
    settings = make_settings(tmp_path, FIXTURE_LESSONS, lessons_dirs=str(DECLARED))
    with TestClient(create_app(settings)) as teacher_client, TestClient(teacher_client.app) as learner_client:
        instructor = Instructor(teacher_client)
        created = instructor.create("Thursday", lesson="training-state")
        Student(learner_client).joins(created.code, "Ada")
        answers = right(learner_client, learner_client.get(STEP).text)
        assert "✓ All right" in answer(learner_client, answers).text
        dashboard = instructor.open_dashboard(created)
    stat = re.search(rf'data-drill="1:{re.escape(NAME)}">(.*?)</article>', dashboard, re.S)
    assert stat is not None, "the dashboard has no entry for the declared drill"
    assert f"({NAME})" in stat.group(1)
    assert re.search(r"<span data-attempts>1</span> answer from 1 learner · <strong data-share>100 %</strong> right",
                     stat.group(1)), stat.group(1)


def test_a_second_lessons_folder_is_served_beside_the_first_and_a_class_can_be_made_for_it(tmp_path: Path) -> None:
    settings = make_settings(tmp_path, FIXTURE_LESSONS, lessons_dirs=str(DECLARED))
    with TestClient(create_app(settings)) as c:
        home = c.get("/").text
        assert "/lessons/tiny" in home and "/lessons/training-state" in home
        teach = c.get("/teach").text
        assert 'value="tiny"' in teach and 'value="training-state"' in teach
