"""Limits in front of every route: a body cap, short validation errors, no control characters, an Origin check,
HSTS over HTTPS, and links from PUBLIC_URL rather than from the Host header a client sends."""

from __future__ import annotations

import json
import re
import socket
from pathlib import Path
from urllib.parse import parse_qsl

import pytest
from fastapi.testclient import TestClient
from httpx import Response
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from app.main import create_app
from app.settings import Settings
from app.web.guard import BODY_MAX, encoded_has_control, has_control
from tests.conftest import make_settings
from tests.tally import held
from tests.web.classroom_helpers import csrf_of, room_for


def test_a_body_over_the_cap_is_a_413_with_a_sentence_before_it_is_parsed(client: TestClient) -> None:
    huge = json.dumps({f"k{n}": n for n in range(200_000)})  # 2.3 MB of unknown keys
    r = client.post("/api/plan", content=huge, headers={"content-type": "application/json"})
    assert r.status_code == 413 and "larger than the server accepts" in r.json()["detail"]
    assert len(r.content) < 1000
    page = client.post("/join", data={"name": "x" * (BODY_MAX + 1)})
    assert page.status_code == 413 and "larger than the server accepts" in page.text


def test_a_body_sent_without_a_length_is_cut_off_at_the_cap(client: TestClient) -> None:
    def chunks():  # type: ignore[no-untyped-def]
        for _ in range(100):
            yield b"x" * 10_000

    r = client.post("/api/plan", content=chunks(), headers={"content-type": "application/json"})
    assert r.status_code == 413


def test_validation_errors_are_few_and_never_echo_long_input(client: TestClient) -> None:
    many = {f"unknown_{n}": n for n in range(2000)}
    r = client.post("/api/plan", json=many)
    assert r.status_code == 422 and len(r.content) < 5000
    assert "more problems" in r.json()["message"]
    long_name = "m" * 20_000
    r = client.post("/api/plan", json={"model": long_name})
    assert r.status_code == 422 and long_name[:1000] not in r.text and len(r.content) < 5000


def test_control_characters_in_any_text_are_a_422(client: TestClient) -> None:
    token = csrf_of(client.get("/join").text)
    for r in (client.get("/class-banner?lesson=%00"), client.get("/lessons/tiny/1?w1.parameters=7e9%00"),
              client.post("/join", data={"csrf_token": token, "code": "ABC", "name": "a\x00b"}),
              client.post("/api/plan", json={"model": "llama\u0000"})):
        assert r.status_code == 422, (r.request.url, r.status_code)
        assert "control characters" in r.text
    ok = client.post("/join", data={"csrf_token": token, "code": "", "name": "line\r\nbreak\ttab"})
    assert ok.status_code != 422 or "control characters" not in ok.text  # tab, CR and LF are text


def test_a_state_changing_request_from_another_origin_is_refused(settings: Settings) -> None:
    with TestClient(create_app(settings), base_url="http://127.0.0.1:8000") as client:
        token = csrf_of(client.get("/join").text)
        data = {"csrf_token": token, "code": "ZZZZZZ", "name": "x"}
        evil = client.post("/join", data=data, headers={"Origin": "https://evil.example"})
        assert evil.status_code == 403 and "another site" in evil.text
        assert client.post("/join", data=data, headers={"Origin": "null"}).status_code == 403
        other_port = client.post("/join", data=data, headers={"Origin": "http://127.0.0.1:8001"})
        assert other_port.status_code == 403
        same = client.post("/join", data=data, headers={"Origin": "http://127.0.0.1:8000"})
        assert same.status_code == 404  # reached the route: no class has this code
        assert client.post("/join", data=data).status_code == 404  # no Origin (an old browser): the token decides


@pytest.mark.parametrize("host", ["127.0.0.1:8711", "[::1]:8711", "localhost:8711", "192.168.1.20",
                                  "gpu.localhost", socket.gethostname() + ":8000"])
def test_without_public_url_a_host_that_names_this_machine_is_its_own_origin(settings: Settings, host: str) -> None:
    with TestClient(create_app(settings), base_url=f"http://{host}") as client:
        token = csrf_of(client.get("/join").text)
        with held("Origin and Host"):
            r = client.post("/join", data={"csrf_token": token, "code": "ZZZZZZ", "name": "x"},
                            headers={"Origin": f"http://{host}"})
            assert r.status_code == 404  # reached the route


