"""The class banner's poll in Chromium: the server holds a shown tab's poll while nothing changes (about one 304
every 10 s, where a 5-second poll made two), a hidden tab asks without waiting and backs off, a tab shown again asks
at once, and the new banner arrives within a second or two of the instructor's change."""

from __future__ import annotations

import re
import time

import pytest
from playwright.sync_api import Browser, BrowserContext, Page, Response, expect

from tests.e2e.conftest import Server, watch

pytestmark = pytest.mark.e2e
LESSON = "/lessons/what-ai-workloads-need"
HIDE = """Object.defineProperty(document, "hidden", {configurable: true, get: () => window.__hidden !== false});
Object.defineProperty(document, "visibilityState", {configurable: true,
  get: () => (window.__hidden !== false ? "hidden" : "visible")});"""


def banner_polls(page: Page, asked: list[str] | None = None) -> list[int]:
    """The statuses of the page's banner polls as they come back (and, in `asked`, each poll as it leaves)."""
    statuses: list[int] = []

    def seen(response: Response) -> None:
        if "/class-banner" in response.url:
            statuses.append(response.status)

    page.on("response", seen)
    if asked is not None:
        page.on("request", lambda r: asked.append(r.url) if "/class-banner" in r.url else None)
    return statuses


def join(page: Page, base: str, code: str, name: str) -> None:
    page.goto(base + "/join")
    page.get_by_label("Class code").fill(code)
    page.get_by_label("Your name").fill(name)
    page.get_by_role("button", name="Join").click()
    expect(page).to_have_url(re.compile(LESSON + "/1$"))


def test_a_quiet_class_holds_each_banner_poll_and_a_change_arrives_at_once(
    browser: Browser, server: Server,
) -> None:
    contexts: list[BrowserContext] = [browser.new_context() for _ in range(3)]
    try:
        teacher, shown, hidden = (watch(c.new_page(), server.url) for c in contexts)
        contexts[2].add_init_script(HIDE)  # this learner's tab is in the background from the start
        t = teacher.page
        t.goto(server.url + "/teach")
        t.get_by_label("Class title").fill("Polls")
        t.get_by_label("Lesson").select_option("what-ai-workloads-need")
        t.get_by_role("button", name="Create the class").click()
        code = t.locator("[data-code]").first.get_attribute("data-code")
        assert code
        t.get_by_role("link", name="Open the dashboard").click()
        hidden_asked: list[str] = []
        shown_polls, hidden_polls = banner_polls(shown.page), banner_polls(hidden.page, hidden_asked)
        join(shown.page, server.url, code, "Ada")
        join(hidden.page, server.url, code, "Bo")
        assert hidden.page.evaluate("document.hidden") is True and shown.page.evaluate("document.hidden") is False
        shown.page.wait_for_timeout(27_000)  # (Playwright delivers the responses while it waits)
        # each poll is held 10 s: answers at about 10 and 20 s (a 5-second poll answered five times)
        assert 1 <= len(shown_polls) <= 3 and set(shown_polls) == {304}, shown_polls
        assert 1 <= len(hidden_polls) <= 3 and set(hidden_polls) == {304}, hidden_polls  # at 0, 10 and 30 s
        assert not any("wait=1" in url for url in hidden_asked)  # a hidden tab holds no connection open
        expect(shown.page.locator("#class-banner")).to_contain_text("you are Ada")  # a 304 swaps nothing

        before = len(hidden_asked)
        hidden.page.evaluate("window.__hidden = false; document.dispatchEvent(new Event('visibilitychange'))")
        hidden.page.wait_for_timeout(1_000)
        assert len(hidden_asked) == before + 1 and "wait=1" in hidden_asked[-1]  # shown again: it asks at once

        t.get_by_label("Step", exact=True).first.select_option("2")
        clicked = time.perf_counter()
        t.get_by_role("button", name="Bring everyone to this step").click()
        expect(shown.page.locator("#class-banner [data-bring='2']")).to_be_visible(timeout=4_000)
        arrived = time.perf_counter() - clicked
        expect(hidden.page.locator("#class-banner [data-bring='2']")).to_be_visible(timeout=4_000)
        assert 200 in shown_polls and arrived < 4.0
        shown.assert_clean()
        hidden.assert_clean()
    finally:
        for c in contexts:
            c.close()
