"""Widget update latency: in-process through the ASGI app, over real HTTP under concurrent clients,
and in headless Chromium from the input event to the swapped result.

The Chromium figures are taken inside the page (the control is set and its input event fired by a script,
the clock stops at htmx:afterSwap), so no driver traffic competes for the two cores while a sample runs;
predict-first widgets get a committed guess first, and a widget with no text box or slider moves its first
list. The floor line is a bare XMLHttpRequest from the same page: what any update pays before our code.

Run: .venv/bin/python bench/widgets.py [--requests 200] [--clients 20] [--browser-samples 30]
Prints figures only; nothing here asserts a time.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from app.lessons.blocks import validate_lesson_block  # noqa: E402
from app.lessons.loader import load_lessons  # noqa: E402
from app.main import create_app  # noqa: E402
from app.settings import Settings  # noqa: E402
from app.widgets.registry import all_widgets  # noqa: E402

HX = {"HX-Request": "true"}


def widget_urls() -> dict[str, tuple[str, str]]:
    """For each widget: its update URL (params from its first lesson block) and the step showing it."""
    lessons, _ = load_lessons(ROOT / "lessons", validate_lesson_block, strict=False)
    found: dict[str, tuple[str, str]] = {}
    for lesson in lessons:
        for step in lesson.steps:
            for index, block in enumerate(step.widgets(), start=1):
                if block.name in found:
                    continue
                query = {k: v for k, v in block.params.items() if not isinstance(v, (list, dict))}
                query.update(w=index, lesson=lesson.slug, step=step.number)
                page = f"/lessons/{lesson.slug}/{step.number}"
                found[block.name] = (f"/widgets/{block.name}?{urlencode(query)}", page)
    for name in all_widgets():
        found.setdefault(name, (f"/widgets/{name}", ""))
    return found


def pct(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


async def asgi_times(urls: dict[str, tuple[str, str]], n: int) -> dict[str, list[float]]:
    app = create_app(Settings(data_dir=Path(tempfile.mkdtemp()), secret_key="bench"))
    out: dict[str, list[float]] = {}
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://bench") as client:
            for name, (url, _) in [("/healthz", ("/healthz", "")), *urls.items()]:
                samples = []
                for _ in range(n):
                    t0 = time.perf_counter()
                    r = await client.get(url, headers=HX)
                    samples.append((time.perf_counter() - t0) * 1000)
                    if r.status_code >= 500:
                        raise SystemExit(f"{url} answered {r.status_code}")
                out[name] = samples
    return out


def start_server(port: int) -> subprocess.Popen[bytes]:
    env = {**os.environ, "GPU_CLASSROOM_DATA_DIR": tempfile.mkdtemp(), "GPU_CLASSROOM_SECRET_KEY": "bench"}
    proc = subprocess.Popen([sys.executable, "-m", "uvicorn", "app.main:app", "--port", str(port), "--log-level",
                             "warning", "--no-access-log"], cwd=ROOT, env=env)
    for _ in range(300):
        try:
            if httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=1).status_code == 200:
                return proc
        except httpx.HTTPError:
            time.sleep(0.1)
    proc.kill()
    raise SystemExit("server did not start")


async def http_times(base: str, url: str, clients: int, n: int) -> list[float]:
    samples: list[float] = []

    async def worker(client: httpx.AsyncClient) -> None:
        for _ in range(n // clients):
            t0 = time.perf_counter()
            await client.get(url, headers=HX)
            samples.append((time.perf_counter() - t0) * 1000)

    async with httpx.AsyncClient(base_url=base, limits=httpx.Limits(max_connections=clients)) as client:
        await asyncio.gather(*(worker(client) for _ in range(clients)))
    return samples


def nudge(text: str) -> str:
    """A nearby valid value: one more for a whole number, half again for anything else."""
    try:
        value = float(text)
    except ValueError:
        return text + " "
    return str(int(value) + 1) if value.is_integer() and abs(value) < 1e6 else f"{value * 1.5:g}"


# Runs inside the page, so no driver traffic competes with the browser while it is timed: set the control,
# fire the event a person's typing, dragging or choosing fires, and wait for htmx to swap the result in.
TIME_UPDATES = """async ({id, event, values, n}) => {
  const control = document.getElementById(id);
  const times = [];
  for (let i = 0; i < n; i++) {
    await new Promise((resolve) => setTimeout(resolve, 40));  // let the previous update settle
    const swapped = new Promise((resolve) => document.body.addEventListener('htmx:afterSwap', resolve, {once: true}));
    const timeout = new Promise((resolve) => setTimeout(() => resolve('timeout'), 5000));
    const t0 = performance.now();
    control.value = values[i % 2];
    control.dispatchEvent(new Event(event, {bubbles: true}));
    if (await Promise.race([swapped, timeout]) === 'timeout') return {times, error: `no swap after ${values[i % 2]}`};
    times.push(performance.now() - t0);
  }
  return {times, error: null};
}"""

# The floor under every figure: an XMLHttpRequest for a 404 from the same page, no htmx and no widget.
TIME_XHR = """async (n) => {
  const times = [];
  for (let i = 0; i < n; i++) {
    const t0 = performance.now();
    await new Promise((resolve) => {
      const x = new XMLHttpRequest(); x.open('GET', '/bench-floor'); x.onloadend = resolve; x.send();
    });
    times.push(performance.now() - t0);
  }
  return times;
}"""


def commit_guess(page: Any, name: str) -> None:
    """Predict-first widgets open after a guess: commit one, as a learner would."""
    guess = page.locator(f'[data-widget="{name}"] form.predict').first
    if guess.count() == 0 or not guess.is_visible():
        return
    radio = guess.locator("input[type=radio]")
    if radio.count():
        radio.first.check()
    guess.locator("input[name=guess]").fill("1")
    guess.get_by_role("button", name="Commit my guess").click()
    page.locator(f'[data-widget="{name}"] form.widget-form').first.wait_for(timeout=5000)


def pick_control(page: Any, name: str) -> tuple[str, str, list[str]] | None:
    """The widget's first text box, slider or list, the event it fires, and two values to swap between."""
    form = f'[data-widget="{name}"] form.widget-form[hx-get]'  # the htmx-driven ones
    control = page.locator(f"{form} input[type=text], {form} input[type=range], {form} select").first
    if control.count() == 0:
        return None
    ident, tag = control.get_attribute("id"), control.evaluate("el => el.tagName")
    original = control.input_value()
    if tag == "SELECT":
        options = control.locator("option").evaluate_all("opts => opts.map(o => o.value)")
        other = next((o for o in options if o != original), None)
        return (ident, "input", [other, original]) if other is not None and ident else None
    if control.get_attribute("type") == "range":
        other = control.get_attribute("min") or "0"
        other = control.get_attribute("max") or "1" if other == original else other
    else:
        other = nudge(original)
    return (ident, "input", [other, original]) if ident else None


