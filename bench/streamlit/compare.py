"""The weight-storage widget against the same widget in Streamlit (issue 4: "at least four times quicker").

Starts our server and `streamlit run bench/streamlit/weight_storage_app.py` (headless, no usage statistics, no
file watcher), one after the other, each on a free port, and in headless Chromium changes the parameter count
on each the way a person does:
- ours: the text box updates on every keystroke (htmx `input changed`), so the clock starts at the input event;
- Streamlit: st.number_input applies a typed value on Enter (or on leaving the box), so the value is typed
  first (its input event, then two frames for React to take it) and the clock starts at the Enter keydown.
The clock stops, inside the page, at the first DOM mutation after which the result shows the new figure in
GB and the new 4-bit bar (the last bar of both), so a stale element still showing the old result never counts.
Each side gets warm-up changes first; the two values alternate, so every change really changes the result.

Run: .venv-streamlit/bin/python bench/streamlit/compare.py [--samples 30]  (`make bench-streamlit` sets it up)
Prints figures only; nothing here asserts a time.
"""

from __future__ import annotations

import argparse
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from importlib.metadata import version
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from app.engine.text import gb  # noqa: E402
from app.widgets.weight_storage import Params, compute  # noqa: E402

APP = ROOT / "bench" / "streamlit" / "weight_storage_app.py"
LESSON_STEP = "/lessons/what-ai-workloads-need/1"  # its first widget is weight-storage at 8.03e9 parameters, 16 bits
VALUES = ("70000000000", "405000000000")  # typed in turn; neither is where either side starts
CHROMIUM_ARGS = [  # the e2e suite's (tests/e2e/conftest.py)
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
]


@dataclass(frozen=True)
class Side:
    """One implementation: its page, its parameter box, its result, and how a change is applied."""

    name: str
    path: str
    control: str  # CSS selector of the parameter box
    result: str  # CSS selector of the element holding the whole result
    commit: str  # "input": the input event applies the change; "enter": the Enter key does
    how: str  # said in the output


OURS = Side(
    "ours (FastAPI + htmx)",
    LESSON_STEP,
    '[data-widget="weight-storage"] input[name="parameters"]',
    '[data-widget="weight-storage"] .widget-result',
    "input",
    "text box; a keystroke's input event sends the update",
)
STREAMLIT = Side(
    f"Streamlit {version('streamlit')}",
    "/",
    '[data-testid="stNumberInput"] input',
    ".st-key-result",
    "enter",
    "st.number_input; value typed, then the Enter keydown applies it",
)

# Runs inside the page, so no driver traffic competes with the browser while a sample runs.
TIME_CHANGES = """async ({control, result, commit, values, expected, first, n, settle}) => {
  const setValue = Object.getOwnPropertyDescriptor(HTMLInputElement.prototype, 'value').set;
  const frame = () => new Promise((resolve) => requestAnimationFrame(resolve));
  const times = [];
  for (let i = first; i < first + n; i++) {
    await new Promise((resolve) => setTimeout(resolve, settle));  // let the previous update finish
    const want = expected[i % 2];
    const shown = () => {  // queried afresh each time: a re-rendered result is a new element
      const el = document.querySelector(result);
      return el !== null && want.every((text) => el.textContent.includes(text));
    };
    if (shown()) return {times, error: `the result already shows ${want} before the change`};
    const box = document.querySelector(control);
    box.focus();
    let stop;
    const changed = new Promise((resolve) => {
      const watch = new MutationObserver(() => {
        if (shown()) { stop = performance.now(); watch.disconnect(); resolve(true); }
      });
      watch.observe(document.body, {subtree: true, childList: true, characterData: true});
      setTimeout(() => { watch.disconnect(); resolve(false); }, 10000);
    });
    setValue.call(box, values[i % 2]);  // the native setter, so React's controlled input sees the change too
    let t0;
    if (commit === 'input') {
      t0 = performance.now();
      box.dispatchEvent(new Event('input', {bubbles: true}));
    } else {
      box.dispatchEvent(new Event('input', {bubbles: true}));
      await frame(); await frame();  // the typing is over; now the key that applies it
      t0 = performance.now();
      const key = {key: 'Enter', code: 'Enter', keyCode: 13, which: 13, bubbles: true, cancelable: true};
      box.dispatchEvent(new KeyboardEvent('keydown', key));
      box.dispatchEvent(new KeyboardEvent('keyup', key));
    }
    if (!(await changed)) return {times, error: `no result showing ${want} within 10 s of ${values[i % 2]}`};
    times.push(stop - t0);
  }
  return {times, error: null};
}"""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def serving(command: list[str], health: str, env: dict[str, str] | None = None, quiet: bool = False) -> Iterator[None]:
    """Run a server process until the block ends; wait until its health URL answers 200."""
    out = subprocess.DEVNULL if quiet else None
    proc = subprocess.Popen(command, cwd=ROOT, env={**os.environ, **(env or {})}, stdout=out)
    try:
        deadline = time.monotonic() + 120
        while True:
            if proc.poll() is not None:
                raise SystemExit(f"{command[2]} exited with {proc.returncode}")
            try:
                with urllib.request.urlopen(health, timeout=1) as answer:
                    if answer.status == 200:
                        break
            except OSError:
                if time.monotonic() > deadline:
                    raise SystemExit(f"{health} did not answer within 120 s") from None
                time.sleep(0.2)
        yield
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()


