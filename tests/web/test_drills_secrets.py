"""The expected answer stays on the server: no drill response carries it before the learner has answered."""

from __future__ import annotations

import re
import uuid
from collections.abc import Iterator

import pytest
from fastapi.testclient import TestClient
from httpx import Response

from app.drills.base import Question, Solution
from app.drills.registry import get_drill
from app.drills.seeds import learner_seed
from app.drills.spot_the_mistake import catalogue
from app.engine.text import gb, gib
from app.web.security import Signer
from tests.web.drill_helpers import HX, STEPS, DrillLearner, drill_client  # noqa: F401

LEARNERS = [str(uuid.UUID(int=n * 7919 + 1)) for n in range(4)]
ALLOWED_HIDDEN = {"csrf_token", "lesson", "step", "block", "question", "shown"}


def size_forms(nbytes: float) -> set[str]:
    """Ways a size could be written out: the filters' text and the plain digits."""
    g = nbytes / 1e9
    return {gb(nbytes), gib(nbytes), f"{g:.2f}", f"{g:.1f} GB", f"{nbytes:.0f}", f"{nbytes:,.0f}",
            f"{nbytes / 2**30:.2f}"}


def secrets(q: Question, solution: Solution) -> set[str]:
    """Text that would give this question's answer away."""
    found: set[str] = set()
    for part in q.parts:
        value = solution.expected[part.id]
        if part.kind == "size" and isinstance(value, float):
            found |= size_forms(value)
    if q.drill == "spot-the-mistake":
        right = catalogue().mistake(catalogue().scenario(q.parameters["scenario"]).mistake)
        found |= {right.principle, "Go back to slide", "Worked solution"}
    return found | {"Worked solution", "data-correct", "Expected:"}


def everything(response: Response) -> str:
    """Body, headers and cookies of a response, as one text to search."""
    headers = "\n".join(f"{k}: {v}" for k, v in response.headers.items())
    return f"{response.text}\n{headers}\n{response.cookies}"


def responses_before_answering(client: TestClient, name: str) -> Iterator[Response]:
    """Every response a learner can get from a drill without a graded attempt."""
    step = STEPS[name]
    page = client.get(f"/lessons/drills/{step}")
    yield page
    d = DrillLearner(client)
    for shown in range(4):
        yield client.get(f"/drills/{name}/hint?lesson=drills&step={step}&block=1&shown={shown}", headers=HX)
    yield client.get(f"/lessons/drills/{step}?hints=9")
    form = {"lesson": "drills", "step": str(step), "block": "1", "question": str(d.question_number(page.text)),
            "csrf_token": d.csrf(page.text), "answer-total": "5 GB/s", "answer-per_gpu": "9 W",
            "answer-mistake": "z", "answer-fits": "perhaps"}
    yield client.post(f"/drills/{name}/answer", data=form, headers=HX)
    yield client.post(f"/drills/{name}/answer", data=form)
    yield client.post(f"/drills/{name}/answer", data={**form, "question": "7"}, headers=HX)


@pytest.mark.parametrize("name", list(STEPS))
@pytest.mark.parametrize("learner", LEARNERS)
def test_no_response_before_an_answer_gives_the_answer_away(
    drill_client: TestClient, name: str, learner: str  # noqa: F811
) -> None:
    drill_client.cookies.set("gc_learner", Signer("test-secret-key").cookie.dumps(learner))
    drill = get_drill(name)
    assert drill is not None
    for number in range(2):
        q = drill.question(learner_seed(learner, name, number))
        hidden = secrets(q, drill.solve(q))
        for response in responses_before_answering(drill_client, name):
            assert response.status_code in (200, 422), response.status_code
            text = everything(response)
            leaked = sorted(s for s in hidden if s in text)
            assert leaked == [], (response.request.url, leaked)
            names = set(re.findall(r'type="hidden" name="([^"]+)"', response.text))
            assert names <= ALLOWED_HIDDEN, names
            if "data-drill-parameters" in response.text:  # the question shown is the one checked
                assert DrillLearner.parameters(response.text) == q.parameters
        DrillLearner(drill_client).next_question(name)


def test_after_an_answer_the_worked_solution_does_show_the_expected_values(drill_client: TestClient) -> None:  # noqa: F811
    learner = LEARNERS[0]
    drill_client.cookies.set("gc_learner", Signer("test-secret-key").cookie.dumps(learner))
    drill = get_drill("bytes-per-parameter")
    assert drill is not None
    q = drill.question(learner_seed(learner, "bytes-per-parameter", 0))
    total = drill.solve(q).expected["total"]
    assert isinstance(total, float)
    response = DrillLearner(drill_client).answer("bytes-per-parameter", {"bytes_per_parameter": "1", "total": "1",
                                                                           "gpus": "1"})
    assert gb(total) in response.text  # so the scan above would have seen it, had it leaked