def test_without_public_url_a_dns_rebinding_host_cannot_post(settings: Settings) -> None:
    """A page of evil.example whose name now points at this server (DNS rebinding) sends Host and Origin alike:
    both name evil.example. Without PUBLIC_URL the server takes forms only at a name that is its own
    (reliability review, F7)."""
    with TestClient(create_app(settings), base_url="http://evil.example:8711") as client:
        token = csrf_of(client.get("/join").text)
        for path, data in (("/join", {"csrf_token": token, "code": "ZZZZZZ", "name": "x"}),
                           ("/teach", {"csrf_token": token, "title": "t", "lesson": "tiny"})):
            with held("Origin and Host"):
                r = client.post(path, data=data, headers={"Origin": "http://evil.example:8711"})
                assert r.status_code == 403 and "does not know evil.example:8711 as its own address" in r.text
                assert "GPU_CLASSROOM_PUBLIC_URL" in r.text


def test_with_public_url_only_its_own_origin_posts_whatever_the_host(tmp_path: Path) -> None:
    settings = make_settings(tmp_path, public_url="https://gpu.example.org")
    with TestClient(create_app(settings), base_url="https://evil.example") as client:
        token = csrf_of(client.get("/join").text)
        data = {"csrf_token": token, "code": "ZZZZZZ", "name": "x"}
        for origin, status in (("https://evil.example", 403), ("http://gpu.example.org", 403),
                               ("https://gpu.example.org", 404)):
            with held("Origin and Host"):
                assert client.post("/join", data=data, headers={"Origin": origin}).status_code == status


def test_hsts_only_over_https(tmp_path: Path) -> None:
    with TestClient(create_app(make_settings(tmp_path)), base_url="https://testserver") as https:
        assert https.get("/").headers["strict-transport-security"].startswith("max-age=")
    with TestClient(create_app(make_settings(tmp_path)), base_url="http://testserver") as http:
        assert "strict-transport-security" not in http.get("/").headers


def _set_cookies(r: Response) -> list[str]:
    return r.headers.get_list("set-cookie")


@pytest.mark.parametrize("forwarded", [{}, {"X-Forwarded-Proto": "http"}, {"X-Forwarded-Proto": "https"}])
def test_an_https_public_url_makes_every_cookie_secure_and_sends_hsts(tmp_path: Path, forwarded: dict[str, str]
                                                                      ) -> None:
    """Behind a TLS proxy that says nothing (or the wrong thing) the app sees plain http; an https PUBLIC_URL
    says the site is served only over TLS (reliability review, F8)."""
    settings = make_settings(tmp_path, public_url="https://gpu.example.org")
    for room in room_for(settings):
        client = room.instructor.client
        client.headers.update(forwarded)
        first = client.get("/teach")
        with held("Secure cookies and HSTS"):
            assert first.headers["strict-transport-security"] == "max-age=31536000"
            assert _set_cookies(first) and all("; Secure" in c for c in _set_cookies(first))
        token = csrf_of(first.text)  # the Secure cookie is not sent back over http: a browser would be on https
        client.cookies.set("gc_learner", first.cookies["gc_learner"])
        created = client.post("/teach", data={"csrf_token": token, "title": "t", "lesson": "tiny"},
                              follow_redirects=False)
        with held("Secure cookies and HSTS"):
            assert created.status_code == 303 and created.headers["strict-transport-security"]
            key_cookie = [c for c in _set_cookies(created) if c.startswith("gc_class_key")]
            assert key_cookie and "; Secure" in key_cookie[0] and "HttpOnly" in key_cookie[0]
        for page in ("/healthz", "/api/models", "/nowhere"):
            with held("Secure cookies and HSTS"):
                assert client.get(page).headers["strict-transport-security"] == "max-age=31536000"


def test_an_http_public_url_leaves_cookies_plain_and_sends_no_hsts(tmp_path: Path) -> None:
    with TestClient(create_app(make_settings(tmp_path, public_url="http://gpu.lan:8000")),
                    base_url="http://gpu.lan:8000") as client:
        r = client.get("/")
        with held("Secure cookies and HSTS"):
            assert "strict-transport-security" not in r.headers
            assert _set_cookies(r) and not any("Secure" in c for c in _set_cookies(r))


