"""Phones and projectors in real Chromium: at 390 and 360 px no step cuts content without a visible way to
scroll it; presenting mode fits 1280×720 and 1920×1080 with its buttons in view, on every slide."""

from __future__ import annotations

import pytest
from playwright.sync_api import Browser, Page, expect

from tests.e2e.conftest import DOCS_SHOTS, Server

pytestmark = pytest.mark.e2e
LESSONS = {"what-ai-workloads-need": 21, "understanding-the-work": 0, "what-is-gpu-infrastructure": 0}
PRESENTABLE = "/lessons/what-is-gpu-infrastructure"
SHOTS = DOCS_SHOTS

# Every element of the page that is wider than its box: a cut (overflow hidden) is a failure; a scroll
# container must be reachable by keyboard, have a name, and show that it scrolls.
CUTS = """() => {
  const de = document.documentElement, bad = [];
  if (de.scrollWidth > de.clientWidth) bad.push(`the page scrolls sideways by ${de.scrollWidth - de.clientWidth}px`);
  for (const e of document.querySelectorAll('main *')) {
    if (e.clientWidth <= 1 || e.scrollWidth <= e.clientWidth + 1 || e.closest('details:not([open])')) continue;
    const cs = getComputedStyle(e), what = `${e.tagName.toLowerCase()}.${e.getAttribute('class') || ''}`;
    if (cs.overflowX === 'hidden' || cs.overflowX === 'clip') { bad.push(`${what} cuts its content`); continue; }
    if (cs.overflowX !== 'auto' && cs.overflowX !== 'scroll') continue;
    const named = e.getAttribute('aria-label') || e.getAttribute('aria-labelledby')
      || e.querySelector(':scope > figcaption, :scope > caption');
    const hinted = getComputedStyle(e, '::before').content !== 'none' || e.querySelector('[data-scroll-hint]');
    if (e.tabIndex < 0 || !named || !hinted) bad.push(`${what} scrolls without focus, a name or a visible hint`);
  }
  return bad;
}"""


def steps_of(page: Page, base: str, slug: str) -> int:
    page.goto(f"{base}/lessons/{slug}")
    return page.locator("ol.steps > li").count()


@pytest.mark.parametrize("width", [390, 360])
def test_no_step_cuts_content_on_a_phone(browser: Browser, server: Server, width: int) -> None:
    ctx = browser.new_context(viewport={"width": width, "height": 800})
    page = ctx.new_page()
    problems = []
    for slug in LESSONS:
        for n in range(1, steps_of(page, server.url, slug) + 1):
            page.goto(f"{server.url}/lessons/{slug}/{n}")
            problems += [f"{slug}/{n}: {p}" for p in page.evaluate(CUTS)]
    page.goto(f"{server.url}/lessons/what-ai-workloads-need/8")
    line = page.locator(".progress-line").first
    bar = line.locator("progress").bounding_box()
    box = line.bounding_box()
    assert bar and box and bar["width"] >= 0.6 * box["width"], f"step 8's progress bar is a sliver: {bar}"
    if width == 390:
        line.scroll_into_view_if_needed()
        page.screenshot(path=str(SHOTS / "phone-step-8-390.png"))
        page.goto(f"{server.url}/lessons/what-ai-workloads-need/2")
        page.locator(".chart-scroll").first.scroll_into_view_if_needed()
        page.screenshot(path=str(SHOTS / "phone-step-2-chart-390.png"))
    ctx.close()
    assert problems == [], "\n".join(problems)


def test_the_profiling_summary_fits_a_phone(browser: Browser, server: Server) -> None:
    ctx = browser.new_context(viewport={"width": 360, "height": 800})
    page = ctx.new_page()
    page.goto(f"{server.url}/lessons/understanding-the-work/6")
    widget = page.locator('[data-widget="profile"]')
    widget.get_by_label("Size of the generated file").select_option("8")
    widget.get_by_label("Repeats of each phase").fill("1")
    widget.get_by_role("button", name="Run the profile").click()
    expect(widget.locator("[data-profile-result]")).to_be_visible(timeout=60_000)
    assert page.evaluate(CUTS) == []
    ctx.close()


@pytest.mark.parametrize("size", [(1280, 720), (1920, 1080)])
def test_every_slide_fits_the_screen_with_its_buttons_in_view(browser: Browser, server: Server,
                                                             size: tuple[int, int]) -> None:
    width, height = size
    ctx = browser.new_context(viewport={"width": width, "height": height})
    page = ctx.new_page()
    page.goto(server.url + PRESENTABLE)
    total = page.locator("ol.steps > li").count()
    assert total > 1
    problems = []
    for n in range(1, total + 1):
        page.goto(f"{server.url}{PRESENTABLE}/{n}/present")
        tall = page.evaluate("document.documentElement.scrollHeight - innerHeight")
        if tall > 0:
            problems.append(f"slide {n} is {tall}px taller than the screen")
        nav = page.locator(".slide-nav").bounding_box()
        if not nav or nav["y"] + nav["height"] > height:
            problems.append(f"slide {n}: the slide buttons are off-screen")
        side = page.locator(".slide-side")
        if side.count():
            top = side.bounding_box()
            if not top or top["y"] > height - 100:
                problems.append(f"slide {n}: the widget starts below the screen")
            if width == 1280 and n == 8:
                page.screenshot(path=str(SHOTS / "present-slide-8-1280x720.png"))
    ctx.close()
    assert problems == [], "\n".join(problems)
