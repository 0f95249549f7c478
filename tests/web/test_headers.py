"""What every response carries: CSP of 'self', gzip, cached static files, health."""

from __future__ import annotations

import re

from fastapi.testclient import TestClient


def test_pages_allow_only_self_and_hold_no_inline_script(client: TestClient) -> None:
    for url in ("/", "/lessons/tiny", "/lessons/tiny/1", "/nope"):
        r = client.get(url)
        csp = r.headers["content-security-policy"]
        assert "default-src 'self'" in csp and "script-src 'self'" in csp and "unsafe-inline" not in csp
        assert not re.search(r"<script(?![^>]*\bsrc=)", r.text), f"inline script on {url}"
        assert " style=" not in r.text, f"inline style on {url}"
        assert not re.search(r'(src|href)="(https?:)?//', r.text), f"off-site reference on {url}"


def test_html_is_gzipped(client: TestClient) -> None:
    r = client.get("/lessons/tiny/1", headers={"Accept-Encoding": "gzip"})
    assert r.headers["content-encoding"] == "gzip"


def test_versioned_static_files_are_cached_for_a_year(client: TestClient) -> None:
    html = client.get("/").text
    css = re.search(r'href="(/static/app\.css\?v=[0-9a-f]+)"', html)
    assert css
    r = client.get(css.group(1))
    assert r.status_code == 200 and "immutable" in r.headers["cache-control"]
    assert r.headers.get("etag")


def test_htmx_is_served_from_the_vendor_folder(client: TestClient) -> None:
    html = client.get("/").text
    src = re.search(r'src="(/static/vendor/htmx\.min\.js\?v=[0-9a-f]+)"', html)
    assert src and client.get(src.group(1)).status_code == 200


def test_healthz_answers_when_the_database_does(client: TestClient) -> None:
    r = client.get("/healthz")
    assert r.status_code == 200 and r.json() == {"status": "ok"}
