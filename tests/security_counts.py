"""Print the counts behind docs/security.md: for each defence, the checks tried and held (tests/tally.py) and the
test cases run and passed, from a run of the tests named below.

    .venv/bin/python -m tests.security_counts            # a Markdown table on stdout (about two minutes)

A test counts a check with `with held("defence"):`; a defence without such checks is counted by its test cases
(each parametrized case and each hypothesis test is one). Nothing is counted by hand.
"""

from __future__ import annotations

import sys
from collections import Counter
from typing import Any

import pytest

from tests import tally

# defence -> the tests behind it (node ids or files, as pytest takes them)
DEFENCES: dict[str, list[str]] = {
    "bodies on every POST route": ["tests/web/test_bodies_every_route.py"],
    "body size and control characters": ["tests/web/test_guard.py::test_a_body_over_the_cap_is_a_413_with_a_sentence_"
                                         "before_it_is_parsed", "tests/web/test_guard.py::test_a_body_sent_without_a_"
                                         "length_is_cut_off_at_the_cap", "tests/web/test_guard.py::test_control_"
                                         "characters_in_any_text_are_a_422", "tests/web/test_bad_input_catalogue.py"],
    "widget inputs across the float range": ["tests/web/test_widget_params_whole_range.py",
                                             "tests/web/test_widget_domain_fuzz.py"],
    "the /api bodies": ["tests/web/test_api_fuzz.py", "tests/web/test_drills_api_fuzz.py",
                        "tests/web/test_openapi_fuzz.py"],
    "a 500 keeps its headers and its connection": ["tests/web/test_server_errors.py", "tests/web/test_headers.py"],
    "Secure cookies and HSTS": ["tests/web/test_guard.py::test_hsts_only_over_https",
                                "tests/web/test_guard.py::test_an_https_public_url_makes_every_cookie_secure_and_"
                                "sends_hsts", "tests/web/test_guard.py::test_an_http_public_url_leaves_cookies_plain_"
                                "and_sends_no_hsts", "tests/web/test_classroom_security.py::test_cookies_are_httponly_"
                                "and_samesite_lax"],
    "Origin and Host": ["tests/web/test_guard.py::test_a_state_changing_request_from_another_origin_is_refused",
                        "tests/web/test_guard.py::test_without_public_url_a_host_that_names_this_machine_is_its_own_"
                        "origin", "tests/web/test_guard.py::test_without_public_url_a_dns_rebinding_host_cannot_post",
                        "tests/web/test_guard.py::test_with_public_url_only_its_own_origin_posts_whatever_the_host",
                        "tests/web/test_guard.py::test_any_origin_and_host_is_answered_never_a_500",
                        "tests/web/test_guard.py::test_links_and_qr_codes_come_from_public_url_not_the_host_header"],
    "CSRF tokens": ["tests/web/test_classroom_security.py::test_every_state_changing_form_needs_its_csrf_token"],
    "instructor key and learners' own answers": [
        "tests/web/test_classroom_security.py::test_instructor_pages_and_controls_answer_403_without_the_class_key",
        "tests/web/test_classroom_security.py::test_one_class_key_does_not_open_another_class",
        "tests/web/test_classroom_security.py::test_a_learner_sees_only_their_own_progress_and_answers",
        "tests/web/test_classroom_security.py::test_an_instructor_cannot_read_a_learner_of_another_class_through_"
        "their_own_key", "tests/web/test_classroom_security.py::test_the_access_log_never_shows_an_instructors_key",
        "tests/web/test_drills_secrets.py"],
    "escaped user text": [
        "tests/web/test_classroom_security.py::test_a_name_made_of_markup_shows_as_text_in_every_view",
        "tests/web/test_classroom_security.py::test_a_name_that_looks_like_a_formula_cannot_run_in_a_spreadsheet",
        "tests/web/test_classroom_security.py::test_a_class_title_made_of_markup_shows_as_text_on_every_instructor_"
        "and_learner_page"],
    "rate limits": [
        "tests/web/test_classroom_security.py::test_a_burst_of_wrong_codes_gets_429_but_the_right_code_still_gets_in",
        "tests/web/test_classroom_security.py::test_a_prankster_hammering_an_address_never_locks_out_30_learners_on_it",
        "tests/web/test_classroom_security.py::test_one_browser_guessing_codes_does_not_lock_out_a_room_on_the_same_"
        "address", "tests/web/test_classroom_security.py::test_an_address_that_rotates_browsers_is_still_stopped",
        "tests/web/test_classroom_security.py::test_creating_classes_is_rate_limited_too",
        "tests/web/test_classroom_security.py::test_admin_token_guesses_never_lock_out_the_real_instructor"],
    "streams yield, are capped and rate-limited": ["tests/web/test_streams.py", "tests/unit/classroom/test_bell.py"],
    "lesson expression budgets": ["tests/unit/lessons/test_expression_budget.py",
                                  "tests/unit/test_cli_lessons.py::test_serve_starts_with_a_lesson_over_budget_left_"
                                  "out_and_says_where", "tests/unit/test_cli_lessons.py::test_check_reports_every_"
                                  "probe_at_its_line_and_returns", "tests/unit/test_cli_lessons.py::test_author_mode_"
                                  "shows_a_saved_probe_stays_idle_and_stops_on_sigterm", "tests/unit/test_cli_"
                                  "lessons.py::test_author_mode_started_on_a_probe_answers_and_stops_on_sigterm"],
}


class Outcomes:
    """A pytest plugin that keeps each test case's outcome by node id."""

    def __init__(self) -> None:
        self.passed: dict[str, bool] = {}

    def pytest_runtest_logreport(self, report: Any) -> None:
        if report.when == "call" or (report.when == "setup" and not report.passed):
            self.passed[report.nodeid] = report.passed and self.passed.get(report.nodeid, True)
        elif report.when == "teardown" and not report.passed:
            self.passed[report.nodeid] = False


def cases_of(targets: list[str], outcomes: dict[str, bool]) -> tuple[int, int]:
    """Test cases run and passed among these targets."""
    mine = {n: ok for n, ok in outcomes.items() if any(n == t or n.startswith((t + "[", t + "::")) for t in targets)}
    return len(mine), sum(mine.values())


def main(argv: list[str]) -> int:
    targets = sorted({t for ts in DEFENCES.values() for t in ts})
    outcomes = Outcomes()
    code = pytest.main(["-q", "-p", "no:randomly", "--no-header", "-o", "console_output_style=classic", *argv,
                        *targets], plugins=[outcomes])
    print("\n| defence | checks tried | checks held | test cases run | passed |")
    print("| --- | ---: | ---: | ---: | ---: |")
    tried, held = Counter(tally.TRIED), Counter(tally.HELD)
    for defence, tests in DEFENCES.items():
        run, passed = cases_of(tests, outcomes.passed)
        print(f"| {defence} | {tried[defence] or '–'} | {held[defence] or '–'} | {run} | {passed} |")
    unknown = set(tried) - set(DEFENCES)
    if unknown:
        print(f"checks counted under no defence listed here: {sorted(unknown)}", file=sys.stderr)
        return 1
    return int(code)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
