"""The projector for a room, in real Chromium at a projector's sizes: before a reveal the QR is big, the join address
unbroken and each step's bar carries its title; a revealed drill fits one screen (1280×720; two of them 1920×1080),
reads as bars per part and named mistakes, and shows the right answer and the engine's worked solution on request,
while the join address steps aside to one line; every text is at least 24 px at 1920×1080; no link the room should
not follow; a closed class says so."""

from __future__ import annotations

import json
import re

import pytest
from playwright.sync_api import Browser, Page, expect

from app.drills.registry import all_drills
from tests.e2e.conftest import DOCS_SHOTS, Server, watch
from tests.e2e.test_classroom_e2e import LESSON, _axe_with, host_class, join_class
from tests.unit.drills.drill_helpers import answers_for

# Every visible text's computed size, the smallest first: [size px, tag, text] (SVG and visually hidden text aside).
SMALLEST_TEXT = """() => { const found = [];
  const walk = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  while (walk.nextNode()) { const n = walk.currentNode; const el = n.parentElement; if (!n.textContent.trim()) continue;
    if (el.closest('.visually-hidden, svg')) continue; const r = el.getBoundingClientRect();
    if (!r.width || !r.height) continue;
    found.push([parseFloat(getComputedStyle(el).fontSize), el.tagName, n.textContent.trim().slice(0, 40)]); }
  return found.sort((a, b) => a[0] - b[0]).slice(0, 3); }"""
FITS = ("[document.documentElement.scrollHeight, innerHeight, document.documentElement.scrollWidth,"
        " document.documentElement.clientWidth]")

pytestmark = pytest.mark.e2e
DRILL = "bytes-per-parameter"
DRILL_STEP = 7
SCREENSHOT = DOCS_SHOTS / "projector-reveal-1920.png"


def answer_with_a_classic_mistake(page: Page, base: str) -> None:
    """On the drill step, answer every part right but bytes per parameter, which gets the weights alone."""
    page.goto(f"{base}{LESSON}/{DRILL_STEP}")
    drill = all_drills()[DRILL]
    parameters = json.loads(page.locator("[data-drill-parameters]").get_attribute("data-drill-parameters") or "{}")
    question = drill.question(0).model_copy(update={"parameters": parameters})
    wrong = next(v for v in drill.solve(question).variants
                 if v.part == "bytes_per_parameter" and v.id == "weights-only")
    answers = {**answers_for(DRILL, parameters), "bytes_per_parameter": f"{wrong.value:g}"}
    for part, typed in answers.items():
        page.locator(f"#d1-{part}, [name='answer-{part}']").first.fill(typed)
    page.get_by_role("button", name="Check answer").click()
    expect(page.locator(".drill-feedback")).to_be_visible()


def assert_fits(room: Page, width: int, height: int, what: str) -> None:
    fits = room.evaluate(FITS)
    assert fits[0] <= fits[1] and fits[2] <= fits[3], f"{what} scrolls at {width}×{height}: {fits}"
    if width == 1920:
        smallest = room.evaluate(SMALLEST_TEXT)
        assert smallest[0][0] >= 24, f"{what}: text under 24 px at 1920×1080: {smallest}"


@pytest.mark.parametrize("size", [(1920, 1080), (1280, 720)])
def test_the_projector_reveal_fits_the_screen_and_reads_from_the_back_row(
    browser: Browser, server: Server, size: tuple[int, int]
) -> None:
    width, height = size
    teacher = browser.new_context(viewport={"width": 1280, "height": 900})
    learner = browser.new_context(viewport={"width": 1280, "height": 900})
    try:
        dash = watch(teacher.new_page(), server.url).page
        code = host_class(dash, server.url, f"Room {width}")
        join_class(learner.new_page(), server.url, code, "Ada")
        room = teacher.new_page()
        room.set_viewport_size({"width": width, "height": height})
        room.goto(f"{server.url}/teach/{code}/projector")
        expect(room.get_by_role("link", name="Dashboard")).to_have_count(0)  # nothing for the room to follow
        expect(room.locator("[data-step='7'] .step-name")).to_have_text("7. Drill: bytes per parameter to train")
        qr = room.locator("svg.qr").bounding_box()
        assert qr and qr["width"] >= (300 if height >= 1080 else 200), qr
        url = room.locator("[data-join-url]")
        assert url.evaluate("e => e.getClientRects().length") == 1  # one line box: the address does not wrap
        url_box = url.bounding_box()
        assert url_box and url_box["x"] + url_box["width"] <= width
        assert_fits(room, width, height, "the projector before a reveal")

        answer_with_a_classic_mistake(learner.pages[0], server.url)
        dash.reload()
        dash.locator(f"[data-reveal='{DRILL_STEP}:{DRILL}']").dispatch_event("click")  # swapped every 2 s
        reveal = room.locator(".proj-reveal")
        expect(reveal).to_be_visible(timeout=4_000)  # the projector's next poll
        expect(reveal).to_contain_text("Bytes of training state per parameter")
        expect(reveal.locator("[data-part='bytes_per_parameter'] .dist-count")).to_have_text("0 of 1")
        expect(reveal.locator("[data-mistake]")).to_contain_text("weights alone")
        expect(reveal).not_to_contain_text("bytes_per_parameter:")
        expect(room.locator("svg.qr")).to_have_count(0)  # the join panel stepped aside to one line
        expect(room.locator("[data-join-line]")).to_contain_text(code)
        assert_fits(room, width, height, "a revealed drill")

        room.get_by_role("button", name="Show the answer").click()
        answer = room.locator("[data-answer-shown]")
        expect(answer).to_contain_text("The right answer")
        expect(answer.locator("ul li")).to_have_count(3)  # each part: what it asks, and the engine's answer
        expect(answer.locator("ul li").first).to_contain_text(re.compile(r"per parameter: \d+ bytes per parameter"))
        expect(answer.locator(".proj-solution li")).to_have_count(3)
        assert_fits(room, width, height, "a revealed drill with its answer and worked solution")
        box = reveal.bounding_box()
        assert box and box["y"] + box["height"] <= height, "the reveal sits below the fold"
        if width == 1920:
            SCREENSHOT.parent.mkdir(parents=True, exist_ok=True)
            room.screenshot(path=str(SCREENSHOT))
            for scheme in ("light", "dark"):
                assert _axe_with(browser, teacher.cookies(), room.url, width, scheme) == [], scheme
    finally:
        teacher.close()
        learner.close()


