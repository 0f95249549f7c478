"""Author mode: time from saving a step file to the open page showing the change, in headless Chromium.

Copies the flagship lesson (the largest: 21 steps) into a temporary folder, serves it with
`gpu-classroom author`, opens step 1 and saves it N times with a new sentence; each time the clock runs from
the write to the sentence being in the page (the watcher's reload, the event stream, the page's reload).

Run: .venv/bin/python bench/author.py [--saves 10]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from playwright.sync_api import sync_playwright

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from bench.classroom import free_port, wait_healthy  # noqa: E402 - the server helpers of the class bench

LESSON = ROOT / "lessons" / "what-ai-workloads-need"
STEP = "01-a-model-is-a-pile-of-numbers.md"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--saves", type=int, default=10)
    args = parser.parse_args()
    tmp = Path(tempfile.mkdtemp())
    mine, empty = tmp / "mine", tmp / "builtin"
    empty.mkdir()
    shutil.copytree(LESSON, mine / LESSON.name)
    port = free_port()
    env = {**os.environ, "GPU_CLASSROOM_DATA_DIR": str(tmp / "data"), "GPU_CLASSROOM_LESSONS_DIR": str(empty),
           "GPU_CLASSROOM_SECRET_KEY": "bench"}
    cli = str(Path(sys.executable).with_name("gpu-classroom"))
    proc = subprocess.Popen([cli, "author", str(mine), "--port", str(port)], env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    try:
        wait_healthy(url)
        step = mine / LESSON.name / STEP
        original = step.read_text()
        times = []
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path="/usr/bin/chromium" if Path("/usr/bin/chromium").exists()
                                        else None, args=["--no-sandbox"])
            page = browser.new_page()
            page.goto(f"{url}/lessons/{LESSON.name}/1")
            page.wait_for_selector("#author-mode")
            for n in range(args.saves):
                marker = f"Saved sentence number {n}."
                start = time.perf_counter()
                step.write_text(original.replace("\n---\n", f"\n---\n\n{marker}\n", 1) if n % 2 == 0 else
                                original + f"\n{marker}\n")
                page.get_by_text(marker).wait_for(state="attached", timeout=10_000)
                times.append((time.perf_counter() - start) * 1000)
            browser.close()
    finally:
        proc.terminate()
        proc.wait(timeout=10)
        shutil.rmtree(tmp, ignore_errors=True)
    load = os.getloadavg()[0]
    print(f"author mode, save to page shown ({args.saves} saves of the 21-step lesson): "
          f"median {statistics.median(times):.0f} ms, max {max(times):.0f} ms (load average {load:.1f})")


if __name__ == "__main__":
    main()
