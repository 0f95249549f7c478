"""Keyboard and history on a step, in real Chromium: the arrow keys turn the page only from the page itself, not
after a control was used (issue 13, item 7); widget changes, a fix link included, keep the address bar on the
widget's state but add no history entry, so Back leaves the step (issue 27, W36), and coming back shows what was
typed."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import Locator, Page, expect

from tests.e2e.conftest import Server, Watched

pytestmark = pytest.mark.e2e
FLAGSHIP = "/lessons/what-ai-workloads-need"


def open_plan(page: Page) -> Locator:
    """The step's plan widget, past its guess-first question."""
    plan = page.locator('[data-widget="plan"]')
    if plan.locator(".predict").count():
        plan.get_by_role("textbox").fill("20")
        choices = plan.get_by_role("radio")
        if choices.count():
            choices.first.check()
        plan.get_by_role("button", name="Commit my guess").click()
        expect(plan.locator(".predict-reveal")).to_be_visible()
    return plan


def back(page: Page) -> None:
    """The browser's Back (an entry of another state reloads the page, which Playwright's go_back sees abort)."""
    page.evaluate("setTimeout(() => history.back(), 0)")
    page.wait_for_timeout(300)
    page.wait_for_load_state()


def forward(page: Page) -> None:
    page.evaluate("setTimeout(() => history.forward(), 0)")
    page.wait_for_timeout(300)
    page.wait_for_load_state()


def test_the_arrow_keys_turn_the_page_from_the_page_itself(watched: Watched, server: Server) -> None:
    page = watched.page
    page.goto(server.url + FLAGSHIP + "/3")
    page.keyboard.press("ArrowRight")  # nothing used yet: → goes on (and can fail the tests below if it did not)
    expect(page).to_have_url(re.compile(r"/4$"))


def test_after_launch_on_step_4_the_arrow_keys_stay_on_the_step(watched: Watched, server: Server) -> None:
    page = watched.page
    page.goto(server.url + FLAGSHIP + "/4")
    plan = open_plan(page)
    with page.expect_response(lambda r: "/widgets/plan" in r.url):
        plan.get_by_role("button", name="Launch").click()
    expect(plan.locator("[data-launch]")).to_be_visible()
    page.keyboard.press("ArrowRight")
    page.keyboard.press("ArrowLeft")
    page.wait_for_timeout(500)
    expect(page).to_have_url(re.compile(r"/4(\?.*)?$"))
    page.goto(server.url + FLAGSHIP)  # → did not mark step 4 done
    expect(page.locator('li[data-step="3"]')).to_be_visible()
    expect(page.locator('li[data-step="4"]')).not_to_have_attribute("data-state", "done")
    watched.assert_clean()


def test_after_a_fix_and_edits_on_step_14_the_arrow_keys_stay_and_back_leaves_the_step(
    watched: Watched, server: Server
) -> None:
    """The walk changed a widget four times and had to press Back four times to leave the step (W36). Edits and a fix
    link now add no history entry: Back goes to the page before the step, Forward returns to the step as left."""
    page = watched.page
    page.goto(server.url + FLAGSHIP + "/13")
    page.goto(server.url + FLAGSHIP + "/14")
    plan = open_plan(page)
    length = page.evaluate("history.length")
    start = page.url
    fix = plan.locator("a[data-fix]").first
    fix.click()
    expect(page).not_to_have_url(start)
    fixed = page.url
    page.keyboard.press("ArrowRight")
    page.keyboard.press("ArrowLeft")
    page.wait_for_timeout(500)
    assert page.url == fixed  # still the step, with the fix

    plan = page.locator('[data-widget="plan"]')
    batch = plan.get_by_label("Batch size")
    for value in ("2", "3", "4"):  # three pauses: the address follows each
        with page.expect_response(lambda r: "/widgets/plan" in r.url):
            batch.fill(value)
        expect(page).to_have_url(re.compile(rf"w\d\.batch_size={value}\b"))
    assert page.evaluate("history.length") == length  # no entry for the fix or the edits
    back(page)
    expect(page).to_have_url(re.compile(r"/13$"))
    forward(page)
    expect(page).to_have_url(re.compile(r"/14\?.*w\d\.batch_size=4\b"))
    expect(page.locator('[data-widget="plan"]').get_by_label("Batch size")).to_have_value("4")
    watched.assert_clean()


def test_typing_in_one_burst_adds_no_history_entry(watched: Watched, server: Server) -> None:
    page = watched.page
    page.goto(server.url + FLAGSHIP + "/1")
    storage = page.locator('[data-widget="weight-storage"]')
    box = storage.get_by_role("textbox", name="Parameters")
    box.click()
    box.press("Control+a")
    length = page.evaluate("history.length")
    box.press_sequentially("7000000000", delay=60)  # faster than a pause: 7e6, 7e7, ... are answered on the way
    expect(page).to_have_url(re.compile(r"w1\.parameters=7000000000\b"))
    assert page.evaluate("history.length") == length


def test_back_pressed_before_the_pause_ends_keeps_what_was_typed(watched: Watched, server: Server) -> None:
    """Back within the 400 ms pause after a change: the page leaves the step, and Forward returns to the step with
    what was typed, the latest answer recorded as the page was left."""
    page = watched.page
    page.goto(server.url + FLAGSHIP + "/13")
    page.goto(server.url + FLAGSHIP + "/14")
    plan = open_plan(page)
    batch = plan.get_by_label("Batch size")
    with page.expect_response(lambda r: "/widgets/plan" in r.url):
        batch.fill("2")
    expect(page).to_have_url(re.compile(r"w\d\.batch_size=2\b"))  # the pause recorded it
    verdict = plan.locator('[data-value="verdict"]').inner_text()
    batch.fill("3")
    # Back the moment batch 3's answer is on screen (checked every frame), inside the pause: the address still
    # holds batch 2 then. Pressing Back when the response has arrived but before the page has read it would lose
    # the answer, as it would for a learner whose Back beats the answer: nothing was shown for batch 3 yet.
    page.wait_for_function(
        "before => document.querySelector('[data-widget=\"plan\"] [data-value=\"verdict\"]').innerText !== before",
        arg=verdict,
        polling="raf",
    )
    left_at = page.evaluate("() => { const here = location.href; setTimeout(() => history.back(), 0); return here; }")
    assert re.search(r"w\d\.batch_size=2\b", left_at), left_at  # the pause had not recorded batch 3
    page.wait_for_timeout(300)
    page.wait_for_load_state()
    expect(page).to_have_url(re.compile(r"/13$"))
    forward(page)
    expect(page).to_have_url(re.compile(r"w\d\.batch_size=3\b"))
    expect(page.locator('[data-widget="plan"]').get_by_label("Batch size")).to_have_value("3")
    watched.assert_clean()
