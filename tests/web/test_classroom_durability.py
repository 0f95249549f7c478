"""An answer acknowledged to a learner is on disk: SIGKILL the server mid-burst, restart it, find every one."""

from __future__ import annotations

import json
import re
import threading
from pathlib import Path

import httpx
import pytest

from tests.e2e.conftest import start_server, stop_server

pytestmark = pytest.mark.slow
DRILL_STEP = "/lessons/what-ai-workloads-need/7"
LEARNERS = 8
ANSWERS_EACH = 18  # under the drills' limit of 20 answers a minute per learner


def _csrf(html: str) -> str:
    match = re.search(r'name="csrf_token" value="([^"]+)"', html)
    assert match
    return match.group(1)


def _drill_form(html: str) -> tuple[str, dict[str, str], list[str]]:
    """The first drill form of a step: its action, hidden fields and answer field names."""
    form = re.search(r'<form class="widget-form drill-form" method="post" action="([^"]+)".*?</form>', html, re.S)
    assert form, "the step has no drill form"
    hidden = dict(re.findall(r'<input type="hidden" name="([^"]+)" value="([^"]*)"', form.group(0)))
    parts = re.findall(r'name="(answer-[^"]+)"', form.group(0))
    return form.group(1), hidden, parts


def _burst(url: str, code: str, who: int, acked: list[str], stop: threading.Event) -> None:
    """One learner joins, then answers as fast as the server acknowledges; notes every acknowledged answer."""
    with httpx.Client(base_url=url, timeout=10) as c:
        try:
            c.post("/join", data={"csrf_token": _csrf(c.get("/join").text), "code": code, "name": f"Learner {who}"})
            action, hidden, parts = _drill_form(c.get(DRILL_STEP).text)
            for n in range(ANSWERS_EACH):
                if stop.is_set():
                    return
                mark = f"{who * 1000 + n + 100}"  # a wrong, unique answer: the question stays, the text names it
                r = c.post(action, data={**hidden, **{p: mark for p in parts}}, follow_redirects=False)
                if r.status_code == 303:
                    acked.append(mark)
        except httpx.HTTPError:
            return  # the server died under this request: it was never acknowledged


def test_every_acknowledged_answer_survives_a_sigkill(tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    server = start_server(data)
    with httpx.Client(base_url=server.url) as teacher:
        made = teacher.post("/teach", data={"csrf_token": _csrf(teacher.get("/teach").text), "title": "Durable",
                                            "lesson": "what-ai-workloads-need"}, follow_redirects=True)
        code = re.search(r'data-code="(\w+)"', made.text).group(1)  # type: ignore[union-attr]
        key = re.search(r"key=([\w-]+)", made.text).group(1)  # type: ignore[union-attr]
    acked: list[str] = []
    stop = threading.Event()
    threads = [threading.Thread(target=_burst, args=(server.url, code, i, acked, stop)) for i in range(LEARNERS)]
    for t in threads:
        t.start()
    deadline = threading.Event()
    while len(acked) < LEARNERS * ANSWERS_EACH // 3 and any(t.is_alive() for t in threads):
        deadline.wait(0.01)  # polling a counter, not timing the server
    server.process.kill()  # SIGKILL: no shutdown, no flush
    server.process.wait()
    stop.set()
    for t in threads:
        t.join()
    killed_at = len(acked)
    assert 0 < killed_at < LEARNERS * ANSWERS_EACH, "the kill must land in the middle of the burst"

    again = start_server(data)
    try:
        with httpx.Client(base_url=again.url) as teacher:
            export = teacher.get(f"/teach/{code}/export/class.json?key={key}", follow_redirects=True)
            assert export.status_code == 200
            stored = {a["answers"][p] for learner in json.loads(export.text)["learners"]
                      for a in learner["attempts"] for p in a["answers"]}
    finally:
        stop_server(again)
    missing = [m for m in acked if m not in stored]
    assert missing == [], f"{len(missing)} of {len(acked)} acknowledged answers were lost"