def test_two_revealed_drills_fit_a_1920_by_1080_projector(browser: Browser, server: Server) -> None:
    teacher = browser.new_context(viewport={"width": 1280, "height": 900})
    learners = [browser.new_context(viewport={"width": 1280, "height": 900}) for _ in range(2)]
    try:
        dash = watch(teacher.new_page(), server.url).page
        code = host_class(dash, server.url, "Two reveals")
        for n, ctx in enumerate(learners):
            page = ctx.new_page()
            join_class(page, server.url, code, f"L{n}")
            answer_with_a_classic_mistake(page, server.url)
            page.goto(f"{server.url}{LESSON}/17")
            drill = page.locator("[data-drill='will-it-fit']")
            for field in drill.locator("input[type=text]").all():
                field.fill("3")
            for group in drill.locator("fieldset.drill-part").all():
                group.locator("input[type=radio]").first.check()
            drill.get_by_role("button", name="Check answer").click()
            expect(drill.locator(".drill-feedback")).to_be_visible()
        dash.reload()
        for key in (f"{DRILL_STEP}:{DRILL}", "17:will-it-fit"):
            dash.locator(f"[data-reveal='{key}']").dispatch_event("click")  # the drills are swapped every 2 s
            expect(dash.locator(f"[data-reveal='{key}']")).to_contain_text("Hide on projector")
        room = teacher.new_page()
        room.set_viewport_size({"width": 1920, "height": 1080})
        room.goto(f"{server.url}/teach/{code}/projector")
        expect(room.locator(".proj-reveal")).to_have_count(2)
        assert_fits(room, 1920, 1080, "two revealed drills")
        room.set_viewport_size({"width": 1280, "height": 720})
        assert room.evaluate(FITS)[0] <= 720  # the same layout, scaled: it fits a 1280×720 screen too
        room.locator("[data-drill='17:will-it-fit']").get_by_role("button", name="Show the answer").click()
        expect(room.locator("[data-answer-shown]")).to_contain_text("Worked solution")
        expect(room.locator(".proj-reveal")).to_have_count(1)  # the answer on show has the screen; the other a line
        expect(room.locator(".proj-compact [data-drill='7:bytes-per-parameter']")).to_be_visible()
        room.set_viewport_size({"width": 1920, "height": 1080})
        assert_fits(room, 1920, 1080, "will-it-fit's answer and worked solution")
    finally:
        teacher.close()
        for ctx in learners:
            ctx.close()


def test_a_closed_class_projector_says_it_is_closed_without_join_or_qr(browser: Browser, server: Server) -> None:
    teacher = browser.new_context(viewport={"width": 1920, "height": 1080})
    try:
        dash = watch(teacher.new_page(), server.url).page
        code = host_class(dash, server.url, "Closing room")
        room = teacher.new_page()
        room.goto(f"{server.url}/teach/{code}/projector")
        expect(room.locator("svg.qr")).to_be_visible()
        dash.get_by_role("button", name="Close the class").click()
        expect(room.get_by_role("heading", name="This class is closed")).to_be_visible(timeout=6_000)  # next poll
        expect(room.locator("svg.qr")).to_have_count(0)
        expect(room.get_by_text("Join at")).to_have_count(0)
    finally:
        teacher.close()
