"""The class banner's poll in Chromium: 304 while nothing changes, every 5 s in a shown tab, backing off in a
hidden one, at once when the tab shows again, and the new banner as soon as the instructor changes the pace."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import Browser, BrowserContext, Page, Response, expect

from tests.e2e.conftest import Server, watch

pytestmark = pytest.mark.e2e
LESSON = "/lessons/what-ai-workloads-need"
HIDE = """Object.defineProperty(document, "hidden", {configurable: true, get: () => window.__hidden !== false});
Object.defineProperty(document, "visibilityState", {configurable: true,
  get: () => (window.__hidden !== false ? "hidden" : "visible")});"""


def banner_polls(page: Page) -> list[int]:
    statuses: list[int] = []

    def seen(response: Response) -> None:
        if "/class-banner" in response.url:
            statuses.append(response.status)

    page.on("response", seen)
    return statuses


def join(page: Page, base: str, code: str, name: str) -> None:
    page.goto(base + "/join")
    page.get_by_label("Class code").fill(code)
    page.get_by_label("Your name").fill(name)
    page.get_by_role("button", name="Join").click()
    expect(page).to_have_url(re.compile(LESSON + "/1$"))


def test_a_hidden_tab_polls_its_banner_less_and_a_shown_one_every_5_s_with_304s(
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
        shown_polls, hidden_polls = banner_polls(shown.page), banner_polls(hidden.page)
        join(shown.page, server.url, code, "Ada")
        join(hidden.page, server.url, code, "Bo")
        assert hidden.page.evaluate("document.hidden") is True and shown.page.evaluate("document.hidden") is False
        shown.page.wait_for_timeout(27_000)  # (Playwright delivers the responses while it waits)
        # shown: at 5, 10, 15, 20 and 25 s; hidden: at 5 and 15 s, then 20 s later (35 s)
        assert len(shown_polls) >= 4 and set(shown_polls) == {304}, shown_polls
        assert 1 <= len(hidden_polls) <= 3 and set(hidden_polls) == {304}, hidden_polls
        expect(shown.page.locator("#class-banner")).to_contain_text("you are Ada")  # a 304 swaps nothing

        before = len(hidden_polls)
        hidden.page.evaluate("window.__hidden = false; document.dispatchEvent(new Event('visibilitychange'))")
        hidden.page.wait_for_timeout(1_500)
        assert len(hidden_polls) == before + 1  # shown again: it asks at once

        t.get_by_label("Step", exact=True).first.select_option("2")
        t.get_by_role("button", name="Bring everyone to this step").click()
        expect(shown.page.locator("#class-banner [data-bring='2']")).to_be_visible(timeout=7_000)
        expect(hidden.page.locator("#class-banner [data-bring='2']")).to_be_visible(timeout=7_000)
        assert 200 in shown_polls
        shown.assert_clean()
        hidden.assert_clean()
    finally:
        for c in contexts:
            c.close()
