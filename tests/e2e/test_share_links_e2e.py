"""Shareable links in real Chromium: the address bar gathers every widget's changed inputs (static/app.js merges
each answer's X-Share-Url), and the copied address opens elsewhere with both widgets as they were left."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import Browser, Locator, Page, expect

from tests.e2e.conftest import Server, Watched, watch

pytestmark = pytest.mark.e2e
STEP_1 = "/lessons/what-ai-workloads-need/1"


def commit_guess(plan: Locator, number: str = "20") -> None:
    """Answer the plan's predict-first question and wait for it to open."""
    plan.get_by_role("textbox").fill(number)
    plan.get_by_role("button", name="Commit my guess").click()
    expect(plan.locator(".predict-reveal")).to_be_visible()


def widgets(page: Page) -> tuple[Locator, Locator]:
    return page.locator('[data-widget="weight-storage"]'), page.locator('[data-widget="plan"]')


def test_two_widgets_changed_in_turn_both_travel_in_the_copied_address(
    watched: Watched, server: Server, browser: Browser
) -> None:
    page = watched.page
    page.goto(server.url + STEP_1)
    storage, plan = widgets(page)
    commit_guess(plan)
    storage.get_by_label("Bits per parameter").select_option("8")
    expect(storage.locator('[data-value="gb"]')).to_have_text("8.03 GB")
    plan.get_by_label("GPUs").fill("4")
    expect(plan.locator(".verdict")).to_contain_text("each of 4 GPUs")
    expect(page).to_have_url(re.compile(r"/1\?(?=.*\bw1\.bits=8\b)(?=.*\bw2\.gpus=4\b)"))
    shared = page.url
    watched.assert_clean()

    fresh = browser.new_context()  # another person: no guess yet, so the plan asks first
    try:
        other = watch(fresh.new_page(), server.url)
        other.page.goto(shared)
        storage, plan = widgets(other.page)
        expect(storage.get_by_label("Bits per parameter")).to_have_value("8")
        expect(storage.locator('[data-value="gb"]')).to_have_text("8.03 GB")
        commit_guess(plan)
        expect(plan.get_by_label("GPUs")).to_have_value("4")
        expect(plan.locator(".verdict")).to_contain_text("each of 4 GPUs")
        other.assert_clean()
    finally:
        fresh.close()


def test_a_fix_applied_keeps_the_other_widgets_inputs_in_the_address(watched: Watched, server: Server) -> None:
    page = watched.page
    page.goto(server.url + STEP_1 + "?w2.fixes=true")
    storage, plan = widgets(page)
    commit_guess(plan)
    storage.get_by_label("Bits per parameter").select_option("8")
    expect(storage.locator('[data-value="gb"]')).to_have_text("8.03 GB")
    plan.get_by_label("Model", exact=True).select_option("llama-3.1-405b")
    expect(plan.locator(".verdict")).to_contain_text("Does not fit")
    plan.locator('a[data-fix="gpus"]').click()
    expect(plan.locator(".verdict")).to_contain_text("Fits")
    expect(page).to_have_url(
        re.compile(r"/1\?(?=.*\bw1\.bits=8\b)(?=.*\bw2\.model=llama-3\.1-405b\b)(?=.*\bw2\.gpus=\d)")
    )
    page.reload()
    storage, plan = widgets(page)
    expect(storage.get_by_label("Bits per parameter")).to_have_value("8")
    expect(plan.get_by_label("Model", exact=True)).to_have_value("llama-3.1-405b")
    expect(plan.locator(".verdict")).to_contain_text("Fits")
    watched.assert_clean()


def test_an_old_link_keeps_working_and_its_keys_give_way_to_new_ones(watched: Watched, server: Server) -> None:
    page = watched.page
    page.goto(server.url + STEP_1)
    storage, plan = widgets(page)
    commit_guess(plan)
    page.goto(server.url + STEP_1 + "?w=2&gpus=4")  # an old link, for the plan
    storage, plan = widgets(page)
    expect(plan.get_by_label("GPUs")).to_have_value("4")
    storage.get_by_label("Bits per parameter").select_option("8")
    expect(page).to_have_url(re.compile(r"/1\?w=2&gpus=4&w1\.bits=8$"))  # the plan's old keys still hold
    plan.get_by_label("GPUs").fill("2")
    expect(page).to_have_url(re.compile(r"/1\?w1\.bits=8&w2\.gpus=2$"))  # now the plan's own keys replace them
    page.reload()
    storage, plan = widgets(page)
    expect(storage.get_by_label("Bits per parameter")).to_have_value("8")
    expect(plan.get_by_label("GPUs")).to_have_value("2")
    watched.assert_clean()
