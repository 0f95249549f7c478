"""A lesson with one step per drill, and a learner who answers drills the way a browser would."""

from __future__ import annotations

import html
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from httpx import Response

from app.main import create_app
from tests.conftest import make_settings
from tests.unit.drills.drill_helpers import answers_for

HX = {"HX-Request": "true"}
STEPS = {"bytes-per-parameter": 1, "will-it-fit": 2, "spot-the-mistake": 3}
LESSON_YAML = """slug: drills
title: Drill practice
summary: One step per drill.
minutes: 6
sections:
  - title: Drills
    steps: [01-bytes.md, 02-fit.md, 03-spot.md]
"""
STEP = """---
title: {title}
summary: Practise {name}.
minutes: 2
---

Some prose before the drill.

```drill {name}
mastery: 3
```
"""


def write_lesson(root: Path) -> Path:
    folder = root / "lessons" / "drills"
    folder.mkdir(parents=True)
    (folder / "lesson.yaml").write_text(LESSON_YAML)
    for name, number in STEPS.items():
        file = ["01-bytes.md", "02-fit.md", "03-spot.md"][number - 1]
        (folder / file).write_text(STEP.format(title=f"Drill {number}", name=name))
    return root / "lessons"


@pytest.fixture
def drill_client(tmp_path: Path) -> Iterator[TestClient]:
    """A fresh app over a lesson with one step per drill."""
    with TestClient(create_app(make_settings(tmp_path, write_lesson(tmp_path)))) as c:
        yield c


class DrillLearner:
    """One learner at the drills, in their words."""

    def __init__(self, client: TestClient) -> None:
        self.client = client

    def open(self, name: str, query: str = "") -> str:
        response = self.client.get(f"/lessons/drills/{STEPS[name]}{query}")
        assert response.status_code == 200, response.text[:300]
        return response.text

    @staticmethod
    def parameters(page: str) -> dict[str, Any]:
        match = re.search(r'data-drill-parameters="([^"]*)"', page)
        assert match, "no drill on the page"
        parameters: dict[str, Any] = json.loads(html.unescape(match.group(1)))
        return parameters

    @staticmethod
    def question_number(page: str) -> int:
        match = re.search(r'data-question="(\d+)"', page)
        assert match
        return int(match.group(1)) - 1

    @staticmethod
    def csrf(page: str) -> str:
        match = re.search(r'name="csrf_token" value="([^"]+)"', page)
        assert match
        return match.group(1)

    def right_answers(self, name: str) -> dict[str, str]:
        return answers_for(name, self.parameters(self.open(name)))

    def answer(self, name: str, answers: dict[str, str], *, htmx: bool = True, csrf: bool = True,
               question: int | None = None) -> Response:
        page = self.open(name)
        form = {"lesson": "drills", "step": str(STEPS[name]), "block": "1",
                "question": str(self.question_number(page) if question is None else question),
                **{f"answer-{k}": v for k, v in answers.items()}}
        if csrf:
            form["csrf_token"] = self.csrf(page)
        return self.client.post(f"/drills/{name}/answer", data=form, headers=HX if htmx else {},
                                follow_redirects=False)

    def next_question(self, name: str) -> Response:
        page = self.open(name)
        form = {"lesson": "drills", "step": str(STEPS[name]), "block": "1",
                "question": str(self.question_number(page)), "csrf_token": self.csrf(page)}
        return self.client.post(f"/drills/{name}/next", data=form, headers=HX)

    def answer_right(self, name: str) -> Response:
        response = self.answer(name, self.right_answers(name))
        assert response.status_code == 200, response.text[:300]
        return response


@pytest.fixture
def drills(drill_client: TestClient) -> DrillLearner:
    return DrillLearner(drill_client)
