"""The companion lessons in real Chromium: the profile in a Web Worker, the sheet that keeps every edit, slides."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import Browser, BrowserContext, Page, Route, expect

from tests.e2e.conftest import Server, Watched, axe_violations, screenshot, watch

pytestmark = pytest.mark.e2e
WORK = "/lessons/understanding-the-work"
SLIDES = "/lessons/what-is-gpu-infrastructure"


def expected_network_noise(errors: list[str]) -> bool:
    """Console lines a refused save (422), a deliberately cut connection or a save replaced by a newer one (hx-sync,
    as DESIGN.md asks) leave behind, and nothing else."""
    noise = ("422", "Unprocessable", "ERR_INTERNET_DISCONNECTED", "ERR_FAILED", "htmx:sendError", "htmx:afterRequest",
             "htmx:sendAbort")
    return all(any(n in e for n in noise) for e in errors)


def test_the_profile_runs_in_the_browser_and_its_timings_reach_the_sheet_and_its_markdown(
    watched: Watched, server: Server
) -> None:
    page = watched.page
    page.goto(server.url + WORK + "/6")
    widget = page.locator('[data-widget="profile"]')
    widget.get_by_label("Size of the generated file").select_option("8")
    widget.get_by_label("Repeats of each phase").fill("2")
    widget.get_by_role("button", name="Run the profile").click()
    expect(widget.locator("[data-profile-progress]")).to_be_visible()
    result = widget.locator("[data-profile-result]")
    expect(result).to_be_visible(timeout=60_000)
    timing = re.compile(r"^\d[\d.]* (µs|ms|s)$")
    for phase in ("read", "parse", "arithmetic"):
        expect(result.locator(f'tr[data-phase="{phase}"] [data-cell="median"]')).to_have_text(timing)
    expect(result.locator("[data-profile-caption]")).to_contain_text("8 MB of CSV, 800,000 numbers, 2 repeats")
    expect(result.locator("[data-profile-caption]")).to_contain_text("logical cores")

    widget.get_by_role("button", name="Attach these timings to my workload sheet").click()
    expect(page.locator("#profile-attach-note")).to_have_text("Attached to your sheet.")
    medians = [result.locator(f'tr[data-phase="{p}"] [data-cell="median"]').inner_text() for p in ("read", "parse")]

    page.goto(server.url + "/companion/sheet")
    saved = page.locator('.measurement[data-source="browser"]').first
    for phase, shown in zip(("read", "parse"), medians, strict=True):
        expect(saved.locator(f'tr[data-phase="{phase}"] td').first).to_have_text(shown)
    expect(saved.locator('tr[data-phase="arithmetic"] td').first).to_have_text(timing)
    markdown = page.request.get(server.url + "/companion/sheet.md").text()
    assert "### In the browser:" in markdown
    for phase, shown in zip(("read", "parse"), medians, strict=True):
        assert f"| {phase} | {shown} |" in markdown
    assert re.search(r"\| arithmetic \| \d[\d.]* (µs|ms|s) \|", markdown)
    watched.assert_clean()


def test_slides_go_full_screen_and_move_with_the_arrow_keys(watched: Watched, server: Server) -> None:
    page = watched.page
    page.goto(server.url + SLIDES + "/1/present")
    counter = page.locator("[data-slide-counter]")
    expect(counter).to_have_text("1 / 23")
    page.get_by_role("button", name="Full screen").click()
    page.wait_for_function("document.fullscreenElement !== null")
    page.evaluate("window.__sameDocument = true")
    page.keyboard.press("ArrowRight")
    expect(counter).to_have_text("2 / 23")
    page.keyboard.press("ArrowRight")
    expect(counter).to_have_text("3 / 23")
    expect(page).to_have_url(re.compile(SLIDES + "/3/present$"))
    expect(page).to_have_title(re.compile("^Interconnect"))
    page.keyboard.press("ArrowLeft")
    expect(counter).to_have_text("2 / 23")
    assert page.evaluate("document.fullscreenElement !== null"), "moving between slides left full screen"
    assert page.evaluate("window.__sameDocument") is True
    page.keyboard.press("n")
    expect(page.locator("#slide-notes")).to_be_visible()
    expect(page.locator("#slide-notes")).to_contain_text("capacity is a wall")
    page.keyboard.press("ArrowRight")
    expect(page.locator("#slide-notes")).to_contain_text("Data-parallel training")  # the toggle stays on
    screenshot(page, "companion-present-fullscreen")
    page.get_by_role("button", name="Leave full screen").click()
    page.wait_for_function("document.fullscreenElement === null")
    watched.assert_clean()


def test_the_notes_window_follows_the_slides_and_can_move_them(context: BrowserContext, server: Server) -> None:
    main = watch(context.new_page(), server.url)
    main.page.goto(server.url + SLIDES + "/6/present")
    with context.expect_page() as opened:
        main.page.get_by_role("link", name="Notes in a second window").click()
    notes = opened.value
    expect(notes.locator("#notes-title")).to_have_text("Sharing and isolation")
    main.page.keyboard.press("ArrowRight")
    expect(notes.locator("#notes-title")).to_have_text("Power and heat")
    expect(notes.locator(".notes-text")).to_contain_text("Thermal throttling produces no error message")
    notes.keyboard.press("ArrowRight")
    expect(main.page.locator("[data-slide-counter]")).to_have_text("8 / 23")
    expect(notes.locator("#notes-title")).to_have_text("Bandwidth vs capacity")
    main.assert_clean()


def test_the_sheet_keeps_edits_through_a_lost_connection_and_a_reload(context: BrowserContext, server: Server) -> None:
    watched = watch(context.new_page(), server.url)
    page = watched.page
    page.goto(server.url + WORK + "/5")
    status = page.locator("#sheet-status")
    page.get_by_label("Where does the data live? How many items, how many bytes?").fill("Photos on the team share")
    expect(status).to_have_text("All changes saved.")

    def cut_saves(route: Route) -> None:
        if route.request.method == "POST":
            route.abort("internetdisconnected")
        else:
            route.continue_()

    page.route("**/companion/sheet", cut_saves)
    outputs = page.get_by_label(
        "What does the job write (checkpoints, predictions, reports), how large, and how often?"
    )
    outputs.fill("checkpoints every half hour")
    expect(status).to_contain_text("kept on this device")
    page.reload()  # the connection is still down: the edit comes back from this device
    expect(page.locator("#sheet-outputs")).to_have_value("checkpoints every half hour")
    expect(page.locator("#sheet-input")).to_have_value("Photos on the team share")
    page.unroute("**/companion/sheet")
    page.evaluate("window.dispatchEvent(new Event('online'))")
    expect(status).to_have_text("All changes saved.")
    fields = {f["key"]: f["value"] for f in page.request.get(server.url + "/companion/sheet.json").json()["fields"]}
    assert fields["outputs"] == "checkpoints every half hour" and fields["input"] == "Photos on the team share"
    assert expected_network_noise(watched.console_errors), watched.console_errors
    assert watched.off_server() == []


def test_a_number_still_to_measure_asks_where_it_was_measured(watched: Watched, server: Server) -> None:
    page = watched.page
    page.goto(server.url + WORK + "/5")
    page.locator("#sheet-computation-0-label").fill("parameters")
    box = page.locator("#sheet-computation-0-value")
    box.fill("25 M")
    message = page.locator("#sheet-computation-error")
    expect(message).to_contain_text("“parameters” is marked to measure but holds a figure")
    expect(box).to_have_attribute("aria-invalid", "true")
    expect(page.locator("#sheet-status")).to_contain_text("Not saved: 1 field needs a change")
    page.locator("#sheet-computation-0-note").fill("its model card")
    expect(message).to_be_empty()
    expect(page.locator("#sheet-status")).to_have_text("All changes saved.")
    expect(box).not_to_have_attribute("aria-invalid", "true")
    page.locator("#sheet-computation-1-label").fill("precision")
    page.locator("#sheet-computation-1-value").fill("16 bits")
    page.locator("input[name=computation_1_status][value=known]").check()
    expect(page.locator("#sheet-status")).to_have_text("All changes saved.")
    numbers = next(f for f in page.request.get(server.url + "/companion/sheet.json").json()["fields"]
                   if f["key"] == "computation")["numbers"]
    assert [(n["label"], n["status"]) for n in numbers] == [("parameters", "to measure"), ("precision", "known")]
    assert expected_network_noise(watched.console_errors), watched.console_errors


def test_more_loader_workers_show_the_gpus_busier_without_a_page_load(watched: Watched, server: Server) -> None:
    page = watched.page
    page.goto(server.url + WORK + "/3")
    widget = page.locator('[data-widget="data-path"]')
    expect(widget.locator('[data-value="busy"]')).to_have_text("GPUs busy 40 %")
    page.evaluate("window.__sameDocument = true")
    slider = widget.get_by_role("slider", name="Loader workers")
    slider.focus()
    for workers in range(5, 11):  # one key at a time, as a learner watching each answer would
        slider.press("ArrowRight")
        expect(widget.locator('[data-value="busy"]')).to_have_text(f"GPUs busy {workers * 10} %")
    expect(widget.locator(".widget-result")).to_have_attribute("data-limit", "compute")
    expect(page.locator("#dgx-panel .gpu-util").first).to_contain_text("100 % busy")
    assert page.evaluate("window.__sameDocument") is True
    watched.assert_clean()


def test_companion_pages_are_axe_clean_in_light_and_dark(browser: Browser, server: Server) -> None:
    pages = [WORK + "/3", WORK + "/5", WORK + "/6", SLIDES + "/2", SLIDES + "/4", SLIDES + "/7", SLIDES + "/8",
             SLIDES + "/21", SLIDES + "/3/present", SLIDES + "/3/notes", "/companion/sheet"]
    for path in pages:
        for scheme in ("light", "dark"):
            assert axe_violations(browser, server.url + path, color_scheme=scheme) == [], (path, scheme)
    for path in (WORK + "/3", SLIDES + "/8/present"):
        assert axe_violations(browser, server.url + path, width=360) == [], path


@pytest.mark.parametrize("path", [WORK + "/3", WORK + "/5", WORK + "/6", SLIDES + "/8", SLIDES + "/2/present"])
def test_companion_pages_fit_a_phone_without_sideways_scrolling(browser: Browser, server: Server, path: str) -> None:
    for scheme in ("light", "dark"):
        ctx = browser.new_context(viewport={"width": 360, "height": 800}, color_scheme=scheme)
        page: Page = ctx.new_page()
        page.goto(server.url + path)
        overflow = page.evaluate("document.documentElement.scrollWidth - document.documentElement.clientWidth")
        assert overflow <= 0, f"{path} scrolls sideways by {overflow}px at 360 px"
        screenshot(page, "companion" + path.replace("/", "-") + f"-360-{scheme}")
        ctx.close()
