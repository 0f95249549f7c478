"""Messages a learner reads say numbers as people write them (issue 13, item 11)."""

from __future__ import annotations

import re

from fastapi.testclient import TestClient

HX = {"HX-Request": "true"}


def test_a_large_bound_is_written_with_thousands_separators(client: TestClient) -> None:
    r = client.get("/widgets/weight-storage?parameters=70&bits=16", headers=HX)
    assert r.status_code == 422
    assert "Must be at least 1,000,000 (any number from 1,000,000 to 10,000,000,000,000)." in r.text
    assert "e+06" not in r.text


def test_a_bound_of_zero_reads_0_not_0_point_0(client: TestClient) -> None:
    r = client.get("/widgets/five-questions?deadline_days=0", headers=HX)
    assert r.status_code == 422
    assert re.search(r'id="w1-deadline_days-error" hx-swap-oob="true">Must be at least 0\.1 \(any number from 0\.1 to '
                     r'3,650\)\.<', r.text)
    r = client.get("/widgets/own-vs-rent?utilisation=-1", headers=HX)
    assert r.status_code == 422
    assert "Must be at least 0 (any number from 0 to 1)." in r.text and "least 0.0" not in r.text


def test_one_minute_left_is_singular(client: TestClient) -> None:
    html = client.get("/lessons/tiny/2").text
    assert "about 1 minute left" in html and "1 minutes" not in html
    assert "about 3 minutes left" in client.get("/lessons/tiny/1").text


def test_the_calculator_accepts_a_count_written_with_commas(client: TestClient) -> None:
    plain = client.get("/widgets/weight-storage?parameters=7000000000&bits=16", headers=HX)
    commas = client.get("/widgets/weight-storage?parameters=7%2C000%2C000%2C000&bits=16", headers=HX)
    assert commas.status_code == 200, commas.text
    assert "14.00 GB" in commas.text and "14.00 GB" in plain.text


def test_the_profiling_step_says_how_to_get_the_command(lessons_client: TestClient) -> None:
    html = lessons_client.get("/lessons/understanding-the-work/6").text
    assert "gpu-classroom profile" in html
    assert "pipx install ." in html and "python -m pip install ." in html