def ours(port: int) -> Any:
    env = {"GPU_CLASSROOM_DATA_DIR": tempfile.mkdtemp(), "GPU_CLASSROOM_SECRET_KEY": "bench"}
    command = [sys.executable, "-m", "uvicorn", "--factory", "app.main:create_app", "--host", "127.0.0.1",
               "--port", str(port), "--log-level", "warning", "--no-access-log"]
    return serving(command, f"http://127.0.0.1:{port}/healthz", env)


def streamlit(port: int) -> Any:
    command = [sys.executable, "-m", "streamlit", "run", str(APP), "--server.headless=true",
               "--browser.gatherUsageStats=false", "--server.fileWatcherType=none", "--server.runOnSave=false",
               "--server.address=127.0.0.1", f"--server.port={port}", "--logger.level=warning"]
    return serving(command, f"http://127.0.0.1:{port}/_stcore/health", quiet=True)  # no banner; errors still show


def expected(value: str) -> list[str]:
    """What the result shows once it has taken a value: the headline in GB and the 4-bit bar."""
    result = compute(Params(parameters=float(value), bits=16))
    return [gb(result.bytes), gb(result.bars[-1].bytes, 1)]


def time_side(browser: Any, base: str, side: Side, samples: int, warmup: int) -> list[float]:
    page = browser.new_context().new_page()
    try:
        page.goto(base + side.path)
        page.locator(side.control).first.wait_for(timeout=60000)
        page.locator(side.result).first.wait_for(timeout=60000)
        args = {"control": side.control, "result": side.result, "commit": side.commit, "values": list(VALUES),
                "expected": [expected(v) for v in VALUES], "settle": 250}
        for first, n in ((0, warmup), (warmup, samples)):  # carry on alternating where the warm-up stopped
            out = page.evaluate(TIME_CHANGES, {**args, "first": first, "n": n})
            if out["error"]:
                raise SystemExit(f"{side.name}: {out['error']}")
        return [float(t) for t in out["times"]]
    finally:
        page.context.close()


def pct(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--samples", type=int, default=30, help="timed changes on each side (default 30)")
    parser.add_argument("--warmup", type=int, default=6, help="untimed changes on each side first (default 6)")
    args = parser.parse_args()

    from playwright.sync_api import sync_playwright

    load = os.getloadavg()[0]
    times: dict[str, list[float]] = {}
    with sync_playwright() as p:
        chromium = "/usr/bin/chromium" if Path("/usr/bin/chromium").exists() else None
        browser = p.chromium.launch(executable_path=chromium, args=CHROMIUM_ARGS)
        try:
            for side, server in ((OURS, ours), (STREAMLIT, streamlit)):
                port = free_port()
                with server(port):
                    times[side.name] = time_side(browser, f"http://127.0.0.1:{port}", side, args.samples,
                                                 args.warmup)
        finally:
            browser.close()

    print(f"weight-storage widget in headless Chromium: the parameter count set to {' and '.join(VALUES)} in turn, "
          f"{args.samples} timed changes a side after {args.warmup} warm-up; from the event that applies the "
          "change to the result showing the new GB figure and 4-bit bar in the DOM")
    print(f"load average at the start (2 cores, shared): {load:.2f}")
    print(f"{'':26} {'p50':>8} {'p99':>8}  control and the event that applies a change   (ms)")
    for side in (OURS, STREAMLIT):
        s = times[side.name]
        print(f"{side.name:26} {statistics.median(s):8.2f} {pct(s, 0.99):8.2f}  {side.how}")
    a, b = times[STREAMLIT.name], times[OURS.name]
    print(f"{'Streamlit / ours':26} {statistics.median(a) / statistics.median(b):7.1f}× "
          f"{pct(a, 0.99) / pct(b, 0.99):7.1f}×")


if __name__ == "__main__":
    main()
