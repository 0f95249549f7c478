"""Live runs continue across changes (issue 13, item 3): a setting changed while a run plays continues it from
where it is with the new settings; only Reset starts again; without JavaScript a running run offers a refresh link."""

from __future__ import annotations

import re

from fastapi.testclient import TestClient

from tests.web.live_clock import Clock, clock_fixture

__all__ = ["clock_fixture"]

HX = {"HX-Request": "true"}
ENVELOPE = "&w=1&lesson=what-ai-workloads-need"


def state(html: str) -> str:
    return "&".join(f"{k}={v}" for k, v in re.findall(
        r'<input type="hidden" name="(started_at|elapsed|run_of|segments)" value="([^"]*)">', html))


def value(html: str, key: str) -> str:
    found = re.search(rf'data-value="{key}">([^<]*)<', html)
    assert found, f"no {key} in the result"
    return found.group(1)


def test_step_5_turning_the_loader_down_keeps_the_progress_and_the_loss_curve(
    lessons_client: TestClient, clock: Clock
) -> None:
    url = "/widgets/training-run?play_seconds=20" + ENVELOPE + "&step=5"
    started = lessons_client.get(url + "&action=start", headers=HX).text
    clock.now += 4  # a fifth of the way
    before = lessons_client.get(f"{url}&{state(started)}", headers=HX).text
    progress = float(value(before, "progress").rstrip(" %"))
    assert progress > 5
    clock.now += 0.5
    after = lessons_client.get(f"{url}&{state(before)}&loader_samples_per_second=4", headers=HX).text
    assert 'data-status="running"' in after
    assert float(value(after, "progress").rstrip(" %")) >= progress  # not back to 0 %
    assert "No loss yet" not in after and "Loss fell from" in after  # the loss curve stays
    reset = lessons_client.get(f"{url}&{state(after)}&loader_samples_per_second=4&action=reset", headers=HX).text
    assert 'data-status="ready"' in reset  # Reset still starts again


def test_step_8_raising_the_arrival_rate_keeps_the_simulated_time(lessons_client: TestClient, clock: Clock) -> None:
    url = "/widgets/serving-run?play_seconds=60" + ENVELOPE + "&step=8"
    started = lessons_client.get(url + "&action=start", headers=HX).text
    clock.now += 6  # 30 simulated seconds
    before = lessons_client.get(f"{url}&{state(started)}", headers=HX).text
    assert value(before, "elapsed").startswith("30")
    after = lessons_client.get(f"{url}&{state(before)}&arrival_rate=4", headers=HX).text
    assert value(after, "elapsed").startswith("30") and "4.0 requests/s" in after


def hidden(html: str, name: str) -> str:
    found = re.search(rf'<input type="hidden" name="{name}" value="([^"]*)">', html)
    assert found, f"no {name} field"
    return found.group(1)


def loss_points(html: str) -> list[str]:
    found = re.search(r'<polyline class="series loss" points="([^"]*)"', html)
    assert found, "no loss curve"
    return found.group(1).split()


def test_step_5_the_loader_turned_down_continues_from_the_same_progress_tokens_and_curve(
    lessons_client: TestClient, clock: Clock
) -> None:
    url = "/widgets/training-run?play_seconds=20" + ENVELOPE + "&step=5"
    started = lessons_client.get(url + "&action=start", headers=HX).text
    clock.now += 6  # 30 % of the way
    before = lessons_client.get(f"{url}&{state(started)}", headers=HX).text
    after = lessons_client.get(f"{url}&{state(before)}&loader_samples_per_second=4", headers=HX).text
    for key in ("progress", "tokens-done", "checkpoints"):
        assert value(after, key) == value(before, key), key  # the same moment, not redrawn as if always slow
    so_far, total = value(after, "elapsed").split(" of ")
    was_so_far, was_total = value(before, "elapsed").split(" of ")
    assert so_far == was_so_far  # the same moment
    assert _hours(total) > 1.5 * _hours(was_total)  # the ETA slides: the rest of the run is loader-bound
    assert 'data-starved="true"' in after and hidden(after, "segments").count("-") == 1
    curve = loss_points(before)[:-1]  # the last point is "now"
    assert loss_points(after)[: len(curve)] == curve
    clock.now += 2
    later = lessons_client.get(f"{url}&{state(after)}&loader_samples_per_second=4", headers=HX).text
    assert float(value(later, "progress").rstrip(" %")) >= float(value(after, "progress").rstrip(" %"))
    assert loss_points(later)[: len(curve)] == curve and value(later, "tokens-per-second") == "32,768"
    reset = lessons_client.get(f"{url}&{state(later)}&loader_samples_per_second=4&action=reset", headers=HX).text
    assert 'data-status="ready"' in reset and hidden(reset, "segments") == ""  # Reset clears the run's past


