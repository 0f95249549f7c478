"""The flagship lesson's cheat sheet in real Chromium: every other step's takeaway on it, printed on one page."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import Locator, Page, expect

from app.lessons.loader import load_lessons
from app.lessons.model import Lesson, Step
from tests.e2e.conftest import ROOT, Server, Watched

pytestmark = pytest.mark.e2e
SLUG = "what-ai-workloads-need"
SMALLEST_PRINT_PX = 10.0  # 7.5 pt, the smallest type we print


@pytest.fixture(scope="module")
def lesson() -> Lesson:
    lessons, _ = load_lessons(ROOT / "lessons")
    return next(found for found in lessons if found.slug == SLUG)


def cheat_sheet_step(lesson: Lesson) -> Step:
    return next(s for s in lesson.steps if any(b.kind == "cheatsheet" for b in s.blocks))


def open_cheat_sheet(watched: Watched, server: Server, lesson: Lesson) -> Locator:
    watched.page.goto(f"{server.url}/lessons/{SLUG}/{cheat_sheet_step(lesson).number}")
    return watched.page.get_by_role("region", name="Cheat sheet")


def pdf_pages(pdf: bytes) -> int:
    """Pages in a PDF as Chromium writes it: one `/Type /Page` object each (the tree's root is `/Pages`)."""
    return len(re.findall(rb"/Type\s*/Page\b", pdf))


def assert_lists_every_other_step(sheet: Locator, lesson: Lesson) -> None:
    others = [s for s in lesson.steps if s.number != cheat_sheet_step(lesson).number]
    expect(sheet.locator("li")).to_have_count(len(others))
    for s in others:
        item = sheet.locator(f'li[value="{s.number}"]')
        expect(item.get_by_role("heading", level=3)).to_have_text(s.title)
        expect(item.get_by_text(s.meta.summary, exact=True)).to_be_visible()
        if s.meta.formula:
            expect(item.locator(".formula")).to_have_text(s.meta.formula)
            expect(item.locator(".formula")).to_be_visible()


def smallest_font_px(page: Page, selector: str) -> float:
    """The smallest computed font size of any element that holds text, inside `selector`."""
    sizes: list[float] = page.locator(selector).evaluate(
        """root => [root, ...root.querySelectorAll('*')]
             .filter(el => [...el.childNodes].some(n => n.nodeType === 3 && n.textContent.trim()))
             .map(el => parseFloat(getComputedStyle(el).fontSize))"""
    )
    return min(sizes)


def test_the_cheat_sheet_lists_every_other_steps_takeaway_and_formula(
    watched: Watched, server: Server, lesson: Lesson
) -> None:
    sheet = open_cheat_sheet(watched, server, lesson)
    assert_lists_every_other_step(sheet, lesson)
    watched.assert_clean()


@pytest.mark.parametrize("paper", ["A4", "Letter"])
def test_the_cheat_sheet_prints_on_one_page_with_every_step_still_on_it(
    watched: Watched, server: Server, lesson: Lesson, paper: str
) -> None:
    page = watched.page
    sheet = open_cheat_sheet(watched, server, lesson)
    page.emulate_media(media="print")
    assert_lists_every_other_step(sheet, lesson)
    for chrome in ("header.site", "footer.site", "#dgx-panel", "nav.pager"):
        expect(page.locator(chrome)).to_be_hidden()
    assert smallest_font_px(page, ".cheatsheet") >= SMALLEST_PRINT_PX
    pages = pdf_pages(page.pdf(format=paper))
    assert pages == 1, f"the cheat sheet prints on {pages} pages of {paper}"
    watched.assert_clean()


def test_the_print_button_prints_and_is_not_printed(watched: Watched, server: Server, lesson: Lesson) -> None:
    page = watched.page
    page.add_init_script("window.__printed = 0; window.print = () => { window.__printed += 1; };")
    sheet = open_cheat_sheet(watched, server, lesson)
    button = sheet.get_by_role("button", name="Print the cheat sheet")
    expect(button).to_be_visible()
    button.click()
    assert page.evaluate("window.__printed") == 1
    page.emulate_media(media="print")
    expect(button).to_be_hidden()
    watched.assert_clean()