def browser_times(base: str, urls: dict[str, tuple[str, str]], samples: int) -> dict[str, list[float]]:
    from playwright.sync_api import sync_playwright

    out: dict[str, list[float]] = {}
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium" if Path("/usr/bin/chromium").exists() else None,
                                    args=["--no-sandbox", "--disable-gpu"])
        page = browser.new_context().new_page()
        for name, (_, step_url) in urls.items():
            if not step_url:
                continue
            page.goto(base + step_url)
            if "xhr floor" not in out:
                out["xhr floor"] = page.evaluate(TIME_XHR, samples)
            commit_guess(page, name)
            picked = pick_control(page, name)
            if picked is None:
                print(f"  {name}: no text box, slider or list updated by htmx")
                continue
            ident, event, values = picked
            result = page.evaluate(TIME_UPDATES, {"id": ident, "event": event, "values": values, "n": samples})
            if result["error"]:
                print(f"  {name}: {result['error']} in #{ident}")
            if result["times"]:
                out[name] = result["times"]
        browser.close()
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--requests", type=int, default=200)
    parser.add_argument("--clients", type=int, default=20)
    parser.add_argument("--browser-samples", type=int, default=20)
    parser.add_argument("--port", type=int, default=8765)
    parser.add_argument("--widgets", nargs="*", help="only these widgets (default: every one)")
    parser.add_argument("--browser-only", action="store_true", help="skip the ASGI and HTTP columns")
    args = parser.parse_args()
    urls = {k: v for k, v in widget_urls().items() if not args.widgets or k in args.widgets}
    names = ["/healthz", *urls]

    asgi = {} if args.browser_only else asyncio.run(asgi_times(urls, args.requests))
    proc = start_server(args.port)
    base = f"http://127.0.0.1:{args.port}"
    try:
        http = {} if args.browser_only else {
            name: asyncio.run(http_times(base, url, args.clients, args.requests))
            for name, (url, _) in [("/healthz", ("/healthz", "")), *urls.items()]}
        browser = browser_times(base, urls, args.browser_samples)
    finally:
        proc.terminate()
        proc.wait()
    health = statistics.median(http["/healthz"]) if http else 0.0

    def cells(samples: list[float] | None, width: int, extra: str = "") -> str:
        if not samples:
            return f"{'-':>{width}} {'-':>7}" + (f" {'-':>8}" if extra else "")
        row = f"{statistics.median(samples):{width}.2f} {pct(samples, 0.99):7.2f}"
        return row + (f" {statistics.median(samples) / health:8.2f}" if extra else "")

    print(f"{'widget':20} {'ASGI p50':>9} {'p99':>7} | {'HTTP x' + str(args.clients) + ' p50':>13} {'p99':>7} "
          f"{'÷healthz':>8} | {'Chromium p50':>12} {'p99':>7}   (ms)")
    for name in names:
        print(f"{name:20} {cells(asgi.get(name), 9)} | {cells(http.get(name), 13, 'ratio')} | "
              f"{cells(browser.get(name), 12)}")
    if browser.get("xhr floor"):
        print(f"Chromium floor: a bare XMLHttpRequest (a 404, no htmx) from the same page takes "
              f"{statistics.median(browser['xhr floor']):.2f} ms median")


if __name__ == "__main__":
    main()
