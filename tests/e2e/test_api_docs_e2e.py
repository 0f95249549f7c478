"""/docs and /redoc work under the site's CSP: assets from static/vendor, no inline script, the operations listed."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from tests.e2e.conftest import Server, Watched

pytestmark = pytest.mark.e2e
OPERATIONS = ("/api/plan", "/api/models", "/api/hardware", "/api/cost")
LOADED = 30_000  # ms: each page parses a megabyte-sized bundle and the whole document; slow on a busy machine


def test_swagger_ui_lists_the_operations(watched: Watched, server: Server) -> None:
    page = watched.page
    page.goto(server.url + "/docs")
    expect(page.locator(".opblock").first).to_be_visible(timeout=LOADED)
    for path in OPERATIONS:
        expect(page.locator(".opblock-summary-path", has_text=re.compile(f"^{re.escape(path)}$")).first).to_be_visible()
    assert not [e for e in watched.console_errors if "Content Security Policy" in e], watched.console_errors
    watched.assert_clean()


def test_redoc_lists_the_operations(watched: Watched, server: Server) -> None:
    page = watched.page
    page.goto(server.url + "/redoc")
    expect(page.get_by_role("heading", name=re.compile("GPU Classroom")).first).to_be_visible(timeout=LOADED)
    for path in OPERATIONS:
        expect(page.get_by_text(path, exact=True).first).to_be_attached()
    # ReDoc's sidebar footer always asks for its maker's logo from cdn.redoc.ly: the CSP refuses it (Chromium
    # reports the attempt, nothing is fetched), and that one image is the only thing refused or off the site
    logo = "https://cdn.redoc.ly/redoc/logo-mini.svg"
    refused = [e for e in watched.console_errors if "Content Security Policy" in e and logo not in e]
    assert not refused, watched.console_errors
    assert [u for u in watched.off_server() if u != logo] == [], watched.off_server()
