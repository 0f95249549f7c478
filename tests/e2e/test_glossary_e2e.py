"""A learner opens a marked term's definition in place: by keyboard, by tap on a phone, and without JavaScript."""

from __future__ import annotations

import re
from typing import Any

from playwright.sync_api import Browser, expect

from tests.e2e.conftest import AXE, Server, axe_violations, watch

STEP = "/lessons/what-ai-workloads-need/8"  # uses PCIe, prefill and decode before the steps that teach them


def test_a_term_opens_by_keyboard_and_closes_with_escape(browser: Browser, server: Server) -> None:
    ctx = browser.new_context(viewport={"width": 1280, "height": 900})
    try:
        w = watch(ctx.new_page(), server.url)
        w.page.goto(server.url + STEP)
        # decode is used on step 8 (in the serving run's explanation, "decodes the next token") before step 9
        # teaches it: its term button is named as the sentence has it
        term = w.page.get_by_role("button", name=re.compile(r"^decodes?$")).first
        definition = w.page.locator("#" + (term.get_attribute("aria-controls") or "missing"))
        expect(term).to_have_attribute("aria-expanded", "false")
        expect(definition).to_be_hidden()
        term.focus()
        w.page.keyboard.press("Enter")
        expect(term).to_have_attribute("aria-expanded", "true")
        expect(definition).to_be_visible()
        expect(definition).to_contain_text("one token at a time")
        expect(definition.get_by_role("link")).to_have_attribute("href", "/lessons/what-ai-workloads-need/9")
        w.page.keyboard.press("Escape")
        expect(definition).to_be_hidden()
        expect(term).to_be_focused()
        w.page.keyboard.press("Space")
        expect(definition).to_be_visible()
        w.assert_clean()
    finally:
        ctx.close()


def test_a_term_opens_by_tap_at_360_px_and_the_open_page_is_axe_clean(browser: Browser, server: Server) -> None:
    ctx = browser.new_context(viewport={"width": 360, "height": 800}, has_touch=True, is_mobile=True, bypass_csp=True)
    try:
        page = ctx.new_page()
        page.goto(server.url + STEP)
        term = page.get_by_role("button", name="PCIe", exact=True).first
        term.tap()
        definition = page.locator("#" + (term.get_attribute("aria-controls") or "missing"))
        expect(definition).to_be_visible()
        expect(definition).to_contain_text("expansion bus")
        overflow = page.evaluate("document.documentElement.scrollWidth - document.documentElement.clientWidth")
        assert overflow <= 0, f"the open definition scrolls the page sideways by {overflow}px"
        page.add_script_tag(path=str(AXE))
        rules = "['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'best-practice']"
        result: dict[str, Any] = page.evaluate(f"async () => await axe.run(document, {{runOnly: {rules}}})")
        assert [v["id"] for v in result["violations"]] == []
    finally:
        ctx.close()
    assert axe_violations(browser, server.url + "/glossary") == []
    assert axe_violations(browser, server.url + "/glossary", width=360, color_scheme="dark") == []


def test_without_javascript_a_term_links_to_its_glossary_entry(browser: Browser, server: Server) -> None:
    ctx = browser.new_context(java_script_enabled=False)
    try:
        page = ctx.new_page()
        page.goto(server.url + STEP)
        page.get_by_role("link", name="PCIe", exact=True).first.click()
        expect(page).to_have_url(server.url + "/glossary#term-pcie")
        expect(page.locator("#term-pcie + dd")).to_contain_text("expansion bus")
    finally:
        ctx.close()


def test_an_opened_term_leaves_its_sentence_whole(browser: Browser, server: Server) -> None:
    """Issue 27 (W37): the definition opens inside the sentence and the sentence carries on after it on the same
    line, instead of breaking off into a block and restarting on a new line."""
    ctx = browser.new_context(viewport={"width": 1280, "height": 900})
    try:
        page = ctx.new_page()
        page.goto(server.url + "/lessons/what-ai-workloads-need/1")
        term = page.locator(".prose .term").filter(has=page.locator("dfn", has_text=re.compile("^KV cache$"))).first
        button = term.get_by_role("button")
        button.focus()
        page.keyboard.press("Enter")
        definition = term.locator(".term-def")
        expect(definition).to_be_visible()
        place: dict[str, float] = term.evaluate("""(term) => {
            const def = term.querySelector('.term-def').getClientRects();
            const last = def[def.length - 1];
            let node = term.nextSibling;
            while (node && !(node.textContent || '').trim()) node = node.nextSibling;
            const range = document.createRange();
            const text = node.nodeType === 3 ? node : node.firstChild;
            const at = text.textContent.search(/\\S/);
            range.setStart(text, at); range.setEnd(text, at + 1);
            const next = range.getClientRects()[0];
            const box = term.closest('p, li').getBoundingClientRect();
            return {defRight: last.right, defMiddle: (last.top + last.bottom) / 2, nextLeft: next.left,
                    nextTop: next.top, nextBottom: next.bottom, boxLeft: box.left};
        }""")
        assert place["nextTop"] <= place["defMiddle"] <= place["nextBottom"], "the sentence restarts on a new line"
        assert place["nextLeft"] >= place["defRight"] - 1 and place["nextLeft"] > place["boxLeft"] + 20
    finally:
        ctx.close()
