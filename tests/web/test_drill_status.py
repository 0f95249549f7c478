"""A drill's counter never runs past its target (issue 27, I3): "4 of 3 right in a row" read as a bug. Once the
streak is met, a drill that also needs a spread says so and counts what mastery still needs."""

from __future__ import annotations

import html
import re

from tests.web.drill_helpers import DrillLearner, drill_client, drills  # noqa: F401 (fixtures)

SPREAD = 8


def _status(page: str) -> str:
    found = re.search(r'class="meta drill-status"[^>]*>(.*?)</p>', page, re.S)
    assert found, "the drill shows where the learner stands"
    return " ".join(html.unescape(re.sub(r"<[^>]*>", "", found.group(1))).split())


def test_the_spot_the_mistake_counter_stops_at_its_target_and_then_counts_what_is_left(drills: DrillLearner) -> None:
    seen_done = False
    for _ in range(80):
        drills.answer_right("spot-the-mistake")
        page = drills.open("spot-the-mistake")
        status = _status(page)
        for done, target in re.findall(r"(\d+) of (\d+)", status):
            assert int(done) <= int(target), status
        if 'data-state="mastered"' in page:
            assert "Mastered: 3 right at the first try in a row, 8 different" in status, status
            break
        streak = int(re.search(r'data-streak="(\d+)"', page).group(1))  # type: ignore[union-attr]
        if streak >= 3:
            seen_done = True
            right = int(re.search(r'data-right="(\d+)"', page).group(1))  # type: ignore[union-attr]
            more = SPREAD - right
            assert f"3 right at the first try in a row: done ({streak} so far)" in status, status
            assert f"{more} more different one{'' if more == 1 else 's'} right at the first try" in status, status
            assert f"{right} of {SPREAD} so far" in status, status
        drills.next_question("spot-the-mistake")
    else:
        raise AssertionError("80 right answers never mastered the drill")
    assert seen_done, "the walk met a streak past its target before mastery"


def test_a_drill_without_a_spread_counts_its_streak_to_mastery(drills: DrillLearner) -> None:
    assert "0 of 3 right at the first try in a row to master it." in _status(drills.open("bytes-per-parameter"))
    drills.answer_right("bytes-per-parameter")
    drills.next_question("bytes-per-parameter")
    assert "1 of 3 right at the first try in a row to master it." in _status(drills.open("bytes-per-parameter"))
