"""Walk all 21 steps of the flagship in real Chromium: every widget answers a change, every step is axe
clean and free of console errors, and every step works with JavaScript off. Screenshots of every step at
desktop and phone width go to test-artifacts/ (git-ignored)."""

from __future__ import annotations

import time

import pytest
from playwright.sync_api import Browser, Locator, Page
from playwright.sync_api import Error as PlaywrightError

from app.widgets.registry import get_widget
from tests.e2e.conftest import Server, axe_violations, screenshot, watch

pytestmark = pytest.mark.e2e
SLUG = "what-ai-workloads-need"
STEPS = range(1, 22)
CONTROLS = ("input[type=text]:visible", "input[type=range]:visible", "select:visible")


def fields_of(page: Page, wid: str) -> Locator:
    """The visible inputs of a widget's own form, in page order."""
    return page.locator(", ".join(f"#{wid} form[data-widget-form] {c}" for c in CONTROLS))


def nudge(field: Locator) -> bool:
    """Change a field to another valid value the way a learner would; False when it cannot change."""
    tag = field.evaluate("el => el.tagName")
    if tag == "SELECT":
        options = field.locator("option").evaluate_all("os => os.map(o => o.value)")
        current = field.input_value()
        others = [o for o in options if o != current]
        if not others:
            return False
        field.select_option(others[0])
        return True
    value = field.input_value()
    if field.get_attribute("type") == "range":
        low, high = field.get_attribute("min") or "0", field.get_attribute("max") or "100"
        field.fill(high if value != high else low)
        return True
    try:
        number = float(value.replace(",", ""))
    except ValueError:
        return False
    field.fill(str(int(number) + 1) if number.is_integer() and abs(number) < 1e6 else f"{number * 0.9:g}")
    return True


def changed(page: Page, selector: str, before: str, seconds: float = 8.0) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if page.locator(selector).first.inner_html() != before:
            return True
        page.wait_for_timeout(50)
    return False


def commit_guesses(page: Page) -> None:
    """Answer every "predict first" form on the page as a learner would, so the widgets open."""
    pending = page.locator("form.predict:has(button[type=submit]:visible)")
    for _ in range(8):
        if pending.count() == 0:
            return
        form = pending.first
        try:  # htmx may swap the form out between two actions; the loop looks again
            radio, guess = form.locator("input[type=radio]"), form.locator("input[name=guess]:visible")
            if radio.count() and not form.locator("input[type=radio]:checked").count():
                radio.first.check(timeout=3000)
            elif guess.count() and not guess.first.input_value(timeout=3000):
                guess.first.fill("20", timeout=3000)
            else:
                form.evaluate("f => f.requestSubmit()", timeout=3000)  # what the button does
        except PlaywrightError:
            pass
        page.wait_for_load_state("networkidle")
    assert pending.count() == 0, "a predict-first form would not take a guess"


def widgets_on(page: Page) -> list[tuple[str, str]]:
    """(name, id) of every widget section on the page."""
    found = page.locator("section.widget[data-widget]").evaluate_all(
        "ws => ws.map(w => [w.dataset.widget, w.id])")
    return [(str(n), str(i)) for n, i in found]


@pytest.mark.parametrize("number", STEPS)
def test_every_widget_on_the_step_answers_a_change(browser: Browser, server: Server, number: int) -> None:
    ctx = browser.new_context(viewport={"width": 1280, "height": 900})
    page = ctx.new_page()
    watched = watch(page, server.url)
    page.goto(f"{server.url}/lessons/{SLUG}/{number}")
    page.wait_for_load_state("networkidle")
    commit_guesses(page)
    screenshot(page, f"flagship-{number:02d}-desktop")
    for name, wid in widgets_on(page):
        widget = get_widget(name)
        assert widget is not None
        fields = fields_of(page, wid)
        if fields.count() == 0:
            continue  # a widget with no inputs (e.g. the five questions) is covered by its own tests
        result = f"#{wid}-result"
        moved_result = moved_panel = False
        for k in range(min(fields.count(), 4)):
            before, panel_before = page.locator(result).first.inner_html(), page.locator("#dgx-panel").inner_html()
            if not nudge(fields.nth(k)):
                continue
            moved_result = moved_result or changed(page, result, before)
            if widget.node_load is not None:
                moved_panel = moved_panel or changed(page, "#dgx-panel", panel_before, 2.0)
            if moved_result and (moved_panel or widget.node_load is None):
                break
        assert moved_result, f"step {number}: {name} did not answer a change of its inputs"
        if widget.node_load is not None:
            assert moved_panel, f"step {number}: {name} places work but the dgx-1 panel never changed"
    watched.assert_clean()
    ctx.close()


@pytest.mark.parametrize("number", STEPS)
def test_every_step_is_axe_clean_and_reads_at_phone_width(browser: Browser, server: Server, number: int) -> None:
    url = f"{server.url}/lessons/{SLUG}/{number}"
    assert axe_violations(browser, url) == []
    ctx = browser.new_context(viewport={"width": 360, "height": 780})
    page = ctx.new_page()
    watched = watch(page, server.url)
    page.goto(url)
    overflow = page.evaluate("document.documentElement.scrollWidth - document.documentElement.clientWidth")
    assert overflow <= 0, f"step {number} scrolls sideways by {overflow}px at 360 px"
    screenshot(page, f"flagship-{number:02d}-360px")
    watched.assert_clean()
    ctx.close()


@pytest.mark.parametrize("number", STEPS)
def test_with_javascript_off_each_widget_renders_and_its_form_rerenders(
    browser: Browser, server: Server, number: int
) -> None:
    ctx = browser.new_context(java_script_enabled=False)
    page = ctx.new_page()
    page.goto(f"{server.url}/lessons/{SLUG}/{number}")
    page.wait_for_load_state("networkidle")
    commit_guesses(page)
    for name, wid in widgets_on(page):
        result = page.locator(f"#{wid}-result")
        assert result.count() == 1 and result.inner_text().strip(), f"step {number}: {name} rendered no result"
        fields = fields_of(page, wid)
        submit = page.locator(f"#{wid} form[data-widget-form] button[type=submit]")
        if fields.count() == 0 or submit.count() == 0:
            continue
        before = result.inner_html()
        for k in range(min(fields.count(), 4)):
            if nudge(fields.nth(k)):
                break
        submit.first.click()
        page.wait_for_load_state()
        after = page.locator(f"#{wid}-result")
        assert after.count() == 1 and after.inner_html() != before, f"step {number}: {name} did not re-render"
    ctx.close()


def test_each_checkpointing_mode_updates_the_plan_and_coming_back_restores_it(browser: Browser, server: Server) -> None:
    """The checkpointing select (none, selective, full) sends every change: three different totals, then the first."""
    ctx = browser.new_context()
    page = ctx.new_page()
    watched = watch(page, server.url)
    page.goto(f"{server.url}/lessons/{SLUG}/21?w=1&mode=train&gpus=8&sharding=zero3")
    page.wait_for_load_state("networkidle")
    box = page.get_by_label("Activation checkpointing (training)")
    totals = [page.locator("[data-value=total]").first.inner_text()]
    for mode in ("selective", "full", "none"):
        before = page.locator("#w1-result").inner_html()
        box.select_option(mode)
        assert changed(page, "#w1-result", before), f"choosing {mode} checkpointing did not update the plan"
        totals.append(page.locator("[data-value=total]").first.inner_text())
    assert len(set(totals[:3])) == 3 and totals[3] == totals[0]
    watched.assert_clean()
    ctx.close()
