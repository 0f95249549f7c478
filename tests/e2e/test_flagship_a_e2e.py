"""The plan-family widgets of 'What AI Workloads Need' in real Chromium: predict, change, launch, fix."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import Browser, Locator, Page, expect

from app.engine.models import get_model
from app.engine.plan import PlanRequest, make_plan
from app.engine.sizing import cluster_scale, compute_time
from app.engine.text import num, seconds
from tests.e2e.conftest import Server, Watched, axe_violations, screenshot

pytestmark = pytest.mark.e2e
FLAGSHIP = "/lessons/what-ai-workloads-need"
MY_STEPS = (1, 2, 3, 4, 6, 10, 13, 14, 15, 16, 21)


def gpu_used(page: Page, gpu: int = 0) -> str:
    return page.locator(f'#dgx-panel [data-gpu="{gpu}"]').get_attribute("data-used") or ""


def commit_guess(widget: Locator, number: str, choice: str = "") -> None:
    """Answer a widget's predict-first question and wait for it to open."""
    if choice:
        widget.get_by_label(choice).check()
    widget.get_by_role("textbox").fill(number)
    widget.get_by_role("button", name="Commit my guess").click()
    expect(widget.locator(".predict-reveal")).to_be_visible()


def test_the_first_plan_asks_for_a_guess_then_shows_it_beside_the_answer(watched: Watched, server: Server) -> None:
    page = watched.page
    page.goto(server.url + FLAGSHIP + "/1")
    plan = page.locator('[data-widget="plan"]')
    expect(plan.locator(".plan-result")).to_have_count(0)
    commit_guess(plan, "30")
    expect(plan.locator("[data-guess]")).to_have_text("30 GB")
    expect(plan.locator("[data-actual]")).to_have_text("19.0 GB")
    expect(plan.locator('[data-value="total"]')).to_have_text("19.03 GB")
    expect(page.locator('#dgx-panel [data-gpu="0"]')).to_have_attribute("data-used", "19028985344")
    before = gpu_used(page)
    plan.get_by_label("Batch size").fill("8")
    expect(plan.locator('[data-value="total"]')).not_to_have_text("19.03 GB")
    expect(page.locator('#dgx-panel [data-gpu="0"]')).not_to_have_attribute("data-used", before)
    page.reload()
    expect(plan.locator("[data-guess]")).to_have_text("30 GB")  # kept with the learner's progress
    watched.assert_clean()


def test_launch_is_refused_before_it_starts_and_the_same_again(watched: Watched, server: Server) -> None:
    page = watched.page
    page.goto(server.url + FLAGSHIP + "/4")
    plan = page.locator('[data-widget="plan"]')
    commit_guess(plan, "150", choice="It is refused")  # 185.0 GB since issue 12 (was 510.4: stored scores)
    expect(plan.locator("[data-actual]")).to_have_text("it is refused, 185.0 GB")
    plan.get_by_role("button", name="Launch").click()
    outcome = plan.locator('[data-launch="refused"]')
    expect(outcome).to_contain_text("Launch refused before anything started. GPU 0 needs 185.0 GB but holds 80 GB")
    first = plan.locator(".plan-result").inner_text()
    with page.expect_response(re.compile(r"/widgets/plan\?.*launched=true")):
        plan.get_by_role("button", name="Launch").click()
    expect(outcome).to_be_visible()
    assert plan.locator(".plan-result").inner_text() == first
    expect(page.locator("#dgx-panel .why")).to_contain_text("GPU 0 needs 185.0 GB but holds 80 GB")
    screenshot(page, "flagship-a-launch-refused")
    watched.assert_clean()


def test_a_fix_applied_brings_gpu0_back_under_the_line(watched: Watched, server: Server) -> None:
    page = watched.page
    page.goto(server.url + FLAGSHIP + "/14")
    plan = page.locator('[data-widget="plan"]')
    expect(plan.locator(".verdict")).to_contain_text("Does not fit")
    expect(page.locator("#dgx-panel")).to_have_attribute("data-fits", "false")
    plan.locator('a[data-fix="gpus"]').click()
    expect(plan.locator(".verdict")).to_contain_text("Fits")
    expect(plan.get_by_label("GPUs")).to_have_value("2")
    expect(page.locator("#dgx-panel")).to_have_attribute("data-fits", "true")
    assert int(gpu_used(page, 1)) > 0
    expect(page).to_have_url(re.compile(r"/14\?(.*&)?w1\.gpus=2(&|$)"))
    watched.assert_clean()