def test_links_and_qr_codes_come_from_public_url_not_the_host_header(tmp_path: Path) -> None:
    settings = make_settings(tmp_path, public_url="https://gpu.example.org/")
    for room in room_for(settings, base_url="https://testserver"):  # its cookies are Secure: the browser is on https
        created = room.instructor.create()
        assert f'href="https://gpu.example.org/join/{created.code}"' in created.page
        assert all(link.startswith("https://gpu.example.org/") for link in created.links.values())
        spoofed = room.instructor.client.get(f"/teach/{created.code}/projector",
                                             headers={"Host": "evil.example"})
        assert "evil.example" not in spoofed.text and f"https://gpu.example.org/join/{created.code}" in spoofed.text
        token = csrf_of(room.instructor.client.get("/join").text)
        from_public = room.instructor.client.post("/join", data={"csrf_token": token, "code": "ZZZZZZ", "name": "x"},
                                                  headers={"Origin": "https://gpu.example.org"})
        assert from_public.status_code == 404


def test_public_url_must_be_an_address() -> None:
    import pytest
    from pydantic import ValidationError

    from app.settings import Settings

    with pytest.raises(ValidationError, match="PUBLIC_URL"):
        Settings(public_url="gpu.example.org")
    assert re.match(r"^https://", Settings(public_url="https://gpu.example.org/").public_url)


HEADER_TEXT = st.text(alphabet=st.characters(min_codepoint=0x20, max_codepoint=0x7E), max_size=40)
ODD_ORIGINS = ["http://[", "http://[::1", "http://127.0.0.1:99999", "http://x:port", "null", "", "://", "http://",
               "file:///etc/passwd", "http://127.0.0.1:8000/path?q", "HTTP://127.0.0.1:8000"]


@settings(max_examples=60, derandomize=True, deadline=None, database=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(origin=st.one_of(st.sampled_from(ODD_ORIGINS), HEADER_TEXT, HEADER_TEXT.map(lambda t: "http://" + t)),
       host=st.one_of(st.just("127.0.0.1:8000"), st.sampled_from(["[::1", "a:b:c", "", "[", "evil.example"]),
                      HEADER_TEXT))
def test_any_origin_and_host_is_answered_never_a_500(client: TestClient, origin: str, host: str) -> None:
    """Malformed Origin and Host headers (an unclosed IPv6 bracket, a port that is no number) were a 500."""
    with held("Origin and Host"):
        r = client.post("/join", data={"code": "ZZZZZZ", "name": "x"}, headers={"Origin": origin, "Host": host},
                        follow_redirects=False)
        assert r.status_code < 500 and (r.status_code != 403 or "<h1>" in r.text), (origin, host, r.status_code)


@pytest.mark.parametrize("path", ["/api/plan", "/api/training-run", "/api/serving-run", "/api/cost"])
@pytest.mark.parametrize("body", [b'{"model": "\\ud800"}', b'{"\\udfff": 1}', b'{"model": ["llama", "x\\ud83d"]}'])
def test_half_a_character_in_a_json_body_is_a_422_in_a_sentence(client: TestClient, path: str, body: bytes) -> None:
    """JSON lets a string hold a lone UTF-16 surrogate ("\\ud800"); it parses, but no text encoding can store or
    print it, and /api/plan answered 500 (the reliability review's F6, which the socket showed first)."""
    with held("body size and control characters"):
        r = client.post(path, content=body, headers={"content-type": "application/json"})
        assert r.status_code == 422, (path, body, r.status_code)
        assert "half of a character" in r.text


def test_half_a_character_in_a_query_or_a_form_is_refused_or_read_as_a_replacement(client: TestClient) -> None:
    """Percent-encoded surrogates (%ED%A0%80 is not UTF-8) in a widget's query or a form never reach a 500."""
    assert client.get("/widgets/matmul?m=%ED%A0%80").status_code == 422
    token = csrf_of(client.get("/join").text)
    r = client.post("/join", content=f"csrf_token={token}&code=ZZZZZZ&name=%ED%A0%80",
                    headers={"content-type": "application/x-www-form-urlencoded"})
    assert r.status_code == 404 and "ZZZZZZ" in r.text  # read as text with a replacement mark: no class has the code


@given(st.text(alphabet=st.sampled_from(list("ab=&+%017fFcC8") + ["\x00", "\x1f", "é", "\u2028"]), max_size=40))
def test_a_query_is_refused_for_control_text_exactly_when_a_decoded_key_or_value_holds_some(query: str) -> None:
    """The guard decodes the query whole (one call on every widget update); the same answer as field by field."""
    by_field = any(has_control(k) or has_control(v) for k, v in parse_qsl(query, keep_blank_values=True))
    assert encoded_has_control(query) == by_field
