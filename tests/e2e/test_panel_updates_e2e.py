"""The dgx-1 panel beside the widgets, in real Chromium: an answer carries the panel only when it changed, and after
any sequence of edits (two widgets on one page, back and forward) the panel and each result are what the server
draws for the inputs on screen."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import Locator, Page, Response, expect

from tests.e2e.conftest import Server, Watched

pytestmark = pytest.mark.e2e
STEP = "/lessons/what-ai-workloads-need/1"  # weight-storage (w1), then a predict-first plan (w2)
PLAYGROUND = "/lessons/what-ai-workloads-need/21"  # one plan with every knob (w1)
KEY = re.compile(r'<aside id="dgx-panel"[^>]*data-key="([0-9a-f]+)"')
# An element's text with its spacing evened out, less the panel's parts that never change (data-kept: the legend,
# which an answer's copy leaves to the page).
TEXT = """const text = (el) => { const copy = el.cloneNode(true);
             copy.querySelectorAll('[data-kept]').forEach((k) => k.remove());
             return copy.textContent.replace(/\\s+/g, ' ').trim(); };"""


def answer(page: Page, name: str, edit: Locator, value: str) -> Response:
    """Make one edit of a widget's field and return the answer it brought."""
    with page.expect_response(lambda r: f"/widgets/{name}?" in r.url) as got:
        if edit.evaluate("el => el.tagName") == "SELECT":
            edit.select_option(value)
        else:
            edit.fill(value)
    page.wait_for_function("() => !document.querySelector('.htmx-request')")
    return got.value


def truth(page: Page, server: Server, wid: str) -> tuple[str, str, str]:
    """What the server draws for widget `wid`'s inputs as they are on screen, asked afresh with no panel key:
    (panel key, panel text, result text); the panel parts are empty for a widget that places no work."""
    form = page.locator(f"#{wid} form[data-widget-form]")
    query = form.evaluate("f => new URLSearchParams(new FormData(f)).toString()")
    name = form.get_attribute("data-widget-form")
    html = page.request.get(f"{server.url}/widgets/{name}?{query}", headers={"HX-Request": "true"}).text()
    key = KEY.search(html)
    texts = page.evaluate(
        f"""([html, id]) => {{ const t = document.createElement('template'); t.innerHTML = html; {TEXT}
             const panel = t.content.getElementById('dgx-panel');
             return [panel ? text(panel) : '', text(t.content.getElementById(id))]; }}""",
        [html, f"{wid}-result"],
    )
    return key[1] if key else "", texts[0], texts[1]


def on_screen(page: Page, wid: str) -> tuple[str, str, str]:
    """The panel key, panel text and result text the page shows."""
    key = page.locator("#dgx-panel").get_attribute("data-key") or ""
    texts = page.evaluate(
        f"""(id) => {{ {TEXT}
             return [text(document.getElementById('dgx-panel')), text(document.getElementById(id))]; }}""",
        f"{wid}-result",
    )
    return key, texts[0], texts[1]


def test_an_answer_carries_the_panel_only_when_the_panel_changed(watched: Watched, server: Server) -> None:
    page = watched.page
    page.goto(server.url + PLAYGROUND)
    plan = page.locator("#w1")
    before = page.locator("#dgx-panel .panel-summary").inner_text()
    key = page.locator("#dgx-panel").get_attribute("data-key") or ""

    # The same batch written another way: a new answer, the same panel, so the answer leaves the panel out.
    same = answer(page, "plan", plan.get_by_label("Batch size", exact=True), "1.0")
    assert f"panel_key={key}" in same.url  # the page said which panel it shows
    assert 'id="dgx-panel"' not in same.text()
    expect(page.locator("#dgx-panel .panel-summary")).to_have_text(before)

    # Fewer bits: less memory on GPU 0, so the panel comes along and the page shows it.
    fewer = answer(page, "plan", plan.get_by_label("Weight precision", exact=True), "fp8")
    assert 'id="dgx-panel"' in fewer.text()
    expect(page.locator("#dgx-panel .panel-summary")).not_to_have_text(before)
    expect(page.locator("#dgx-panel")).not_to_have_attribute("data-key", key)
    assert on_screen(page, "w1") == truth(page, server, "w1")
    # The answer's copy leaves out what never changes; the page keeps its own legend and overflow hatch.
    assert 'class="legend"' in fewer.text() and "Optimizer state" not in fewer.text()
    expect(page.locator("#dgx-panel .legend li")).to_have_count(8)
    expect(page.locator("#dgx-panel #dgx-overflow-hatch")).to_have_count(1)

    # Back to bf16 and the batch's first spelling: the panel is unchanged again, and stays as it is.
    answer(page, "plan", plan.get_by_label("Weight precision", exact=True), "bf16")
    again = answer(page, "plan", plan.get_by_label("Batch size", exact=True), "1")
    assert 'id="dgx-panel"' not in again.text()
    assert on_screen(page, "w1") == truth(page, server, "w1")
    assert watched.errors() == []


