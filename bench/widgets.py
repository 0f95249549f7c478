"""Widget update latency: in-process through the ASGI app, over real HTTP under concurrent clients,
and in headless Chromium from the input event to the swapped result.

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
from urllib.parse import urlencode

import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from app.lessons.loader import load_lessons  # noqa: E402
from app.main import create_app, validate_lesson_block  # noqa: E402
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


def browser_times(base: str, urls: dict[str, tuple[str, str]], samples: int) -> dict[str, list[float]]:
    from playwright.sync_api import TimeoutError as PlaywrightTimeout
    from playwright.sync_api import sync_playwright

    out: dict[str, list[float]] = {}
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium" if Path("/usr/bin/chromium").exists() else None,
                                    args=["--no-sandbox", "--disable-gpu"])
        page = browser.new_context(bypass_csp=True).new_page()  # lets the bench poll with evaluate
        for name, (_, step_url) in urls.items():
            if not step_url:
                continue
            page.goto(base + step_url)
            field = page.locator(f'[data-widget="{name}"] form input[type=text], '
                                 f'[data-widget="{name}"] form input[type=range]').first
            if field.count() == 0:
                continue
            page.evaluate("""() => { window.__swaps = 0;
              document.body.addEventListener('input', () => { window.__t0 = performance.now(); }, true);
              document.body.addEventListener('htmx:afterSwap', () => { window.__swaps += 1;
                window.__last = performance.now() - window.__t0; }); }""")
            original = field.input_value()
            kind = field.get_attribute("type")
            other = nudge(original) if kind == "text" else (field.get_attribute("min") or "0")
            if kind == "range" and other == original:
                other = field.get_attribute("max") or "1"
            times = []
            for i in range(samples):
                value = other if i % 2 == 0 else original
                before = page.evaluate("window.__swaps")
                field.fill(value)
                try:
                    page.wait_for_function(f"window.__swaps > {before}", timeout=5000)
                except PlaywrightTimeout:
                    print(f"  {name}: no swap within 5 s after typing {value!r} into {field.get_attribute('name')}")
                    break
                times.append(page.evaluate("window.__last"))
            if times:
                out[name] = times
        browser.close()
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--requests", type=int, default=200)
    parser.add_argument("--clients", type=int, default=20)
    parser.add_argument("--browser-samples", type=int, default=20)
    parser.add_argument("--port", type=int, default=8765)
    args = parser.parse_args()
    urls = widget_urls()

    asgi = asyncio.run(asgi_times(urls, args.requests))
    proc = start_server(args.port)
    base = f"http://127.0.0.1:{args.port}"
    try:
        http = {name: asyncio.run(http_times(base, url, args.clients, args.requests))
                for name, (url, _) in [("/healthz", ("/healthz", "")), *urls.items()]}
        browser = browser_times(base, urls, args.browser_samples)
    finally:
        proc.terminate()
        proc.wait()
    health = statistics.median(http["/healthz"])
    print(f"{'widget':20} {'ASGI p50':>9} {'p99':>7} | {'HTTP x' + str(args.clients) + ' p50':>13} {'p99':>7} "
          f"{'÷healthz':>8} | {'Chromium p50':>12} {'p99':>7}   (ms)")
    for name in ["/healthz", *urls]:
        a, h, b = asgi[name], http[name], browser.get(name)
        row = (f"{name:20} {statistics.median(a):9.2f} {pct(a, 0.99):7.2f} | {statistics.median(h):13.2f} "
               f"{pct(h, 0.99):7.2f} {statistics.median(h) / health:8.2f} | ")
        row += f"{statistics.median(b):12.2f} {pct(b, 0.99):7.2f}" if b else f"{'-':>12} {'-':>7}"
        print(row)


if __name__ == "__main__":
    main()