def test_each_widget_answers_a_changed_input(watched: Watched, server: Server) -> None:
    page = watched.page

    def open_step(n: int, name: str) -> Locator:
        page.goto(f"{server.url}{FLAGSHIP}/{n}")
        return page.locator(f'[data-widget="{name}"]')

    w = open_step(2, "matmul")
    w.get_by_label("m: rows of the input").fill("64")
    expect(w.locator('[data-value="flops"]')).to_have_text("7,516,192,768")

    w = open_step(3, "training-state")
    before = gpu_used(page)
    w.get_by_label("Optimizer").select_option("sgd-momentum")
    expect(w.locator('[data-value="bytes_per_parameter"]')).to_have_text("12")
    expect(page.locator('#dgx-panel [data-gpu="0"]')).not_to_have_attribute("data-used", before)

    w = open_step(6, "cluster-scale")
    w.get_by_label("GPUs", exact=True).fill("8192")
    # 6·N·D plus causal attention at 8,192 tokens, at 41 % MFU on 8,192 GPUs
    days = cluster_scale(get_model("llama-3.1-405b"), 15.6e12, 0.41, 8192, 90).days_at_gpus
    expect(w.locator('[data-value="days"]')).to_have_text(f"{days:.0f} days")

    w = open_step(10, "train-vs-serve")
    w.get_by_label("Model").select_option("llama-3.1-70b")
    expect(w.locator('[data-value="serve_memory"]')).to_contain_text("on each of 2 GPUs")

    w = open_step(13, "compute-time")
    w.get_by_role("slider", name=re.compile("MFU")).fill("0.2")
    at_20 = compute_time(get_model("llama-3.1-8b"), 15e12, 8, 0.2).seconds  # model FLOPs with attention
    expect(w.locator('[data-value="time"]')).to_have_text(seconds(at_20))

    w = open_step(21, "plan")
    w.get_by_label("Mode", exact=True).select_option("train")
    expect(w.locator(".verdict")).to_contain_text("Does not fit")
    expect(page.locator("#dgx-panel .activity")).to_contain_text("training Llama 3.1 8B")
    watched.assert_clean()


def test_decode_speed_and_the_roofline_open_after_a_guess_and_move(watched: Watched, server: Server) -> None:
    page = watched.page
    page.goto(server.url + FLAGSHIP + "/15")
    w = page.locator('[data-widget="decode-speed"]')
    commit_guess(w, "1000")
    # (15.01 GB read + 1.07 GB of KV) at the achieved 68.5 % of 3.35 TB/s, plus a pass's fixed cost; ceiling 208
    serve = make_plan(PlanRequest(context_tokens=8192)).serve
    h200 = make_plan(PlanRequest(context_tokens=8192, gpu="h200")).serve
    assert serve is not None and h200 is not None
    expect(w.locator("[data-actual]")).to_have_text(f"{num(serve.tokens_per_second)} tokens/s")
    w.get_by_label("GPU", exact=True).select_option("h200")
    expect(w.locator('[data-value="tokens_per_second"]')).to_have_text(num(h200.tokens_per_second))
    expect(w.locator('[data-value="ceiling"]')).to_have_text("298")

    page.goto(server.url + FLAGSHIP + "/16")
    w = page.locator('[data-widget="roofline"]')
    commit_guess(w, "64")
    expect(w.locator("[data-actual]")).to_contain_text("276 sequences, counting the weights alone")
    before = gpu_used(page)
    batch = w.get_by_label("Batch size (sequences per decode step)")
    batch.fill("276")  # the answer itself can be typed (a 1-1024 slider could not land on it)
    expect(w.locator('[data-value="binds"]')).to_have_text("compute-bound")
    expect(page.locator('#dgx-panel [data-gpu="0"]')).not_to_have_attribute("data-used", before)
    batch.fill("512")  # 512 KV caches of 1,500 tokens: more than one H100 holds, and the widget says so
    expect(w.locator('[data-value="fits"]')).to_contain_text("does not fit on one H100")
    expect(page.locator("#dgx-panel")).to_have_attribute("data-fits", "false")
    # a suggested batch is a link under the answer: from the keyboard, it sets the box, the answer and the panel
    w.get_by_role("link", name="32", exact=True).focus()
    page.keyboard.press("Enter")
    expect(w.get_by_label("Batch size (sequences per decode step)")).to_have_value("32")
    expect(w.locator('[data-value="fits"]')).to_contain_text("Batch 32:")
    expect(page.locator("#dgx-panel")).to_have_attribute("data-fits", "true")
    expect(w.get_by_role("link", name="32", exact=True)).to_have_attribute("aria-current", "true")
    expect(page).to_have_url(re.compile(r"/16\?.*w1\.batch_size=32\b"))
    # (after the clicks: Playwright's full-page screenshot leaves style="" on hidden inputs, which htmx's swap
    # then copies, a CSP report no learner's page makes)
    screenshot(page, "flagship-a-roofline")
    watched.assert_clean()


