"""A 500, should one still happen, is a clean page with every security header, and the keep-alive connection it
came on carries the client's next request (reliability review, F4). Against a real uvicorn server, with both of
its HTTP parsers, and an httpx client that holds one connection and checks it is the same one throughout; the
app is the real one with routes that fail on purpose."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest
import uvicorn
from fastapi import APIRouter, FastAPI
from fastapi.responses import StreamingResponse

from app.main import create_app
from app.web.errors import SERVER_ERROR
from app.web.security import HARDENING
from tests.conftest import make_settings
from tests.tally import held

PARSERS = ["h11", "httptools"]


class Forced(RuntimeError):
    """The failure the test routes raise."""


def failing_app(tmp_path: Path, **settings: object) -> FastAPI:
    """The real app with routes that fail: before answering (GET, POST with an unread body, /api), mid-stream."""
    app = create_app(make_settings(tmp_path, **settings))
    router = APIRouter()

    @router.get("/boom")
    @router.post("/boom")
    @router.get("/api/boom")
    async def boom() -> None:
        raise Forced("forced in a test")

    @router.get("/boom-midway")
    async def midway() -> StreamingResponse:
        async def chunks() -> AsyncIterator[str]:
            yield "first part,"
            raise Forced("forced after the answer began")

        return StreamingResponse(chunks(), media_type="text/csv")

    app.include_router(router)
    return app


@contextmanager
def serving(app: FastAPI, http: str = "auto") -> Iterator[str]:
    """The app on a real uvicorn server (a free port on 127.0.0.1) in a thread; yields its base URL."""
    config = uvicorn.Config(app, host="127.0.0.1", port=0, http=http, log_level="warning", lifespan="on",
                            proxy_headers=True, forwarded_allow_ips="127.0.0.1")  # as `gpu-classroom serve` runs
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        assert thread.is_alive() and time.monotonic() < deadline, "the server did not start"
        time.sleep(0.02)
    port = server.servers[0].sockets[0].getsockname()[1]
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(10)


def one_connection(base: str) -> httpx.Client:
    return httpx.Client(base_url=base, limits=httpx.Limits(max_connections=1, max_keepalive_connections=1),
                        timeout=10)


def local_port(r: httpx.Response) -> int:
    """The client's own port of the connection this response came on."""
    return int(r.extensions["network_stream"].get_extra_info("client_addr")[1])


@pytest.mark.parametrize("http", PARSERS)
def test_a_500_is_a_clean_page_with_every_header_and_the_connection_carries_on(
    tmp_path: Path, http: str, server_errors: list[logging.LogRecord]
) -> None:
    with serving(failing_app(tmp_path), http) as base, one_connection(base) as client:
        first = client.get("/healthz")
        for method, path, body in (("GET", "/boom", None), ("POST", "/boom", b"x" * 40_000),
                                   ("GET", "/api/boom", None)):
            with held("a 500 keeps its headers and its connection"):
                r = client.request(method, path, content=body, headers={"Content-Type": "text/plain"})
                assert r.status_code == 500
                assert {k: r.headers.get(k) for k in HARDENING} == HARDENING, r.headers
                assert "Traceback" not in r.text and "Forced" not in r.text and SERVER_ERROR in r.text
                assert r.headers.get("connection", "keep-alive") != "close"
            with held("a 500 keeps its headers and its connection"):
                after = client.get("/healthz")  # the next request, on the same connection
                assert after.status_code == 200 and local_port(after) == local_port(first)
        page = client.get("/boom")
        assert '<h1>Something went wrong</h1>' in page.text and page.headers["content-type"].startswith("text/html")
        assert client.get("/api/boom").json() == {"detail": SERVER_ERROR}
    assert len(server_errors) == 5 and all(r.exc_info and r.exc_info[0] is Forced for r in server_errors)


@pytest.mark.parametrize("http", PARSERS)
def test_a_failure_after_the_answer_began_ends_the_connection_rather_than_pass_for_a_whole_body(
    tmp_path: Path, http: str, server_errors: list[logging.LogRecord]
) -> None:
    """Half a CSV must not look like a CSV: the server ends the connection, the client sees an error, and its
    next request gets a new connection that works."""
    logging.getLogger("uvicorn.error").disabled = True  # uvicorn logs the traceback itself; nothing to see here
    try:
        with serving(failing_app(tmp_path), http) as base, one_connection(base) as client:
            with held("a 500 keeps its headers and its connection"):
                with pytest.raises(httpx.HTTPError):
                    client.get("/boom-midway").read()
                assert client.get("/healthz").status_code == 200
    finally:
        logging.getLogger("uvicorn.error").disabled = False
    assert len(server_errors) == 1  # logged once, and raised on to the server rather than answered twice


def test_the_probe_reproductions_all_get_a_4xx_over_a_real_connection(tmp_path: Path) -> None:
    """The review's reproductions (F2 nested bodies on six routes, F3 subnormal loads, F4 the keep-alive after
    them), replayed on one connection: each a 4xx or an answer, never a 500, and the connection survives."""
    nested = b"[" * 500 + b"]" * 500
    with serving(failing_app(tmp_path)) as base, one_connection(base) as client:
        port = local_port(client.get("/healthz"))
        for path in ("/api/plan", "/api/cost", "/api/drills/x/grade", "/predictions", "/join", "/teach"):
            for body in (nested, b"[" * 30_000, b'{"a":' * 12_000):
                with held("bodies on every POST route"):
                    r = client.post(path, content=body, headers={"Content-Type": "application/json"})
                    assert r.status_code == 422 and local_port(r) == port, (path, r.status_code)
        for query in ("nodes=64&load=4.9e-324&room_kw=0.5", "load=4.9e-324&room_kw=10000.0",
                      "load=5e-324&room_kw=1e-12", "load=2.2250738585072014e-308&room_kw=64&days=1e30",
                      "load=4.9e-324&room_kw=1.0000000001",
                      "load=4.9e-324&room_kw=0.5&days=1&price_per_kwh=-1e-300&kg_co2_per_kwh=-0"):
            for headers in ({"HX-Request": "true"}, {}):
                with held("widget inputs across the float range"):
                    r = client.get(f"/widgets/power-energy?{query}", headers=headers)
                    assert r.status_code in (200, 422) and local_port(r) == port, (query, r.status_code)


@pytest.mark.parametrize("forwarded", [{}, {"X-Forwarded-Proto": "https"}, {"X-Forwarded-Proto": "http"}])
def test_behind_any_proxy_an_https_public_url_gives_secure_cookies_and_hsts(
    tmp_path: Path, forwarded: dict[str, str]
) -> None:
    """The probe's F8 on a real server, which applies X-Forwarded-Proto from 127.0.0.1 as `serve` does."""
    with serving(failing_app(tmp_path, public_url="https://gpu.example.org")) as base, one_connection(base) as c:
        r = c.get("/", headers=forwarded)
        with held("Secure cookies and HSTS"):
            assert r.headers["strict-transport-security"] == "max-age=31536000"
            cookies = r.headers.get_list("set-cookie")
            assert cookies and all("; Secure" in cookie for cookie in cookies)
