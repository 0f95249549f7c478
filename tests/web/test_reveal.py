"""Reveal blocks: the prose that gives a prediction away opens only once the learner has guessed."""

from __future__ import annotations

from fastapi.testclient import TestClient

from tests.web.test_widget_plan_predict import FLAGSHIP, guess

ANSWER = "The plan&#39;s answer is"


def test_the_explanation_waits_for_the_guess(lessons_client: TestClient) -> None:
    page = lessons_client.get(f"{FLAGSHIP}/1").text
    assert "Guess first." in page and 'data-revealed="false"' in page
    assert "The plan's answer is" not in page and ANSWER not in page


def test_a_committed_guess_opens_the_explanation_with_the_engines_numbers(lessons_client: TestClient) -> None:
    guess(lessons_client, 1, 2, "20")
    page = lessons_client.get(f"{FLAGSHIP}/1").text
    assert 'data-revealed="true"' in page and "Guess first." not in page
    assert "answer is 19.0 GB" in page  # the inline expression inside the reveal block was evaluated


def test_with_htmx_the_explanation_arrives_out_of_band_with_the_widget(lessons_client: TestClient) -> None:
    response = guess(lessons_client, 15, 1, "200", htmx=True)
    assert response.status_code == 200
    assert 'hx-swap-oob="true" data-revealed="true"' in response.text
    assert "Think about what one decode step does" in response.text


def test_a_refused_guess_keeps_the_explanation_closed(lessons_client: TestClient) -> None:
    response = guess(lessons_client, 15, 1, "lots", htmx=True)
    assert response.status_code == 422 and "Think about what one decode step does" not in response.text
