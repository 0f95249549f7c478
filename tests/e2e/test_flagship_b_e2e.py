"""Part B of the flagship lesson in real Chromium: the live runs, the timeline, CPU vs GPU, cost, five questions."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import Browser, Locator, Page, expect

from app.engine.compute import training_model_flops
from app.engine.cost import CostAssumptions, break_even_utilisation, own_vs_rent
from app.engine.models import get_model
from app.engine.plan import PlanRequest, make_plan
from app.engine.text import seconds
from tests.e2e.conftest import Server, Watched, axe_violations, screenshot

pytestmark = pytest.mark.e2e
FLAGSHIP = "/lessons/what-ai-workloads-need"
STEPS = (5, 8, 9, 11, 12, 18, 19)


def widget(page: Page, name: str) -> Locator:
    return page.locator(f'[data-widget="{name}"]').first


def panel_used(page: Page, gpu: int) -> str:
    return page.locator(f'#dgx-panel [data-gpu="{gpu}"]').get_attribute("data-used") or ""


def test_the_training_run_moves_stops_at_its_end_and_stops_polling(watched: Watched, server: Server) -> None:
    page = watched.page
    page.goto(server.url + FLAGSHIP + "/5?w=1&play_seconds=5")
    run = widget(page, "training-run")
    progress = run.locator('[data-value="progress"]')
    expect(progress).to_have_text("0 %")
    run.get_by_role("button", name="Start the run").click()
    expect(run.get_by_role("button", name="Pause")).to_be_focused()  # focus stays on the run button
    expect(progress).not_to_have_text("0 %")
    expect(page.locator("#dgx-panel")).to_contain_text("100 % busy")
    expect(page).to_have_url(re.compile(r"started_at=\d+"))
    expect(run.locator(".live-status")).to_have_text("Finished", timeout=15_000)
    expect(progress).to_have_text("100 %")
    expect(run.get_by_role("button", name="Run again")).to_be_visible()
    expect(page.locator("#w1-announce")).to_contain_text("Training run finished")
    expect(page.locator("#dgx-panel")).to_contain_text("training Llama 3.1 8B on 8 GPUs: finished")
    polls: list[str] = []
    page.on("request", lambda r: polls.append(r.url) if "/widgets/training-run" in r.url else None)
    page.wait_for_timeout(1500)
    assert polls == [], "the finished run still polls"
    watched.assert_clean()


def test_pausing_the_run_freezes_it_and_a_reload_keeps_it_paused(watched: Watched, server: Server) -> None:
    page = watched.page
    page.goto(server.url + FLAGSHIP + "/5?w=1&play_seconds=20")
    run = widget(page, "training-run")
    run.get_by_role("button", name="Start the run").click()
    expect(run.locator('[data-value="progress"]')).not_to_have_text("0 %")
    run.get_by_role("button", name="Pause").click()
    expect(run.locator(".live-status")).to_have_text("Paused")
    frozen = run.locator('[data-value="progress"]').text_content()
    page.wait_for_timeout(1200)
    assert run.locator('[data-value="progress"]').text_content() == frozen
    page.reload()
    run = widget(page, "training-run")
    expect(run.locator(".live-status")).to_have_text("Paused")
    expect(run.locator('[data-value="progress"]')).to_have_text(frozen or "")
    watched.assert_clean()


def shown_percent(locator: Locator) -> float:
    return float((locator.text_content() or "").rstrip(" %"))


def test_turning_the_loader_down_mid_run_continues_from_where_it_is(watched: Watched, server: Server) -> None:
    page = watched.page
    page.goto(server.url + FLAGSHIP + "/5?w=1&play_seconds=20")
    run = widget(page, "training-run")
    progress = run.locator('[data-value="progress"]')
    run.get_by_role("button", name="Start the run").click()
    expect(progress).to_have_text(re.compile(r"^([6-9]|[1-9]\d) %$"), timeout=10_000)  # past 5 %
    before = shown_percent(progress)
    loader = run.get_by_label("Data loader, sequences a second")
    loader.click()
    loader.press("Control+a")
    with page.expect_response(lambda r: "/widgets/training-run" in r.url and "loader_samples_per_second=4" in r.url):
        page.keyboard.type("4")  # trusted key events: 64 becomes 4 sequences a second, half what the GPUs take
    expect(run.locator('[data-starved="true"]')).to_be_visible()
    readings = [shown_percent(progress)]
    for _ in range(4):
        page.wait_for_timeout(500)
        readings.append(shown_percent(progress))
    assert readings[0] >= before and readings == sorted(readings), (before, readings)  # never back
    expect(run.locator(".live-status")).to_have_text("Running")
    expect(page).to_have_url(re.compile(r"segments=[0-9._]+-[0-9._]+"))  # the run's past travels in the address
    watched.assert_clean()


def test_a_slow_loader_starves_the_run_and_fewer_gpus_empty_the_panel(watched: Watched, server: Server) -> None:
    page = watched.page
    page.goto(server.url + FLAGSHIP + "/5")
    run = widget(page, "training-run")
    run.get_by_label("Data loader, sequences a second").fill("4")  # 4 × 8,192 tokens: 57 % of what 8 GPUs take
    gpus = 8 * 989e12 * 0.4 / training_model_flops(get_model("llama-3.1-8b"), 1, 8192)
    waiting = f"they wait {1 - 32_768 / gpus:.0%}".replace("%", " %")
    expect(run.locator('[data-starved="true"]')).to_contain_text(f"{waiting} of the time")
    before = panel_used(page, 0)
    run.get_by_label("GPUs (ZeRO-3, data parallel)").select_option("4")
    expect(page.locator('#dgx-panel [data-gpu="7"]')).to_have_attribute("data-used", "0")
    assert panel_used(page, 0) != before
    watched.assert_clean()


def test_the_serving_run_saturates_and_says_so(watched: Watched, server: Server) -> None:
    page = watched.page
    page.goto(server.url + FLAGSHIP + "/8?w=1&play_seconds=20")
    serve = widget(page, "serving-run")
    expect(serve.locator('[data-saturated="false"]')).to_be_visible()
    serve.get_by_label("Requests arriving a second").fill("12")
    expect(serve.locator('[data-saturated="true"]')).to_contain_text("without bound")
    serve.get_by_role("button", name="Start the service").click()
    expect(serve.locator('[data-value="queue"]')).not_to_have_text("0")
    expect(page.locator("#dgx-panel")).to_contain_text("saturated, the queue grows")
    serve.get_by_role("button", name="Pause").click()
    expect(serve.locator(".live-status")).to_have_text("Paused")
    watched.assert_clean()


def test_the_serving_run_and_the_panel_tell_one_story(watched: Watched, server: Server) -> None:
    """Learner walk W19 and W21: the 70B runs on 2 GPUs at the batch its memory holds while the panel shows it
    fitting; after a burst, a lower rate reads 'draining', in the widget and the panel, not 'keeping up'."""
    page = watched.page
    page.goto(server.url + FLAGSHIP + "/8?w=1&play_seconds=20")
    serve = widget(page, "serving-run")
    serve.get_by_label("Model").select_option("llama-3.1-70b")
    serve.get_by_label("Batch limit (sequences)").select_option("256")
    expect(serve.locator('[data-batch-limit="memory"]')).to_contain_text("the same breakdown the dgx-1 panel shows")
    serve.get_by_role("button", name="Start the service").click()
    expect(page.locator("#dgx-panel")).to_contain_text("serving Llama 3.1 70B on 2 GPUs")
    expect(page.locator("#dgx-panel")).not_to_contain_text("does not fit")
    serve.get_by_label("Model").select_option("llama-3.1-8b")
    serve.get_by_label("Requests arriving a second").fill("40")
    serve.get_by_role("button", name="Start the service").click()
    expect(serve.locator('[data-state="saturated"]')).to_be_visible()
    page.wait_for_timeout(1500)  # a few simulated seconds of the burst
    serve.get_by_label("Requests arriving a second").fill("2")
    expect(serve.locator('[data-state="draining"]')).to_contain_text("Draining the queue.")
    expect(page.locator("#dgx-panel")).to_contain_text("draining a queue of")
    watched.assert_clean()


def test_the_request_timeline_grows_with_the_answer_and_moves_the_panel(watched: Watched, server: Server) -> None:
    page = watched.page
    page.goto(server.url + FLAGSHIP + "/9")
    timeline = widget(page, "request-timeline")
    total = timeline.locator('.answer [data-value="total"]')
    short = make_plan(PlanRequest(prompt_tokens=1000, output_tokens=500, context_tokens=8192)).serve
    long = make_plan(PlanRequest(prompt_tokens=1000, output_tokens=1000, context_tokens=8192)).serve
    assert short is not None and long is not None
    expect(total).to_have_text(seconds(short.request_seconds))
    timeline.get_by_label("Output tokens").fill("1000")
    expect(total).to_have_text(seconds(long.request_seconds))
    timeline.get_by_label("Model").select_option("llama-3.1-70b")
    expect(page.locator('#dgx-panel [data-gpu="1"]')).not_to_have_attribute("data-used", "0")
    expect(page).to_have_url(re.compile(r"output_tokens=1000"))
    watched.assert_clean()


def test_cpu_vs_gpu_names_the_peak_and_the_gap_narrows_with_amx(watched: Watched, server: Server) -> None:
    page = watched.page
    page.goto(server.url + FLAGSHIP + "/11")
    specs = widget(page, "cpu-vs-gpu")
    expect(specs.locator('[data-value="ratio"]')).to_contain_text("69×")
    specs.get_by_label("CPU peak compared").select_option("amx-bf16")
    expect(specs.locator('[data-value="ratio"]')).to_contain_text("4.3×")
    page.goto(server.url + FLAGSHIP + "/12")
    timing = widget(page, "cpu-vs-gpu")
    expect(timing.locator('[data-value="flops"]')).to_have_text("3.4 × 10¹³ FLOPs")  # 2·N·T + causal attention
    timing.get_by_label("Prompt tokens").fill("4096")
    expect(timing.locator('[data-value="flops"]')).to_have_text("7.0 × 10¹³ FLOPs")
    watched.assert_clean()


def test_own_vs_rent_moves_with_the_slider_from_the_keyboard(watched: Watched, server: Server) -> None:
    page = watched.page
    page.goto(server.url + FLAGSHIP + "/18")
    cost = widget(page, "own-vs-rent")
    at_60 = "owning" if own_vs_rent(0.6).cheaper == "own" else "renting"
    expect(cost.locator('[data-value="verdict"]')).to_contain_text(f"{at_60} is cheaper")
    slider = cost.get_by_label(re.compile("^Utilisation"))
    slider.focus()
    for _ in range(6):  # one key at a time: a newer request would abort the older (hx-sync), which htmx logs
        with page.expect_response(lambda r: "/widgets/own-vs-rent" in r.url):
            page.keyboard.press("ArrowLeft")
    expect(cost.locator("output")).to_have_text("30 %")
    expect(cost.locator('[data-value="verdict"]')).to_contain_text("renting is cheaper")
    cost.get_by_label("Rent, US$ per H100-hour").fill("2")
    even = break_even_utilisation(CostAssumptions(rent_usd_per_gpu_hour=2.0))
    assert even is not None
    expect(cost.locator('[data-value="break-even"]')).to_have_text(f"Owning pays above {even * 100:.0f} % utilisation")
    watched.assert_clean()


def test_the_five_questions_follow_the_model(watched: Watched, server: Server) -> None:
    page = watched.page
    page.goto(server.url + FLAGSHIP + "/19")
    five = widget(page, "five-questions")
    expect(five.locator('[data-value="fit"]')).to_have_text("Serving: 19.0 GB of 80 GB: fits.")
    five.get_by_label("Model").select_option("llama-3.1-70b")
    expect(five.locator('[data-value="fit"]')).to_contain_text("does not fit; it needs 2 GPUs")
    five.get_by_role("link", name="GPUs for memory and for a deadline").click()
    # the link keeps the answer's scenario (learner walk W34): its model, tokens, MFU and GPU count
    expect(page).to_have_url(re.compile(r"/6\?w=1&model=llama-3\.1-70b&tokens=[^&]+&mfu=0\.4&gpus=\d+#w1$"))
    gpus = re.search(r"gpus=(\d+)", page.url)
    assert gpus and widget(page, "cluster-scale").get_by_label(re.compile("GPUs")).first.input_value() == gpus[1]
    watched.assert_clean()


def test_without_javascript_start_reloads_the_page_with_the_run_going(browser: Browser, server: Server) -> None:
    ctx = browser.new_context(java_script_enabled=False)
    page = ctx.new_page()
    page.goto(server.url + FLAGSHIP + "/5")
    page.get_by_role("button", name="Start the run").click()
    expect(page.locator('[data-widget="training-run"] .live-status')).to_have_text("Running")
    expect(page.get_by_role("button", name="Pause")).to_be_visible()
    ctx.close()


def test_part_b_steps_are_axe_clean_light_dark_and_phone(browser: Browser, server: Server) -> None:
    for n in STEPS:
        for scheme in ("light", "dark"):
            assert axe_violations(browser, f"{server.url}{FLAGSHIP}/{n}", color_scheme=scheme) == [], (n, scheme)
        assert axe_violations(browser, f"{server.url}{FLAGSHIP}/{n}", width=360) == [], (n, 360)
    finished = "?w=1&started_at=1&run_of="  # a run started long ago: finished, with its checkpoints and chart
    for n in (5, 8):
        assert axe_violations(browser, f"{server.url}{FLAGSHIP}/{n}{finished}") == [], (n, "finished")


def test_part_b_steps_read_at_desktop_and_phone_width(browser: Browser, server: Server) -> None:
    for n in STEPS:
        for width in (1280, 360):
            ctx = browser.new_context(viewport={"width": width, "height": 800})
            page = ctx.new_page()
            page.goto(f"{server.url}{FLAGSHIP}/{n}")
            overflow = page.evaluate("document.documentElement.scrollWidth - document.documentElement.clientWidth")
            assert overflow <= 0, f"step {n} scrolls sideways by {overflow}px at {width}px"
            screenshot(page, f"flagship-b-step{n:02d}-{width}px")
            ctx.close()
