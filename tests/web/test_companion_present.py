"""Presenting mode over HTTP: a slide page, the slide alone for htmx, speaker notes, and lessons without slides."""

from __future__ import annotations

import re

from fastapi.testclient import TestClient

HX = {"HX-Request": "true"}
SLIDES = "/lessons/what-is-gpu-infrastructure"


def test_a_slide_page_has_the_counter_the_controls_and_hidden_notes(lessons_client: TestClient) -> None:
    r = lessons_client.get(f"{SLIDES}/7/present")
    assert r.status_code == 200 and "HX-Request" in r.headers["vary"]
    html = r.text
    assert re.search(r"data-slide-counter[^>]*>7 / 23</p>", html)
    assert "data-present-fullscreen" in html and "present.js" in html
    assert re.search(r'<aside id="slide-notes"[^>]* hidden>\s*<p>Thermal', html)
    assert 'data-nav="next" href="/lessons/what-is-gpu-infrastructure/8/present"' in html
    assert 'data-widget="power-energy"' in html


def test_the_arrow_keys_get_only_the_next_slide_with_its_title(lessons_client: TestClient) -> None:
    html = lessons_client.get(f"{SLIDES}/8/present", headers=HX).text
    assert "<html" not in html and html.lstrip().startswith("<title>Bandwidth vs capacity")
    assert re.search(r"data-slide-counter[^>]*>8 / 23</p>", html)
    assert 'hx-target="#slide"' in html and 'hx-push-url="true"' in html


def test_the_first_and_last_slides_have_one_way_to_go(lessons_client: TestClient) -> None:
    first = lessons_client.get(f"{SLIDES}/1/present").text
    last = lessons_client.get(f"{SLIDES}/23/present").text
    assert 'data-nav="prev"' not in first and 'data-nav="next"' in first
    assert 'data-nav="next"' not in last and "End of the slides" in last


def test_the_notes_window_shows_the_notes_and_the_next_slide(lessons_client: TestClient) -> None:
    html = lessons_client.get(f"{SLIDES}/2/notes").text
    assert "Stress that capacity is a wall, not a slope" in html and "Next: Interconnect" in html
    fragment = lessons_client.get(f"{SLIDES}/3/notes", headers=HX).text
    assert "<html" not in fragment and "Data-parallel training ends every step" in fragment


def test_step_pages_of_a_slides_lesson_offer_presenting(lessons_client: TestClient) -> None:
    assert f'href="{SLIDES}/4/present"' in lessons_client.get(f"{SLIDES}/4").text
    assert "/present" not in lessons_client.get("/lessons/understanding-the-work/4").text


def test_a_lesson_not_written_as_slides_cannot_be_presented(lessons_client: TestClient) -> None:
    r = lessons_client.get("/lessons/understanding-the-work/1/present")
    assert r.status_code == 404 and "has no slides" in r.text
    assert lessons_client.get(f"{SLIDES}/24/present").status_code == 404
    assert lessons_client.get(f"{SLIDES}/24/notes").status_code == 404
