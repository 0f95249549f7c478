"""The flagship drills in real Chromium: a wrong answer, the worked solution, a right answer, then mastery."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from playwright.sync_api import Browser, Locator, Page, expect

from tests.e2e.conftest import AXE, Server, Watched, axe_violations, screenshot
from tests.unit.drills.drill_helpers import answers_for

pytestmark = pytest.mark.e2e
FLAGSHIP = "/lessons/what-ai-workloads-need"
DRILL_STEPS = {"bytes-per-parameter": f"{FLAGSHIP}/7", "will-it-fit": f"{FLAGSHIP}/17",
               "spot-the-mistake": "/lessons/what-is-gpu-infrastructure/23"}
WRONG = {
    "bytes-per-parameter": {"bytes_per_parameter": "3", "total": "1 GB", "gpus": "99"},
    "will-it-fit": {"per_gpu": "0.5 GB"},
}


def drill_of(page: Page) -> Locator:
    return page.locator("section.drill")


def fill(section: Locator, answers: dict[str, str]) -> None:
    """Type into text fields; for a yes/no or choice part, pick the option whose value or label is given."""
    for part, text in answers.items():
        box = section.locator(f'[data-part="{part}"]')
        if box.locator("input[type=radio]").count():
            by_value = box.locator(f'input[type=radio][value="{text}"]')
            (by_value if by_value.count() else box.get_by_label(text, exact=True)).check()
        else:
            box.get_by_role("textbox").fill(text)


def check(section: Locator) -> None:
    section.get_by_role("button", name="Check answer").click()


def expected_in_the_feedback(section: Locator) -> dict[str, str]:
    """What the worked solution says each part should have been, read off the page as a learner would."""
    found = {}
    for item in section.locator(".drill-results li").all():
        text = item.inner_text()
        match = re.search(r"Expected: (.+?)\.(?:\n|$)", text)
        assert match, text
        value = match.group(1)
        found[str(item.get_attribute("data-part"))] = value.split(" (")[0] if " GB (" in value else value
    return found


def parameters(section: Locator) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(section.get_attribute("data-drill-parameters") or "{}")
    return data


def answer_first_option_wrongly(section: Locator, name: str) -> None:
    if name == "will-it-fit":
        section.locator('[data-part="fits"] input[type=radio]').first.check()
        section.locator('[data-part="largest"] input[type=radio]').last.check()
    fill(section, WRONG[name])


@pytest.mark.parametrize("name", ["bytes-per-parameter", "will-it-fit"])
def test_wrong_then_worked_solution_then_right_then_mastered_and_done(
    watched: Watched, server: Server, name: str
) -> None:
    page = watched.page
    page.goto(server.url + DRILL_STEPS[name])
    section = drill_of(page)
    expect(section).to_contain_text("Question 1")
    expect(page.locator('[data-nav="next"]')).to_have_text("Skip for now →")  # done by mastery only
    page.evaluate("window.__sameDocument = true")

    answer_first_option_wrongly(section, name)
    check(section)
    expect(section.locator(".drill-feedback")).to_contain_text("parts right")
    expect(section.locator(".drill-solution li").first).to_be_visible()
    assert section.locator('.drill-results li[data-correct="false"]').count() >= 1

    fill(section, expected_in_the_feedback(section))
    check(section)
    expect(section.locator(".drill-feedback h3").first).to_contain_text("All right")
    expect(section.locator(".drill-feedback")).to_contain_text("answer 2 to this question")
    expect(section).to_contain_text("0 of 3 right at the first try")  # seen the solution: practice only

    for n in range(2, 5):
        section.get_by_role("button", name="Next question →").click()
        expect(section).to_contain_text(f"Question {n}")
        fill(section, answers_for(name, parameters(section)))
        check(section)
        expect(section.locator(".drill-feedback h3").first).to_contain_text("All right")
    expect(section.locator(".drill-mastered-note")).to_contain_text("This step is marked done")
    assert page.evaluate("window.__sameDocument") is True

    page.reload()
    expect(drill_of(page)).to_have_attribute("data-state", "mastered")
    expect(page.locator('[data-nav="next"]')).to_have_text("Next →")
    step = DRILL_STEPS[name].rsplit("/", 1)[1]
    page.goto(server.url + FLAGSHIP)
    expect(page.locator(f'li[data-step="{step}"]')).to_have_attribute("data-state", "mastered")
    watched.assert_clean()  # before the screenshot: Playwright's screenshot styles trip the CSP
    page.go_back()
    screenshot(page, f"drill-{name}-mastered")


def test_spot_the_mistake_teaches_the_principle_and_links_the_slide(watched: Watched, server: Server) -> None:
    page = watched.page
    page.goto(server.url + DRILL_STEPS["spot-the-mistake"])
    section = drill_of(page)
    right = answers_for("spot-the-mistake", parameters(section))["mistake"]
    wrong = next(v for v in "abcd" if v != right)
    fill(section, {"mistake": wrong})
    check(section)
    expect(section.locator(".drill-feedback h3").first).to_contain_text("Not this one")
    link = section.get_by_role("link", name=re.compile("Go back to slide"))
    expect(link).to_have_attribute("href", re.compile(r"^/lessons/what-is-gpu-infrastructure/\d+$"))
    expect(section.locator(".drill-solution")).to_contain_text("The principle:")
    watched.assert_clean()


def test_hints_arrive_one_at_a_time_and_the_keyboard_reaches_every_control(watched: Watched, server: Server) -> None:
    page = watched.page
    page.goto(server.url + DRILL_STEPS["will-it-fit"])
    section = drill_of(page)
    section.get_by_role("button", name=re.compile("Show a hint")).click()
    expect(section.locator(".drill-hints li")).to_have_count(1)
    section.get_by_role("button", name=re.compile("Another hint")).click()
    expect(section.locator(".drill-hints li")).to_have_count(2)
    section.locator('[data-part="per_gpu"] input').focus()
    page.keyboard.type("40 GB/s")
    page.keyboard.press("Enter")
    expect(section.locator("#d1-per_gpu-error, [id$='-per_gpu-error']").first).to_contain_text("is a rate")
    assert all("422" in e or "Unprocessable" in e for e in watched.console_errors)


@pytest.mark.parametrize("name", list(DRILL_STEPS))
def test_hints_opened_stay_open_after_an_answer_and_a_reload_and_the_next_question_differs(
    watched: Watched, server: Server, name: str
) -> None:
    page = watched.page
    page.goto(server.url + DRILL_STEPS[name])
    section = drill_of(page)
    section.get_by_role("button", name=re.compile("Show a hint")).click()
    section.get_by_role("button", name=re.compile("Another hint")).click()
    hints = section.locator(".drill-hints li")
    expect(hints).to_have_count(2)
    opened = hints.all_inner_texts()
    if name in WRONG:
        answer_first_option_wrongly(section, name)
    else:
        section.locator("input[type=radio]").first.check()
    check(section)
    expect(section.locator(".drill-feedback")).to_be_visible()
    expect(hints).to_have_count(2)  # the answer swapped the drill in again: the hints are still there
    page.reload()
    expect(drill_of(page).locator(".drill-hints li")).to_have_text(opened)
    before = parameters(drill_of(page))
    drill_of(page).get_by_role("button", name="Next question →").click()
    expect(drill_of(page)).to_have_attribute("data-question", "2")
    expect(drill_of(page).locator(".drill-hints li")).to_have_count(0)
    assert parameters(drill_of(page)) != before


@pytest.mark.parametrize("name", list(DRILL_STEPS))
@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_drill_steps_are_axe_clean_before_and_after_an_answer(
    browser: Browser, server: Server, name: str, scheme: str
) -> None:
    assert axe_violations(browser, server.url + DRILL_STEPS[name], color_scheme=scheme) == []
    ctx = browser.new_context(bypass_csp=True, viewport={"width": 360, "height": 800}, color_scheme=scheme)
    try:
        page = ctx.new_page()
        page.goto(server.url + DRILL_STEPS[name])
        section = drill_of(page)
        if name == "spot-the-mistake":
            fill(section, {"mistake": "a"})
        else:
            answer_first_option_wrongly(section, name)
        check(section)
        expect(section.locator(".drill-feedback")).to_be_visible()
        assert page.evaluate("document.documentElement.scrollWidth") <= 360
        page.add_script_tag(path=str(AXE))
        rules = "['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'best-practice']"
        result = page.evaluate(f"async () => await axe.run(document, {{runOnly: {rules}}})")
        assert [(v["id"], [n["target"] for n in v["nodes"]][:3]) for v in result["violations"]] == []
        screenshot(page, f"drill-{name}-feedback-360-{scheme}")
    finally:
        ctx.close()