def _hours(text: str) -> float:
    """'4.81 hours' or '86.6 minutes' in hours."""
    number, unit = text.split()
    return float(number.replace(",", "")) * {"minutes": 1 / 60, "hours": 1.0, "days": 24.0}[unit]

def bars(html: str) -> list[str]:
    found = re.search(r'<path class="bar-arrivals" d="([^"]*)"', html)
    assert found, "no arrival bars"
    return found.group(1).split("Z")


def test_step_8_a_higher_arrival_rate_keeps_the_bars_already_drawn(lessons_client: TestClient, clock: Clock) -> None:
    url = "/widgets/serving-run?play_seconds=60" + ENVELOPE + "&step=8"
    started = lessons_client.get(url + "&action=start", headers=HX).text
    clock.now += 6  # 30 simulated seconds at 1 request a second
    before = lessons_client.get(f"{url}&{state(started)}", headers=HX).text
    now = lessons_client.get(f"{url}&{state(before)}&arrival_rate=6", headers=HX).text
    assert value(now, "queue") == value(before, "queue") and value(now, "elapsed") == value(before, "elapsed")
    clock.now += 2  # 10 more simulated seconds at 6 a second (the chart's scale stays: the server finishes more)
    after = lessons_client.get(f"{url}&{state(now)}&arrival_rate=6", headers=HX).text
    past = bars(before)[:-1]
    assert bars(after)[: len(past)] == past  # the 30 seconds before the change, bar for bar
    assert len(bars(after)) == len(past) + 10 + 1 and "6.0 requests/s" in after


def test_a_malformed_segments_value_is_refused_like_any_field(lessons_client: TestClient, clock: Clock) -> None:
    url = "/widgets/training-run?play_seconds=20" + ENVELOPE + "&step=5"
    for bad in ("1_2", "0_0_1_0_0_9_1000000000_64", "x" * 2000, "0_0_1_0_0_0.4_1e9_64"):
        r = lessons_client.get(f"{url}&segments={bad}", headers=HX)
        assert r.status_code == 422 and 'id="w1-segments-error" hx-swap-oob="true">' in r.text


def test_without_javascript_a_running_run_offers_a_refresh_link(lessons_client: TestClient, clock: Clock) -> None:
    page = lessons_client.get("/lessons/what-ai-workloads-need/5?w1.action=start").text
    link = re.search(r'<a [^>]*href="([^"]+)"[^>]*data-refresh', page)
    assert link, "no refresh link"
    assert "started_at=1000000" in link.group(1) and "action=start" not in link.group(1)
    clock.now += 4
    later = lessons_client.get(link.group(1).replace("&amp;", "&")).text
    assert 'data-status="running"' in later and value(later, "progress") != "0 %"


def test_after_a_change_the_work_paragraph_says_what_the_run_takes_as_played(
    lessons_client: TestClient, clock: Clock
) -> None:
    """The paragraph that works the run out from the settings would contradict the ETA after a change (the run was
    faster before it): it says which run it describes, and gives the total as played, the same as the ETA's."""
    url = "/widgets/training-run?play_seconds=20" + ENVELOPE + "&step=5"
    started = lessons_client.get(url + "&action=start", headers=HX).text
    assert "Had these settings held" not in started and "as played" not in started
    clock.now += 4
    before = lessons_client.get(f"{url}&{state(started)}", headers=HX).text
    clock.now += 0.5
    after = lessons_client.get(f"{url}&{state(before)}&loader_samples_per_second=4", headers=HX).text
    assert "Had these settings held from the start" in after
    total = re.search(r"as played it takes ([^<]+?) in all\.", after)
    assert total, "no total as played"
    assert value(after, "elapsed").endswith(f" of {total.group(1)}")  # the same total as "Simulated time so far"
