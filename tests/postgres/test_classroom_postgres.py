"""Classes on PostgreSQL: the migrations, the services, and two server processes sharing one class."""

from __future__ import annotations

import csv
import io
import re
import uuid
from pathlib import Path

import httpx
import pytest
from sqlalchemy import event

from app.classroom import classes, dashboard, export
from app.classroom.db import Database, upgrade
from tests.e2e.conftest import start_server, stop_server
from tests.postgres.pg import fresh_database
from tests.unit.classroom.classroom_helpers import (
    answer,
    finish_step,
    join,
    new_class,
    open_step,
    reload,
    rewind,
    run,
)

pytestmark = pytest.mark.postgres
ROOT = Path(__file__).resolve().parents[2]


def test_migrations_and_class_services_run_on_postgresql() -> None:
    with fresh_database() as url:
        upgrade(url)
        upgrade(url)  # a second run is a no-op

        async def scenario(db: Database) -> tuple[dashboard.Dashboard, int, str]:
            klass, _ = await new_class(db)
            ada = await join(db, klass, "Ada")
            await open_step(db, ada, 1)
            await rewind(db, ada, 75)
            await finish_step(db, ada, 1)
            await open_step(db, ada, 2)
            for typed in ("1", "2", "3"):
                await answer(db, ada.learner_id, typed, False)
            await classes.set_pace(db, klass, "hold", 2, False, 4)
            klass = await reload(db, klass)
            statements: list[str] = []
            event.listen(db.engine.sync_engine, "before_cursor_execute", lambda *a: statements.append(a[2]))
            board = await dashboard.build_dashboard(db, klass)
            selects = len([s for s in statements if s.lstrip().upper().startswith("SELECT")])
            text = await export.export(db, klass, "learners")
            await classes.delete_class(db, klass)
            assert await classes.get_class(db, klass.code) is None
            return board, selects, text

        board, selects, text = run(url, scenario)
    row = board.rows[0]
    assert row.cells[:2] == ["done", "current"]
    assert row.reasons == ["3 wrong answers on the drill of step 3, the latest too"]
    assert board.info.pace_mode == "hold" and selects == 6  # the wrong answers come with the attempts; the marks
    exported = next(csv.DictReader(io.StringIO(text)))
    # a few seconds of wall clock pass between the two requests
    assert exported["name"] == "Ada" and float(exported["step_1_seconds"]) == pytest.approx(75, abs=3)


def _csrf(html: str) -> str:
    match = re.search(r'name="csrf_token" value="([^"]+)"', html)
    assert match
    return match.group(1)


def test_learners_joining_through_one_process_show_on_the_dashboard_of_another(tmp_path: Path) -> None:
    with fresh_database() as url:
        a_dir, b_dir = tmp_path / "a" / "data", tmp_path / "b" / "data"
        a_dir.mkdir(parents=True)
        b_dir.mkdir(parents=True)
        a = start_server(a_dir, DATABASE_URL=url)
        b = start_server(b_dir, DATABASE_URL=url)  # after A migrated: B finds the schema up to date
        try:
            with httpx.Client(base_url=b.url) as teacher:
                token = _csrf(teacher.get("/teach").text)
                made = teacher.post("/teach", data={"csrf_token": token, "title": "Two processes",
                                                    "lesson": "what-ai-workloads-need"}, follow_redirects=True)
                assert made.status_code == 200
                code = re.search(r'data-code="(\w+)"', made.text).group(1)  # type: ignore[union-attr]
                key = re.search(r"key=([\w-]+)", made.text).group(1)  # type: ignore[union-attr]
                names = [f"Learner {uuid.uuid4().hex[:6]}" for _ in range(5)]
                learners = []
                for name in names:
                    pupil = httpx.Client(base_url=a.url)
                    learners.append(pupil)
                    r = pupil.post("/join", data={"csrf_token": _csrf(pupil.get("/join").text), "code": code,
                                                  "name": name})
                    assert r.status_code == 303
                    assert pupil.get(r.headers["location"]).status_code == 200
                board = teacher.get(f"/teach/{code}?key={key}", follow_redirects=True)
                assert board.status_code == 200
                assert all(n in board.text for n in names)
                assert '<strong data-count="joined">5</strong>' in board.text
                token = _csrf(board.text)
                paced = teacher.post(f"/teach/{code}/pace", data={"csrf_token": token, "mode": "hold", "step": "1"})
                assert paced.status_code in (200, 303)
                held = learners[0].get("/lessons/what-ai-workloads-need/3")  # served by A
                assert "held at step 1" in held.text
                for pupil in learners:
                    pupil.close()
        finally:
            stop_server(a)
            stop_server(b)
