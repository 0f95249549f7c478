"""/numbers in real Chromium: axe clean in light and dark, and it fits a phone by scrolling its tables."""

from __future__ import annotations

import pytest
from playwright.sync_api import Browser

from tests.e2e.conftest import Server, axe_violations

pytestmark = pytest.mark.e2e


@pytest.mark.parametrize(("width", "scheme"), [(1280, "light"), (360, "dark")])
def test_the_numbers_page_is_axe_clean(browser: Browser, server: Server, width: int, scheme: str) -> None:
    assert axe_violations(browser, server.url + "/numbers", width=width, color_scheme=scheme) == []