def test_after_edits_across_two_widgets_and_back_and_forward_the_panel_is_the_plans(
    watched: Watched, server: Server
) -> None:
    """Learner walk W1: only the plan drives the panel; the weights-only calculator beside it never sends one, so the
    panel stays what the server draws for the plan's inputs on screen, and says it is the plan's."""
    page = watched.page
    page.goto(server.url + STEP)
    calc, plan = page.locator("#w1"), page.locator("#w2")
    plan.get_by_role("textbox").fill("30")
    plan.get_by_role("button", name="Commit my guess").click()
    expect(plan.locator(".predict-reveal")).to_be_visible()
    expect(page.locator("#dgx-panel .panel-source")).to_contain_text("Plan on dgx-1")

    edits = [
        ("w1", "weight-storage", calc.get_by_label("Bits per parameter", exact=True), "8"),
        ("w2", "plan", plan.get_by_label("Weight precision", exact=True), "fp8"),
        ("w1", "weight-storage", calc.get_by_label("Parameters", exact=True), "70e9"),
        ("w2", "plan", plan.get_by_label("GPUs", exact=True), "2"),
        ("w1", "weight-storage", calc.get_by_label("Bits per parameter", exact=True), "8"),  # no change: no request
        ("w1", "weight-storage", calc.get_by_label("Bits per parameter", exact=True), "16"),
        ("w1", "weight-storage", calc.get_by_label("Parameters", exact=True), "8.03e9"),  # w1 as it first drew
    ]
    for wid, name, field, value in edits:
        if field.input_value() == value:
            continue
        got = answer(page, name, field, value)
        key, panel_text, result = truth(page, server, "w2")
        assert on_screen(page, "w2") == (key, panel_text, result), f"after {name} {value}"
        if wid == "w1":
            assert 'id="dgx-panel"' not in got.text() and on_screen(page, "w1")[2] == truth(page, server, "w1")[2]
        expect(page.locator("#dgx-panel")).to_have_attribute("data-fits", "true")

    # Away and back.
    page.locator('[data-nav="next"]').click()
    page.wait_for_url(re.compile(r"/2(\?|#|$)"))
    page.go_back()
    page.wait_for_url(re.compile(r"/1(\?|#|$)"))
    # The browser may show the page as first served (the plan still asking for a guess) or as left: the edits of
    # the calculator, always open, never move the panel.
    calc = page.locator("#w1")
    shown = page.locator("#dgx-panel").get_attribute("data-key")
    for field, value in [(calc.get_by_label("Bits per parameter", exact=True), "4"),
                         (calc.get_by_label("Parameters", exact=True), "70e9"),
                         (calc.get_by_label("Parameters", exact=True), "70,000,000,000")]:
        got = answer(page, "weight-storage", field, value)
        assert 'id="dgx-panel"' not in got.text(), f"after back, weight-storage {value}"
        expect(page.locator("#dgx-panel")).to_have_attribute("data-key", shown or "")
        assert on_screen(page, "w1")[2] == truth(page, server, "w1")[2]
    page.go_forward()
    page.wait_for_url(re.compile(r"/2(\?|#|$)"))
    assert watched.errors() == []
