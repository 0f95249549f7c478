"""A class an instructor can run all term (issue 28), on SQLite: resuming on a new device, the roster, pacing that
ends, flags to trust, active time, grade-ready exports, the instructor's list, reopen and copy, messages."""

from __future__ import annotations

import pytest

from tests.unit.classroom import term_scenarios as sc
from tests.unit.classroom.classroom_helpers import run


def test_a_learner_on_a_new_device_takes_their_seat_back_with_their_resume_code(url: str) -> None:
    out = run(url, sc.resume_on_a_new_device)
    field, status, message = out["taken"]
    assert (field, status) == ("name", 409) and "resume code" in message  # the way back is named where it fails
    assert out["wrong"] == ("resume", 403)
    assert out["back"] == (True, True, True, 2)  # Cy's own row, learner and step
    assert out["replaced"] and out["old_code"] == "resume"


def test_guessing_resume_codes_meets_the_wrong_code_limit(url: str) -> None:
    assert run(url, sc.wrong_resume_codes_are_limited) == 10


def test_a_bring_ends_for_each_learner_once_they_reach_its_step_and_a_late_joiner_has_no_hole(url: str) -> None:
    p = run(url, sc.pacing_that_ends)
    assert p.banners == [(True, False), (False, False), (False, False)]  # asked; there; gone on, not asked again
    assert p.landing == [4]  # Ada, the class, reached step 3 and went on to 4: Dee lands with her
    assert p.cells["Dee"] == ["passed", "passed", "passed", "current"]
    assert p.cells["Ada"][:2] == ["passed", "passed"]  # moved from 1 to 3 by the bring: passed, not holes
    assert p.counts.reached == 2


def test_a_late_joiner_lands_where_the_class_is(url: str) -> None:
    assert run(url, sc.late_joiners_land_where_the_class_is) == sc.LANDINGS


def test_bring_and_hold_is_one_action(url: str) -> None:
    assert run(url, sc.bring_and_hold_in_one) == sc.BRING_AND_HOLD


def test_merge_rename_and_remove_show_on_the_board_and_in_the_exports(url: str) -> None:
    out = run(url, sc.roster_changes)
    assert set(out["rows"]) == {"Cy", "Bo B"}
    cells, answers = out["rows"]["Cy"]
    assert cells[:3] == ["done", "seen", "current"] and answers == 1  # both devices' steps and the answer
    assert out["csv"]["Cy"]["steps_done"] == "1" and float(out["csv"]["Cy"]["step_1_seconds"]) > 50
    assert out["attempts"] == [("Cy", "8")]
    assert out["eve_answers"] == 0  # removed with the answers she gave in the class
    assert out["taken"] == ("name", 409)


def test_flags_hide_when_marked_until_new_evidence_and_learners_who_left_are_not_flagged(url: str) -> None:
    out = run(url, sc.flags_an_instructor_can_trust)
    assert out["first"] == {"Ada": ["wrong:3:bytes-per-parameter"], "Bo": ["idle"]}
    assert out["left"] and out["counts"].left == 1 and out["counts"].active == 1 and out["counts"].stuck == 2
    assert out["marked"] == {}
    assert "wrong:3:bytes-per-parameter" in out["again"]["Ada"] and out["again"]["Bo"] == ["idle"]
    assert out["outcomes"] == {"wrong:3:bytes-per-parameter": "helped", "idle": "dismissed"}


def test_the_exports_carry_mastery_first_tries_rounded_scores_and_one_based_questions(url: str) -> None:
    out = run(url, sc.gradebook_exports)
    row = out["learners"]
    assert row["bytes-per-parameter@3_attempts"] == "3" and row["bytes-per-parameter@3_correct"] == "2"
    assert row["bytes-per-parameter@3_first_try_pct"] == "50"  # question 1 wrong first, question 2 right first
    assert row["bytes-per-parameter@3_best_score_pct"] == "100" and row["bytes-per-parameter@3_mastered"] == "no"
    assert row["finished"] == "no" and row["steps_passed"] == "0"
    rows = out["attempts"]
    assert [r["question"] for r in rows] == ["1", "1", "1", "1", "2", "2"]
    assert [(r["part"], r["mistake"]) for r in rows[:2]] == [("a", ""), ("b", "weights-only")]
    assert [r["value"] for r in rows[:2]] == ["16.0", "2.0"] and rows[0]["score_pct"] == "50"


def test_a_step_passed_with_the_class_counts_neither_done_nor_against_the_learner(url: str) -> None:
    assert run(url, sc.active_time_and_passed_steps_in_the_report) == sc.PASSED_IN_THE_REPORT


def test_an_instructor_key_lists_its_classes_and_a_replaced_key_opens_nothing(url: str) -> None:
    out = run(url, sc.instructor_lists)
    assert out["listed"] == ["Tuesday", "Monday"] and out["found"]
    assert out["moved"] == 1 and sorted(out["merged"]) == ["Monday", "Theirs", "Tuesday"]
    assert out["old_key"] is None and out["new_key"]


def test_a_closed_class_reopens_and_a_copy_keeps_lesson_settings_and_pacing_without_learners(url: str) -> None:
    out = run(url, sc.reopen_and_copy)
    assert out["open"] and out["ends"] and out["recorded"]
    assert out["refused"] == ("reopen", 409)  # an open class has nothing to reopen
    assert out["copy"] == ("tiny-class", 9, "hold", 2, 0, True, True)


def test_the_projector_counts_the_active_learners_on_or_past_a_brings_step(url: str) -> None:
    assert run(url, sc.the_projector_counts_a_bring) == sc.PROJECTOR_BRING  # Cy, quiet, never counted


def test_the_answer_on_the_projector_pins_one_question_and_goes_with_its_reveal(url: str) -> None:
    out = run(url, sc.the_answer_on_the_projector)
    assert out["latest"] == 1 and out["seen"] == sc.ANSWER_SHOWN  # the helper's answers carry seed 1
    assert out["listed"] == sc.ANSWER_LISTED


def test_a_message_reaches_every_banner_until_cleared_and_bad_input_is_refused_beside_its_field(url: str) -> None:
    assert run(url, sc.room_messages_and_timers) == sc.ROOM_MESSAGES


def test_time_on_task_counts_only_gaps_shorter_than_the_idle_minutes(url: str) -> None:
    two, thirty, widget = run(url, sc.time_counts_only_while_active)
    assert two == pytest.approx(120, abs=2)  # 2 s tolerance for the test's own run time
    assert thirty == pytest.approx(120, abs=2)  # the half hour away added nothing
    assert widget == pytest.approx(360, abs=3)
