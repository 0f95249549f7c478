"""Widget updates over a page's WebSocket (app/web/socket.py): each message is answered exactly as the same GET
over HTTP, only widget GETs travel that way, and only a page of this site may open the socket."""

from __future__ import annotations

import json
from typing import Any

import pytest
from fastapi.testclient import TestClient
from starlette.websockets import WebSocketDisconnect

from app.web.socket import MAX_MESSAGE, PATH

ORIGIN = {"origin": "http://testserver"}
HX = {"HX-Request": "true"}
CALC = "/widgets/weight-storage?w=1&lesson=understanding-the-work&step=4&parameters=7e9&bits=8"


def over_socket(ws: Any, url: str, ident: int = 1, headers: dict[str, Any] | None = None) -> tuple[dict[str, Any], str]:
    ws.send_text(json.dumps({"id": ident, "url": url, "headers": HX if headers is None else headers}))
    head, _, body = ws.receive_text().partition("\n")
    return json.loads(head), body


@pytest.mark.parametrize(
    "url",
    [
        CALC,  # a good answer, with its share address and the panel
        CALC.replace("bits=8", "bits=3"),  # a refused field: 422, the message beside it
        "/widgets/roofline?w=1&lesson=what-ai-workloads-need&step=16&batch_size=4&predict=false",
        "/widgets/no-such-widget",  # 404
    ],
)
def test_an_answer_over_the_socket_is_the_same_as_over_http(lessons_client: TestClient, url: str) -> None:
    http = lessons_client.get(url, headers=HX)
    with lessons_client.websocket_connect(PATH, headers=ORIGIN) as ws:
        head, body = over_socket(ws, url, ident=7)
    assert head["id"] == 7
    assert head["status"] == http.status_code
    assert body == http.text
    assert head["headers"].get("x-share-url") == http.headers.get("x-share-url")


def test_the_socket_answers_every_message_in_turn_and_outlives_a_bad_one(lessons_client: TestClient) -> None:
    with lessons_client.websocket_connect(PATH, headers=ORIGIN) as ws:
        head, body = over_socket(ws, "/api/plan", ident=5)
        assert head["id"] == 5 and head["status"] == 400 and "Only the widgets' own GET requests" in body
        ws.send_text("not json")
        head, body = ws.receive_text().partition("\n")[::2]
        assert json.loads(head)["status"] == 400 and "JSON object" in body
        head, body = over_socket(ws, "/widgets/socket")
        assert head["status"] == 400
        head, body = over_socket(ws, "/widgets/weight-storage?" + "x" * MAX_MESSAGE)
        assert head["status"] == 400 and "at most" in body
        head, body = over_socket(ws, CALC, ident=2, headers={"HX-Request": "true", "HX-Trigger": None})
        assert head == {"id": 2, "status": 200, "headers": head["headers"]} and "14.00 GB" not in body
        assert "7.00 GB" in body  # 7e9 parameters at 8 bits


def test_a_message_goes_through_the_same_guard_as_a_request(lessons_client: TestClient) -> None:
    http = lessons_client.get(CALC + "&parameters=7%00", headers=HX)  # the learner's cookie, then the socket
    with lessons_client.websocket_connect(PATH, headers=ORIGIN) as ws:
        head, body = over_socket(ws, CALC + "&parameters=7%00")
    assert head["status"] == http.status_code == 422 and body == http.text


def test_a_page_of_another_site_cannot_open_the_socket(lessons_client: TestClient) -> None:
    for headers in ({"origin": "http://evil.example"}, {}):
        with pytest.raises(WebSocketDisconnect) as refused, lessons_client.websocket_connect(PATH, headers=headers):
            pass
        assert refused.value.code == 1008


def test_a_failure_inside_one_update_is_a_500_answer_and_the_socket_carries_on(
    lessons_client: TestClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    import app.web.widgets as route

    real = route.widget_view

    def broken(*args: Any, **kwargs: Any) -> Any:
        if kwargs.get("step") == 4:
            raise RuntimeError("a bug in one widget")
        return real(*args, **kwargs)

    monkeypatch.setattr(route, "widget_view", broken)
    with lessons_client.websocket_connect(PATH, headers=ORIGIN) as ws:
        head, body = over_socket(ws, CALC)
        assert head["status"] == 500 and "Traceback" not in body and "a bug in one widget" not in body
        head, body = over_socket(ws, "/widgets/roofline?w=1&lesson=what-ai-workloads-need&step=16&predict=false")
        assert head["status"] == 200 and "FLOPs per byte" in body
