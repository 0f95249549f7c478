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
        r'<input type="hidden" name="(started_at|elapsed|run_of)" value="([^"]*)">', html))  # fmt: skip


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
    after = lessons_client.get(f"{url}&{state(before)}&loader_samples_per_second=20", headers=HX).text
    assert 'data-status="running"' in after
    assert float(value(after, "progress").rstrip(" %")) >= progress  # not back to 0 %
    assert "No loss yet" not in after and "Loss fell from" in after  # the loss curve stays
    reset = lessons_client.get(f"{url}&{state(after)}&loader_samples_per_second=20&action=reset", headers=HX).text
    assert 'data-status="ready"' in reset  # Reset still starts again


def test_step_8_raising_the_arrival_rate_keeps_the_simulated_time(lessons_client: TestClient, clock: Clock) -> None:
    url = "/widgets/serving-run?play_seconds=60" + ENVELOPE + "&step=8"
    started = lessons_client.get(url + "&action=start", headers=HX).text
    clock.now += 6  # 30 simulated seconds
    before = lessons_client.get(f"{url}&{state(started)}", headers=HX).text
    assert value(before, "elapsed").startswith("30")
    after = lessons_client.get(f"{url}&{state(before)}&arrival_rate=4", headers=HX).text
    assert value(after, "elapsed").startswith("30") and "4.0 requests/s" in after


def test_without_javascript_a_running_run_offers_a_refresh_link(lessons_client: TestClient, clock: Clock) -> None:
    page = lessons_client.get("/lessons/what-ai-workloads-need/5?w1.action=start").text
    link = re.search(r'<a [^>]*href="([^"]+)"[^>]*data-refresh', page)
    assert link, "no refresh link"
    assert "started_at=1000000" in link.group(1) and "action=start" not in link.group(1)
    clock.now += 4
    later = lessons_client.get(link.group(1).replace("&amp;", "&")).text
    assert 'data-status="running"' in later and value(later, "progress") != "0 %"
