"""Widget updates over the page's WebSocket in real Chromium (static/app.js, app/web/socket.py): an edit's
answer comes over the socket, not as a new HTTP request; with the socket refused, or silent, the same answer
comes over HTTP and the learner sees the same result."""

from __future__ import annotations

import pytest
from playwright.sync_api import Page, WebSocketRoute, expect

from tests.e2e.conftest import Server, Watched, widget_answer

pytestmark = pytest.mark.e2e
CALC = "/lessons/understanding-the-work/4"  # the weight-storage calculator


def edit_parameters(page: Page, value: str) -> tuple[list[str], bool]:
    """Type a parameter count; the HTTP requests for widgets it made, and whether its answer came by socket."""
    sent: list[str] = []
    page.on("request", lambda r: sent.append(r.url) if "/widgets/" in r.url else None)
    calc = page.locator("#w1")
    with widget_answer(page, lambda url: "/widgets/weight-storage" in url and "parameters=70e9" in url) as got:
        calc.get_by_label("Parameters", exact=True).fill(value)
    expect(calc.locator("#w1-result")).to_contain_text("140.00 GB")
    return sent, got.socket


def test_an_edit_travels_over_the_page_socket(watched: Watched, server: Server) -> None:
    page = watched.page
    frames: list[str] = []
    page.on("websocket", lambda ws: ws.on("framesent", lambda payload: frames.append(str(payload))))
    page.goto(server.url + CALC)
    page.wait_for_function("() => document.readyState === 'complete'")
    page.wait_for_timeout(300)  # the socket opens after the page
    sent, by_socket = edit_parameters(page, "70e9")
    assert by_socket and sent == []
    assert any("/widgets/weight-storage?" in frame and "parameters=70e9" in frame for frame in frames)
    watched.assert_clean()


def test_with_the_socket_refused_the_edit_goes_over_http(watched: Watched, server: Server) -> None:
    page = watched.page
    page.route_web_socket("**/widgets/socket", lambda ws: ws.close(code=1008))
    page.goto(server.url + CALC)
    page.wait_for_timeout(300)
    sent, by_socket = edit_parameters(page, "70e9")
    assert not by_socket and any("parameters=70e9" in url for url in sent)


def test_with_the_socket_silent_the_edit_goes_over_http_after_a_wait(watched: Watched, server: Server) -> None:
    page = watched.page
    heard: list[str] = []

    def silent(ws: WebSocketRoute) -> None:  # accepts every message, answers none
        ws.on_message(lambda message: heard.append(str(message)))

    page.route_web_socket("**/widgets/socket", silent)
    page.goto(server.url + CALC)
    page.wait_for_timeout(300)
    sent, by_socket = edit_parameters(page, "70e9")
    assert heard and not by_socket and any("parameters=70e9" in url for url in sent)
    watched.assert_clean()
