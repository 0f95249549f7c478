"""The foundation in real Chromium: keyboard through steps, a live widget, no leaks, axe clean."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import Browser, expect

from tests.e2e.conftest import Server, Watched, axe_violations, screenshot

pytestmark = pytest.mark.e2e
FLAGSHIP = "/lessons/what-ai-workloads-need"


def test_arrow_keys_move_between_steps(watched: Watched, server: Server) -> None:
    page = watched.page
    page.goto(server.url + FLAGSHIP + "/1")
    expect(page.get_by_text("Step 1 of 21")).to_be_visible()
    page.keyboard.press("ArrowRight")
    expect(page).to_have_url(re.compile(FLAGSHIP + "/2$"))
    expect(page.get_by_text("Step 2 of 21")).to_be_visible()
    page.keyboard.press("ArrowRight")
    expect(page).to_have_url(re.compile(FLAGSHIP + "/3$"))
    page.keyboard.press("ArrowLeft")
    expect(page).to_have_url(re.compile(FLAGSHIP + "/2$"))
    watched.assert_clean()


def test_typing_in_the_calculator_updates_the_result_without_a_page_load(watched: Watched, server: Server) -> None:
    page = watched.page
    page.goto(server.url + FLAGSHIP + "/1")
    widget = page.locator('[data-widget="weight-storage"]').first
    page.evaluate("window.__sameDocument = true")
    field = widget.get_by_role("textbox", name="Parameters")
    field.fill("7e9")
    expect(widget.locator('[data-value="gb"]')).to_have_text("14.00 GB")
    expect(widget.locator('[data-value="gib"]')).to_have_text("13.04 GiB")
    widget.get_by_label("Bits per parameter").select_option("4")
    expect(widget.locator('[data-value="gb"]')).to_have_text("3.50 GB")
    expect(page.locator('#dgx-panel [data-gpu="0"]')).to_have_attribute("data-used", "0")  # weights alone: no plan
    assert page.evaluate("window.__sameDocument") is True
    expect(page).to_have_url(re.compile(r"parameters=7e9"))
    watched.assert_clean()


def test_a_value_out_of_range_shows_its_message_beside_the_field(watched: Watched, server: Server) -> None:
    page = watched.page
    page.goto(server.url + FLAGSHIP + "/1")
    widget = page.locator('[data-widget="weight-storage"]').first
    field = widget.get_by_role("textbox", name="Parameters")
    field.fill("1e20")
    expect(widget.locator(".field-error").first).to_contain_text("Must be at most")
    expect(field).to_have_attribute("aria-invalid", "true")
    expect(widget.locator('[data-value="gb"]')).not_to_have_text("")  # the last good result stays
    field.fill("70e9")
    expect(widget.locator('[data-value="gb"]')).to_have_text("140.00 GB")
    expect(widget.locator(".field-error").first).to_be_empty()
    expect(field).not_to_have_attribute("aria-invalid", "true")
    assert all("422" in e or "Unprocessable" in e for e in watched.console_errors)


def test_with_javascript_off_the_form_submits_and_the_page_rerenders(browser: Browser, server: Server) -> None:
    ctx = browser.new_context(java_script_enabled=False)
    page = ctx.new_page()
    page.goto(server.url + FLAGSHIP + "/1")
    widget = page.locator('[data-widget="weight-storage"]').first
    widget.get_by_role("textbox", name="Parameters").fill("70e9")
    widget.get_by_role("button", name="Update").click()
    expect(page.locator('[data-widget="weight-storage"] [data-value="gb"]').first).to_have_text("140.00 GB")
    ctx.close()


def test_home_overview_and_step_pages_are_axe_clean(browser: Browser, server: Server) -> None:
    for path in ("/", FLAGSHIP, FLAGSHIP + "/1"):
        for scheme in ("light", "dark"):
            assert axe_violations(browser, server.url + path, color_scheme=scheme) == [], (path, scheme)
    assert axe_violations(browser, server.url + FLAGSHIP + "/1", width=360) == []


def test_step_page_reads_at_desktop_and_phone_width(browser: Browser, server: Server) -> None:
    for width, name in ((1280, "step-desktop"), (360, "step-360px")):
        ctx = browser.new_context(viewport={"width": width, "height": 800})
        page = ctx.new_page()
        page.goto(server.url + FLAGSHIP + "/1")
        overflow = page.evaluate("document.documentElement.scrollWidth - document.documentElement.clientWidth")
        assert overflow <= 0, f"page scrolls sideways by {overflow}px at {width}px"
        screenshot(page, name)
        ctx.close()
