"""docs/authoring.md, followed word for word: write the files it shows, run the commands it gives, serve the
lesson as it says and answer its drills right and wrong in Chromium."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from playwright.sync_api import Browser, BrowserContext, Locator, expect

from app.drills.base import typed_form
from app.lessons.blocks import validate_lesson_block
from app.lessons.loader import load_lessons
from app.pages.lesson_drills import lesson_drills
from tests.e2e.conftest import ROOT, axe_violations, free_port, watch
from tests.e2e.test_drills_e2e import fill, parameters

pytestmark = pytest.mark.e2e
DOC = (ROOT / "docs" / "authoring.md").read_text()
FILE = re.compile(r"\*\*`([^`]+)`\*\*\n\n(`{3,4})\w*\n(.*?)\n\2\n", re.S)
SHELL = re.compile(r"```sh\n(.*?)\n```", re.S)
CLI = str(Path(sys.executable).with_name("gpu-classroom"))


def commands() -> list[str]:
    return [line for block in SHELL.findall(DOC) for line in block.splitlines() if line.strip()]


def command(starting: str) -> str:
    found = [c for c in commands() if starting in c]
    assert len(found) == 1, (starting, commands())
    return found[0]


def run(line: str, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """A shell line of the doc: `VAR=value gpu-classroom ...` with our gpu-classroom."""
    words = shlex.split(line)
    extra = dict(w.split("=", 1) for w in words if re.match(r"^[A-Z_]+=", w))
    args = [w for w in words if not re.match(r"^[A-Z_]+=", w)]
    assert args[0] == "gpu-classroom"
    return subprocess.run([CLI, *args[1:]], cwd=cwd, env={**env, **extra}, capture_output=True, text=True,
                          timeout=300)


@pytest.fixture(scope="module")
def written(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The doc's files, written where it says, in a fresh folder."""
    here = tmp_path_factory.mktemp("authoring")
    files = FILE.findall(DOC)
    assert [Path(f[0]).name for f in files] == ["lesson.yaml", "01-weights.md", "02-drill-weights.md",
                                                "03-drill-weights-or-cache.md"]
    for name, _, text in files:
        (here / name).parent.mkdir(parents=True, exist_ok=True)
        (here / name).write_text(text + "\n", encoding="utf-8")
    return here


def base_env(here: Path) -> dict[str, str]:
    """An author's shell: no lesson setting at all (the built-in lessons are found from the installed code)."""
    assert ROOT not in here.parents
    env = {k: v for k, v in os.environ.items() if not k.startswith("GPU_CLASSROOM_LESSONS")}
    return {**env, "GPU_CLASSROOM_DATA_DIR": str(here / "data"), "GPU_CLASSROOM_SECRET_KEY": "e2e-secret"}


def test_the_check_command_prints_what_the_doc_says(written: Path) -> None:
    line = command("gpu-classroom check")
    done = run(line, written, base_env(written))
    promised = re.search(r"It prints `([^`]+)`", DOC)
    assert promised and done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.strip() == promised.group(1)


@pytest.fixture(scope="module")
def served(written: Path) -> Iterator[str]:
    """The lesson served by the doc's `serve` line (on a free port), beside the built-in lessons."""
    line, port = command("gpu-classroom serve"), free_port()
    words = shlex.split(line)
    extra = dict(w.split("=", 1) for w in words if "=" in w and w.split("=")[0].isupper())
    log = open(written / "serve.log", "wb")  # noqa: SIM115 - closed with the process
    proc = subprocess.Popen([CLI, "serve", "--port", str(port)], cwd=written, env={**base_env(written), **extra},
                            stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 90
        while True:
            assert proc.poll() is None, (written / "serve.log").read_text()[-2000:]
            assert time.monotonic() < deadline, "the server did not start"
            try:
                if httpx.get(url + "/healthz", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                time.sleep(0.2)
        yield url
    finally:
        proc.terminate()
        proc.wait(timeout=20)


def right_answers(written: Path, name: str, shown: dict[str, Any]) -> dict[str, str]:
    """The engine's answers to the question on the page, typed as a learner would."""
    lessons, _ = load_lessons(written / "my-lessons", validate_lesson_block)
    drill = lesson_drills(lessons)[name]
    q = drill.question(0).model_copy(update={"parameters": shown})
    solution = drill.solve(q)
    return {p.id: typed_form(p, solution.expected[p.id]) for p in q.parts}


def check(section: Locator) -> None:
    section.get_by_role("button", name="Check answer").click()


def test_the_served_lesson_has_its_widget_and_its_drills_grade_right_and_wrong(
    served: str, written: Path, context: BrowserContext
) -> None:
    w = watch(context.new_page(), served)
    page = w.page
    page.goto(f"{served}/")
    page.get_by_role("link", name="Memory to serve a model").click()
    page.get_by_role("link", name="The weights come first").click()
    expect(page.locator('[data-widget="plan"]')).to_be_visible()
    expect(page.locator(".prose").first).to_contain_text("8.03 B parameters")

    page.goto(f"{served}/lessons/serving-memory/2")
    drill = page.locator("section.drill")
    right = right_answers(written, "serving-memory/weights-on-one-gpu", parameters(drill))
    weights = float(right["weights"].split()[0])
    fill(drill, {**right, "weights": f"{weights * 8:.6g} GB"})
    check(drill)
    wrong = drill.locator('[data-part="weights"]').filter(has_text="✗")
    expect(wrong).to_contain_text("That counts bits, not bytes. A byte holds 8 bits, so divide by 8.")
    expect(drill.locator(".drill-solution")).to_contain_text("parameters ×")
    drill.get_by_role("button", name="Next question").click()
    expect(drill).to_contain_text("Question 2")
    fill(drill, right_answers(written, "serving-memory/weights-on-one-gpu", parameters(drill)))
    check(drill)
    expect(drill.locator(".drill-feedback")).to_contain_text("✓ All right")

    page.goto(f"{served}/lessons/serving-memory/3")
    choice = page.locator("section.drill")
    right = right_answers(written, "serving-memory/weights-or-cache", parameters(choice))
    other = "weights" if right["larger"] == "kv-cache" else "kv-cache"
    fill(choice, {"larger": other})
    check(choice)
    expect(choice.locator('.drill-results [data-part="larger"]')).to_have_attribute("data-mistake", other)
    expect(choice.locator(".drill-results")).to_contain_text("batch × context")
    choice.get_by_role("button", name="Next question").click()
    expect(choice).to_contain_text("Question 2")
    fill(choice, right_answers(written, "serving-memory/weights-or-cache", parameters(choice)))
    check(choice)
    expect(choice.locator(".drill-feedback")).to_contain_text("✓ All right")
    w.assert_clean()


def test_the_served_lesson_can_be_taught_as_a_class_beside_the_built_in_ones(served: str) -> None:
    with httpx.Client(base_url=served) as c:
        teach = c.get("/teach").text
    assert '<option value="serving-memory"' in teach and '<option value="what-ai-workloads-need"' in teach


@pytest.mark.parametrize("step", [1, 2, 3])
def test_the_lessons_steps_are_axe_clean(served: str, browser: Browser, step: int) -> None:
    assert axe_violations(browser, f"{served}/lessons/serving-memory/{step}") == []