def test_without_javascript_the_guess_and_the_plan_form_still_work(browser: Browser, server: Server) -> None:
    ctx = browser.new_context(java_script_enabled=False)
    page = ctx.new_page()
    page.goto(server.url + FLAGSHIP + "/1")
    plan = page.locator('[data-widget="plan"]')
    plan.get_by_role("textbox").fill("20")
    plan.get_by_role("button", name="Commit my guess").click()
    expect(page.locator('[data-widget="plan"] [data-actual]')).to_have_text("19.0 GB")
    page.goto(server.url + FLAGSHIP + "/14")
    plan = page.locator('[data-widget="plan"]')
    plan.get_by_label("GPUs").fill("2")
    plan.get_by_role("button", name="Update").click()
    expect(page.locator('[data-widget="plan"] .verdict')).to_contain_text("Fits")
    ctx.close()


# The predicting widgets, open (a fresh page asks for a guess first), and a refused launch with its fixes.
OPEN_WIDGETS = (
    "/widgets/decode-speed",
    "/widgets/roofline?batch_size=64",
    "/widgets/plan?model=llama-3.1-8b&mode=train&launch=true&launched=true&fixes=true&knobs=all",
)


def test_my_steps_are_axe_clean_in_light_and_dark_and_at_phone_width(browser: Browser, server: Server) -> None:
    for n in MY_STEPS:
        url = f"{server.url}{FLAGSHIP}/{n}"
        for scheme in ("light", "dark"):
            assert axe_violations(browser, url, color_scheme=scheme) == [], (n, scheme)
        assert axe_violations(browser, url, width=360) == [], (n, 360)
    for path in OPEN_WIDGETS:
        for scheme in ("light", "dark"):
            assert axe_violations(browser, server.url + path, color_scheme=scheme) == [], (path, scheme)


# The folded summary's full sentence, as the server writes it: what a screen reader must still hear on a phone.
FULL_SUMMARY = re.compile(
    r"^dgx-1 \d of 8 GPUs in use(, [\d,.]+ GB of 640 GB|; does not fit: GPU \d needs [\d,.]+ GB of its 80 GB)$"
)


def assert_panel_summary_is_one_whole_line(page: Page, where: str) -> None:
    """The dgx-1 summary shows on one line, nothing cut off, and still names everything to a screen reader."""
    summary = page.locator("#dgx-panel summary")
    lines, cut = summary.evaluate(
        "s => [s.getBoundingClientRect().height / parseFloat(getComputedStyle(s).lineHeight),"
        " s.scrollWidth - s.clientWidth]"
    )
    assert lines < 1.6, f"{where}: the panel summary wraps to {lines:.1f} lines"
    assert cut <= 0, f"{where}: the panel summary is cut off by {cut}px"
    expect(summary).to_have_accessible_name(FULL_SUMMARY)


def test_my_steps_fit_a_phone_and_the_panel_folds_to_one_line(browser: Browser, server: Server) -> None:
    ctx = browser.new_context(viewport={"width": 360, "height": 800})
    page = ctx.new_page()
    for n in MY_STEPS:
        page.goto(f"{server.url}{FLAGSHIP}/{n}")
        overflow = page.evaluate("document.documentElement.scrollWidth - document.documentElement.clientWidth")
        assert overflow <= 0, f"step {n} scrolls sideways by {overflow}px"
        assert_panel_summary_is_one_whole_line(page, f"step {n}")
    page.goto(f"{server.url}{FLAGSHIP}/4")
    commit_guess(page.locator('[data-widget="plan"]'), "150", choice="It is refused")
    expect(page.locator("#dgx-panel")).to_have_attribute("data-fits", "false")
    expect(page.locator("#dgx-panel summary")).to_contain_text("does not fit")
    assert_panel_summary_is_one_whole_line(page, "step 4 once the plan shows")
    details = page.locator("#dgx-panel details")
    expect(details).not_to_have_attribute("open", "")
    expect(page.locator("#dgx-panel summary")).to_contain_text("dgx-1")
    page.locator("#dgx-panel summary").click()
    expect(page.locator('#dgx-panel [data-gpu="0"]')).to_be_visible()
    screenshot(page, "flagship-a-phone-panel")
    ctx.close()
