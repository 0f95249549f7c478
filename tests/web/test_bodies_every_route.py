"""No body breaks a POST route: nested, unbalanced, oversized, not JSON, not UTF-8, a malformed form or multipart
body. On every state-changing route the app has (taken from the app's own routes, so a new route is covered the
day it is added), with and without a valid CSRF token (so both the guard in front and the route's own parsing
are reached): never a 5xx; a body read as JSON that cannot be read, or one too large, is a 4xx; every refusal
says what is wrong in a sentence. (A form body of odd field names may be accepted: a route ignores fields it
does not know.)"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi import FastAPI
from fastapi.routing import iter_route_contexts
from fastapi.testclient import TestClient
from httpx import Response

from app.main import create_app
from app.web.guard import BODY_MAX, JSON_DEPTH_MAX, TOO_DEEP, json_depth
from tests.conftest import make_settings
from tests.tally import held
from tests.web.classroom_helpers import csrf_of

JSON, FORM, MULTIPART = "application/json", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x"
# (name, body, content types it is sent with): the probe's bodies (reliability review, F2) and their kin.
BODIES: list[tuple[str, bytes, tuple[str | None, ...]]] = [
    ("arrays nested 500 deep (1 KB)", b"[" * 500 + b"]" * 500, (JSON, None, FORM, "text/plain")),
    ("objects nested 500 deep", b'{"a":' * 500 + b"1" + b"}" * 500, (JSON, None, FORM)),
    ("arrays nested one past the limit", b"[" * (JSON_DEPTH_MAX + 1) + b"]" * (JSON_DEPTH_MAX + 1), (JSON, None)),
    ("30 KB of [, never closed", b"[" * 30_000, (JSON, None, FORM, "text/plain")),
    ('{"a": 12,000 times, never closed', b'{"a":' * 12_000, (JSON, None, FORM)),
    ("nesting inside a string, then unbalanced", b'["[[[[[[", ' + b"{" * 2000, (JSON, None)),
    ("not JSON", b"this is not json", (JSON, None)),
    ("JSON cut short", b'{"model": "llama-3.1-8b", ', (JSON, None)),
    ("not UTF-8", b'{"model": "\xff\xfe\xfa"}', (JSON, None, FORM)),
    ("a number of 5,000 digits", b'{"gpus": ' + b"9" * 5000 + b"}", (JSON, None)),
    ("a form of 5,000 empty fields", b"a=&" * 5000, (FORM, MULTIPART)),
    ("a form whose names are brackets", b"[[[[=]]]]&" * 3000, (FORM,)),
    ("a multipart body with no parts", b"--x\r\nnonsense\r\n", (MULTIPART, "multipart/form-data")),
    ("70 KB of [", b"[" * (BODY_MAX + 6 * 1024), (JSON, FORM, None)),
]
PATH_VALUES = {"code": "ABCDEF", "name:path": "bytes-per-parameter", "slug": "tiny", "number": "1",
               "profile_id": "p1"}


def post_routes(app: FastAPI) -> list[str]:
    """Every route that takes a POST (or PUT, PATCH, DELETE), its path parameters filled in."""
    paths = []
    for route in iter_route_contexts(app.routes):
        if set(route.methods or ()) & {"POST", "PUT", "PATCH", "DELETE"} and route.path:
            paths.append(re.sub(r"\{([^}]+)\}", lambda m: PATH_VALUES.get(m.group(1), "x"), route.path))
    return sorted(set(paths))


@pytest.fixture(scope="module")
def app_client(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TestClient]:
    with TestClient(create_app(make_settings(Path(tmp_path_factory.mktemp("bodies"))))) as c:
        yield c


def explains(r: Response) -> bool:
    """A 4xx that says what is wrong in a sentence: JSON with a detail, or a page with a message."""
    if r.headers.get("content-type", "").startswith("application/json"):
        detail = r.json().get("detail")
        text = detail if isinstance(detail, str) else " ".join(d.get("message", d.get("msg", "")) for d in detail)
        return len(text.split()) >= 3
    return bool(re.search(r"<(p|h1)[^>]*>[^<]*\w+ \w+", r.text)) and "Traceback" not in r.text


def test_the_app_has_the_post_routes_the_probe_hit(app_client: TestClient) -> None:
    routes = post_routes(app_client.app)  # type: ignore[arg-type]
    assert {"/api/plan", "/api/cost", "/api/drills/bytes-per-parameter/grade", "/predictions", "/join",
            "/teach"} <= set(routes)
    assert len(routes) >= 19


@pytest.mark.parametrize(("name", "body", "types"), BODIES, ids=[b[0] for b in BODIES])
def test_every_post_route_refuses_a_bad_body_with_a_4xx_and_a_sentence_never_a_500(
    app_client: TestClient, name: str, body: bytes, types: tuple[str | None, ...]
) -> None:
    token = csrf_of(app_client.get("/join").text)
    for path in post_routes(app_client.app):  # type: ignore[arg-type]
        for content_type in types:
            for csrf in ({}, {"X-CSRF-Token": token}):
                headers = {**csrf, **({"content-type": content_type} if content_type else {})}
                with held("bodies on every POST route"):
                    r = app_client.post(path, content=body, headers=headers, follow_redirects=False)
                    said = (path, name, content_type, r.status_code, r.text[:300])
                    assert r.status_code < 500, said
                    if content_type in (JSON, None) or len(body) > BODY_MAX:  # read as JSON, or too large: refused
                        assert 400 <= r.status_code < 500, said
                    if r.status_code >= 400:
                        assert explains(r), said
                    assert r.headers["x-content-type-options"] == "nosniff"


def test_a_json_body_past_the_depth_limit_is_refused_in_a_sentence_before_any_route_reads_it(
    app_client: TestClient,
) -> None:
    deep = b"[" * (JSON_DEPTH_MAX + 1) + b"]" * (JSON_DEPTH_MAX + 1)
    for path, accept in (("/api/plan", {}), ("/join", {}), ("/join", {"accept": "application/json"})):
        with held("bodies on every POST route"):
            r = app_client.post(path, content=deep, headers={"content-type": JSON, **accept})
            assert r.status_code == 422 and TOO_DEEP in r.text
    with held("bodies on every POST route"):  # the /api answer has the one JSON shape of bad input
        r = app_client.post("/api/plan", content=deep, headers={"content-type": JSON})
        assert r.json()["detail"][0]["field"] == "request" and r.json()["message"] == f"request: {TOO_DEEP}"


def test_a_json_body_within_the_depth_limit_reaches_its_route(app_client: TestClient) -> None:
    """The limit refuses nothing a client sends: an /api request nested to the limit is validated as usual."""
    inner = b"[" * (JSON_DEPTH_MAX - 1) + b"]" * (JSON_DEPTH_MAX - 1)
    with held("bodies on every POST route"):
        r = app_client.post("/api/plan", content=b'{"model": ' + inner + b"}", headers={"content-type": JSON})
        assert r.status_code == 422 and TOO_DEEP not in r.text and r.json()["detail"][0]["field"].startswith("model")
    with held("bodies on every POST route"):
        ok = app_client.post("/api/plan", json={"model": "llama-3.1-8b", "gpus": 1})
        assert ok.status_code == 200


def test_bad_json_is_named_with_where_it_went_wrong(app_client: TestClient) -> None:
    with held("bodies on every POST route"):
        r = app_client.post("/api/plan", content=b'{"model": "llama-3.1-8b", ', headers={"content-type": JSON})
        assert r.status_code == 422 and "not valid JSON" in r.json()["message"] and "line 1, column" in r.text
    with held("bodies on every POST route"):
        r = app_client.post("/api/plan", content=b'{"model": "\xff"}', headers={"content-type": JSON})
        assert r.status_code == 422 and "not UTF-8" in r.json()["message"]


def test_depth_counts_brackets_outside_strings_only() -> None:
    assert json_depth(b'{"a": [1, {"b": "[[[[{{{{"}]}') == 3
    assert json_depth(b'"\\"[[["') == 0  # an escaped quote does not end the string
    assert json_depth(b'["unterminated [[[[') == 1  # a string never closed hides what follows
    assert json_depth(b"[" * 30_000) == 30_000
