"""Author mode in real Chromium: a saved step shows on the open page by itself, a broken block shows its
file:line above the page that still reads, and fixing it clears the banner."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest
from playwright.sync_api import Browser, BrowserContext, expect

from tests.e2e.conftest import ROOT, axe_violations, free_port, watch

pytestmark = pytest.mark.e2e
LIVE_MS = 2_000  # the promise: a save shows on the open page within 2 s


@dataclass
class Author:
    url: str
    lessons: Path
    process: subprocess.Popen[bytes]


def start_author(tmp: Path, *args: str) -> Author:
    """`gpu-classroom new` a lesson into tmp/mine, then `gpu-classroom author tmp/mine` on a free port."""
    mine, empty = tmp / "mine", tmp / "builtin"
    empty.mkdir()
    cli = str(Path(sys.executable).with_name("gpu-classroom"))
    subprocess.run([cli, "new", "demo", "A demo lesson", "--dir", str(mine)], check=True, capture_output=True)
    port = free_port()
    env = {**os.environ, "GPU_CLASSROOM_DATA_DIR": str(tmp / "data"), "GPU_CLASSROOM_LESSONS_DIR": str(empty),
           "GPU_CLASSROOM_SECRET_KEY": "e2e-secret"}
    log = open(tmp / "author.log", "wb")  # noqa: SIM115 - closed with the process
    proc = subprocess.Popen([cli, "author", str(mine), "--port", str(port), *args], cwd=ROOT, env=env, stdout=log,
                            stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError((tmp / "author.log").read_text()[-2000:])
        try:
            if httpx.get(url + "/healthz", timeout=1).status_code == 200:
                return Author(url=url, lessons=mine, process=proc)
        except httpx.HTTPError:
            pass
        time.sleep(0.1)
    proc.kill()
    raise RuntimeError("author mode did not answer /healthz within 60 s")


@pytest.fixture
def author(tmp_path: Path) -> Iterator[Author]:
    a = start_author(tmp_path)
    yield a
    a.process.terminate()
    try:
        a.process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        a.process.kill()


def save(path: Path, text: str) -> None:
    """Write a file the way an editor saves it."""
    path.write_text(text, encoding="utf-8")


def test_a_saved_step_shows_on_the_open_page_by_itself_at_the_same_scroll(author: Author,
                                                                           context: BrowserContext) -> None:
    w = watch(context.new_page(), author.url)
    page = w.page
    page.set_viewport_size({"width": 1000, "height": 400})
    page.goto(f"{author.url}/lessons/demo/1")
    expect(page.locator("#author-mode")).to_contain_text("saving a file of this lesson refreshes this page")
    page.evaluate("window.scrollTo(0, 300)")
    page.wait_for_function("window.scrollY >= 300")
    step = author.lessons / "demo" / "01-a-model-is-its-weights.md"
    save(step, step.read_text().replace("Write short paragraphs.", "Write short paragraphs, saved a moment ago."))
    expect(page.get_by_text("saved a moment ago")).to_be_attached(timeout=LIVE_MS)
    page.wait_for_function("window.scrollY >= 300", timeout=LIVE_MS)  # restored where the reader was
    w.assert_clean()


def test_a_broken_block_shows_its_file_and_line_above_the_page_and_a_fix_clears_it(
    author: Author, context: BrowserContext, browser: Browser
) -> None:
    w = watch(context.new_page(), author.url)
    page = w.page
    page.goto(f"{author.url}/lessons/demo/1")
    step = author.lessons / "demo" / "01-a-model-is-its-weights.md"
    good = step.read_text()
    save(step, good.replace("bits: 16", "bits: [16"))
    line = good.splitlines().index("bits: 16") + 1
    banner = page.get_by_role("alert").filter(has_text="problem in this lesson")
    expect(banner).to_contain_text(f"{step}:{line}: bad YAML in widget block", timeout=LIVE_MS)
    expect(banner).to_contain_text("The page shows the lesson's last version without problems")
    expect(page.get_by_role("heading", name="A model is its weights")).to_be_visible()  # the last good version
    expect(page.locator('[data-widget="weight-storage"]')).to_be_visible()
    assert axe_violations(browser, f"{author.url}/lessons/demo/1") == []  # the banner reads right to everyone
    save(step, good)
    expect(banner).to_have_count(0, timeout=LIVE_MS)
    expect(page.locator("#author-mode")).to_contain_text("refreshes this page")
    w.assert_clean()


def test_a_broken_drill_is_reported_at_its_key_and_the_drill_still_works(author: Author,
                                                                         context: BrowserContext) -> None:
    w = watch(context.new_page(), author.url)
    page = w.page
    page.goto(f"{author.url}/lessons/demo/2")
    step = author.lessons / "demo" / "02-drill-memory-for-the-weights.md"
    good = step.read_text()
    save(step, good.replace("choices: [fp32, bf16, fp8, int4]", "choices: [fp32, bf16, fp7, int4]"))
    line = next(n for n, text in enumerate(good.splitlines(), 1) if "weights: size * bytes_per_parameter" in text)
    expect(page.get_by_role("alert")).to_contain_text(f"{step}:{line}: drill weights-to-serve: let.weights:",
                                                      timeout=LIVE_MS)
    expect(page.locator("section.drill")).to_contain_text("How much memory do the weights take?")
    w.assert_clean()


def test_a_broken_save_while_scrolled_down_shows_its_banner_in_view(author: Author, context: BrowserContext) -> None:
    w = watch(context.new_page(), author.url)
    page = w.page
    page.set_viewport_size({"width": 1000, "height": 400})
    page.goto(f"{author.url}/lessons/demo/2")
    page.evaluate("window.scrollTo(0, document.body.scrollHeight)")
    page.wait_for_function("window.scrollY > 300")
    step = author.lessons / "demo" / "02-drill-memory-for-the-weights.md"
    good = step.read_text()
    save(step, good.replace("    tolerance: 0.02", "    tolerence: 0.02"))
    banner = page.get_by_role("alert").filter(has_text="problem in this lesson")
    expect(banner).to_contain_text("unknown key 'tolerence' (did you mean tolerance?)", timeout=LIVE_MS)
    page.wait_for_function("window.scrollY > 300")  # the reader's place is kept ...
    expect(banner).to_be_in_viewport()  # ... and the banner is in view all the same
    page.mouse.wheel(0, 600)
    expect(banner).to_be_in_viewport()
    save(step, good)
    expect(banner).to_have_count(0, timeout=LIVE_MS)
    w.assert_clean()
