"""Pages as a learner meets them: home, overview, steps, progress, and friendly errors."""

from __future__ import annotations

import re

from fastapi.testclient import TestClient

from tests.conftest import Learner


def test_home_lists_each_lesson_with_minutes_and_progress(client: TestClient) -> None:
    html = client.get("/").text
    assert "A tiny lesson" in html
    assert "About 3 minutes" in html
    assert "0 of 2 done" in html


def test_overview_shows_sections_and_steps(client: TestClient) -> None:
    html = client.get("/lessons/tiny").text
    assert "First section" in html and "Second section" in html
    assert 'href="/lessons/tiny/1"' in html and "The second step" in html


def test_step_page_shows_position_progress_and_navigation(client: TestClient) -> None:
    html = client.get("/lessons/tiny/1").text
    assert "Step 1 of 2" in html
    assert "about 3 minutes left" in html
    assert 'data-nav="next"' in html and 'data-nav="prev"' not in html
    html2 = client.get("/lessons/tiny/2").text
    assert 'data-nav="prev"' in html2 and "Finish lesson" in html2


def test_step_renders_widget_result_on_the_server(client: TestClient) -> None:
    html = client.get("/lessons/tiny/1").text
    assert "14.00 GB" in html and "13.04 GiB" in html
    assert "Weights only." in html
    assert 'id="dgx-panel"' in html and "GPU 7" in html


def test_unknown_lesson_and_step_get_a_friendly_404(client: TestClient) -> None:
    for url in ("/lessons/nope", "/lessons/tiny/3", "/lessons/tiny/0", "/nothing-here"):
        response = client.get(url)
        assert response.status_code == 404, url
        assert "Traceback" not in response.text
        assert "See all lessons" in response.text


def test_step_number_that_is_not_a_number_is_a_4xx_not_a_500(client: TestClient) -> None:
    response = client.get("/lessons/tiny/abc")
    assert response.status_code == 422
    assert "Traceback" not in response.text


def test_finishing_a_step_marks_it_done_and_moves_on(learner: Learner, client: TestClient) -> None:
    assert learner.finish_step("tiny", 1) == "/lessons/tiny/2"
    overview = client.get("/lessons/tiny").text
    assert re.search(r'data-step="1" data-state="done"', overview)
    assert "1 of 2 done" in client.get("/").text


def test_home_offers_to_continue_where_the_learner_left_off(learner: Learner, client: TestClient) -> None:
    assert "Continue where you left off" not in client.get("/").text
    learner.open("/lessons/tiny/2")
    assert 'href="/lessons/tiny/2" data-resume="step">Continue where you left off' in client.get("/").text


def test_home_sends_a_learner_who_finished_to_the_completion_page(learner: Learner, client: TestClient) -> None:
    learner.finish_step("tiny", 1)
    learner.finish_step("tiny", 2)  # the last step: the lesson is finished
    home = client.get("/").text
    assert 'href="/lessons/tiny/complete" data-resume="complete">You finished' in home
    assert "Continue where you left off" not in home


def test_progress_survives_a_new_app_with_the_same_data(settings, tmp_path) -> None:  # type: ignore[no-untyped-def]
    from app.main import create_app

    with TestClient(create_app(settings)) as first:
        Learner(first).finish_step("tiny", 1)
        cookies = dict(first.cookies)
    with TestClient(create_app(settings), cookies=cookies) as second:
        assert "1 of 2 done" in second.get("/").text


def test_marking_done_without_the_csrf_token_is_refused(client: TestClient) -> None:
    client.get("/lessons/tiny/1")
    response = client.post("/lessons/tiny/1/done", data={}, follow_redirects=False)
    assert response.status_code == 403
    assert "0 of 2 done" in client.get("/").text


def test_a_token_from_another_learner_is_refused(client: TestClient, settings) -> None:  # type: ignore[no-untyped-def]
    from app.main import create_app

    with TestClient(create_app(settings)) as other:
        token = Learner(other).csrf(other.get("/lessons/tiny/1").text)
    client.get("/lessons/tiny/1")
    response = client.post("/lessons/tiny/1/done", data={"csrf_token": token}, follow_redirects=False)
    assert response.status_code == 403


def test_learner_cookie_is_signed_httponly_and_lax(client: TestClient) -> None:
    cookie = client.get("/").headers["set-cookie"]
    assert "gc_learner=" in cookie and "HttpOnly" in cookie and "SameSite=lax" in cookie


def test_a_forged_learner_cookie_is_replaced(client: TestClient) -> None:
    client.cookies.set("gc_learner", "forged-value")
    response = client.get("/")
    assert "gc_learner=" in response.headers["set-cookie"]


def test_every_widget_opens_as_one_labelled_region_named_after_it(client: TestClient) -> None:
    """A screen reader announces each widget by its title: one <section> per widget, labelled by its heading, on
    every widget's own page (all of them open with templates/widgets/_macros.html's widget_open)."""
    from app.widgets.catalog import WIDGETS

    for widget in WIDGETS:
        html = client.get(f"/widgets/{widget.name}").text
        opened = re.findall(r'<section class="widget[^"]*" id="(w\d+)" aria-labelledby="(w\d+)-title" '
                            r'data-widget="([a-z-]+)"', html)
        assert [(wid, name) for wid, _, name in opened] == [(opened[0][0], widget.name)], widget.name
        wid = opened[0][0]
        title = re.search(rf'<h2 class="widget-title" id="{wid}-title"[^>]*>([^<]+)</h2>', html)
        assert title and title.group(1).strip(), widget.name
