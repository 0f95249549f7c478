"""A class run all term (issue 28) on PostgreSQL: the new tables (instructors, class_flag_marks) and columns in use,
and the migration down and up again."""

from __future__ import annotations

import pytest
from alembic import command

from app.classroom.db import alembic_config, upgrade
from tests.postgres.pg import fresh_database
from tests.unit.classroom import term_scenarios as sc
from tests.unit.classroom.classroom_helpers import run

pytestmark = pytest.mark.postgres


def test_resume_merge_flags_lists_reopen_copy_and_active_time_on_postgresql() -> None:
    with fresh_database() as url:
        upgrade(url)
        resumed = run(url, sc.resume_on_a_new_device)
        roster = run(url, sc.roster_changes)
        flags = run(url, sc.flags_an_instructor_can_trust)
        lists = run(url, sc.instructor_lists)
        reopened = run(url, sc.reopen_and_copy)
        pacing = run(url, sc.pacing_that_ends)
        times = run(url, sc.time_counts_only_while_active)
        exports = run(url, sc.gradebook_exports)
    assert resumed["back"] == (True, True, True, 2) and resumed["wrong"] == ("resume", 403)
    assert set(roster["rows"]) == {"Cy", "Bo B"} and roster["eve_answers"] == 0 and roster["taken"] == ("name", 409)
    assert flags["marked"] == {} and flags["outcomes"] == {"wrong:3:bytes-per-parameter": "helped",
                                                          "idle": "dismissed"}
    assert lists["moved"] == 1 and lists["old_key"] is None
    assert reopened["copy"] == ("tiny-class", 9, "hold", 2, 0, True, True)
    assert pacing.cells["Dee"] == ["passed", "passed", "passed", "current"]
    assert times[1] == pytest.approx(times[0], abs=2)  # 2 s: the test's own run time
    assert exports["learners"]["bytes-per-parameter@3_first_try_pct"] == "50"


def test_the_room_message_timer_bring_and_hold_landing_and_answer_on_the_projector_on_postgresql() -> None:
    """The columns the SQLite scenarios of tests/unit/classroom/test_term.py exercise, here on PostgreSQL: the message,
    the drill timer, a bring that holds, where a late joiner lands, passed steps, the projector's bring count and the
    answer it shows."""
    with fresh_database() as url:
        upgrade(url)
        room = run(url, sc.room_messages_and_timers)
        held = run(url, sc.bring_and_hold_in_one)
        landed = run(url, sc.late_joiners_land_where_the_class_is)
        report = run(url, sc.active_time_and_passed_steps_in_the_report)
        bring = run(url, sc.the_projector_counts_a_bring)
        shown = run(url, sc.the_answer_on_the_projector)
    assert room == sc.ROOM_MESSAGES and held == sc.BRING_AND_HOLD and landed == sc.LANDINGS
    assert report == sc.PASSED_IN_THE_REPORT
    assert bring == sc.PROJECTOR_BRING
    assert shown["latest"] == 1 and shown["seen"] == sc.ANSWER_SHOWN and shown["listed"] == sc.ANSWER_LISTED


def test_the_term_migration_goes_down_and_up_again_on_postgresql() -> None:
    with fresh_database() as url:
        upgrade(url)
        command.downgrade(alembic_config(url), "0007_member_changes")
        upgrade(url)
        assert run(url, sc.instructor_lists)["listed"] == ["Tuesday", "Monday"]
