"""The projector for a room, in real Chromium at a projector's sizes: the revealed drill fits one screen, reads
as bars per part and named mistakes, the QR is big and the join address unbroken; a closed class says so."""

from __future__ import annotations

import json

import pytest
from playwright.sync_api import Browser, Page, expect

from app.drills.registry import all_drills
from tests.e2e.conftest import DOCS_SHOTS, Server, watch
from tests.e2e.test_classroom_e2e import LESSON, _axe_with, host_class, join_class
from tests.unit.drills.drill_helpers import answers_for

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
        answer_with_a_classic_mistake(learner.pages[0], server.url)
        dash.reload()
        dash.locator(f"[data-reveal='{DRILL_STEP}:{DRILL}']").click()
        room = teacher.new_page()
        room.set_viewport_size({"width": width, "height": height})
        room.goto(f"{server.url}/teach/{code}/projector")
        reveal = room.locator(".proj-reveal")
        expect(reveal).to_be_visible()
        expect(reveal).to_contain_text("Bytes of training state per parameter")
        expect(reveal.locator("[data-part='bytes_per_parameter'] .dist-count")).to_have_text("0 of 1")
        expect(reveal.locator("[data-mistake]")).to_contain_text("weights alone")
        expect(reveal).not_to_contain_text("bytes_per_parameter:")
        fits = room.evaluate("[document.documentElement.scrollHeight, innerHeight,"
                             " document.documentElement.scrollWidth, document.documentElement.clientWidth]")
        assert fits[0] <= fits[1] and fits[2] <= fits[3], f"the projector scrolls at {width}×{height}: {fits}"
        box = reveal.bounding_box()
        assert box and box["y"] + box["height"] <= height, "the reveal sits below the fold"
        qr = room.locator("svg.qr").bounding_box()
        assert qr and qr["width"] >= (300 if height >= 1080 else 200), qr
        url = room.locator("[data-join-url]")
        assert url.evaluate("e => e.getClientRects().length") == 1  # one line box: the address does not wrap
        url_box = url.bounding_box()
        assert url_box and url_box["x"] + url_box["width"] <= width
        if width == 1920:
            SCREENSHOT.parent.mkdir(parents=True, exist_ok=True)
            room.screenshot(path=str(SCREENSHOT))
            for scheme in ("light", "dark"):
                assert _axe_with(browser, teacher.cookies(), room.url, width, scheme) == [], scheme
    finally:
        teacher.close()
        learner.close()


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
