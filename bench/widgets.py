"""Widget update latency: as a person's browser sees it (headless Chromium), in-process through the ASGI app, and
over real HTTP under concurrent clients.

The browser method ("trusted"): a real input reaches the widget's field (text typed over a text box's own with
Playwright's keyboard, as its `fill` does; a key press on a list or a slider: events the browser marks trusted, as
it does a person's typing) and the clock runs from that input event to the moment the widget's result shows the
expected text, both stamped in the page (performance.now() in an input listener and in a MutationObserver).
The expected text of each of the two values an edit swaps between is read once beforehand. Each run starts a
fresh server (uvicorn on 127.0.0.1, a free port, a temporary SQLite database) and a fresh Chromium; 30 edits a
widget, 3 runs. Beside each widget: a bare XHR, the same fragment URL fetched from the same page and timed the same
way (request to the whole answer read), and the ratio of the widget to it: what the swap and the page's own
script add on top of the transport and the server's answer. Widget updates travel over plain HTTP only.

The second browser method ("synthetic", the earlier one): a script in the page sets the control and fires an
untrusted input event, and the clock stops at htmx:afterSwap. It leaves out the browser's own input handling.

Predict-first widgets get a committed guess first. Every widget of the three lessons is timed on a step page that
shows it (weight-storage on the companion's step 4 first); a widget with no field htmx updates is named and skipped.

Run: .venv/bin/python bench/widgets.py [--runs 3] [--edits 30] [--widgets weight-storage plan] [--server]
Prints figures only; nothing here asserts a time.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
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
from bench.classroom import own_server  # noqa: E402 - the class bench's server: free port, temp SQLite, migrated

HX = {"HX-Request": "true"}
CHROMIUM = Path("/usr/bin/chromium")
FIRST = ("weight-storage", "understanding-the-work", 4)  # the companion's step 4 calculator, timed first
FRAME_MS = 1000 / 60
TARGET_P50_MS, TARGET_P90_MS = 16.0, 20.0  # issue 26: every widget, keystroke to the expected text on screen


@dataclass
class Target:
    """One widget as a step page shows it: its update URL (the lesson's params), the page, its DOM id."""

    name: str
    url: str
    page: str = ""
    wid: str = "w1"


@dataclass
class Samples:
    """A widget's figures over every run, in ms."""

    trusted: list[float] = field(default_factory=list)
    synthetic: list[float] = field(default_factory=list)
    xhr: list[float] = field(default_factory=list)
    control: str = ""
    notes: list[str] = field(default_factory=list)


def targets() -> list[Target]:
    """Each widget once, at its first step in the lessons (weight-storage at the companion's step 4, first)."""
    lessons, _ = load_lessons(ROOT / "lessons", validate_lesson_block, strict=False)
    found: dict[str, Target] = {}
    for lesson in lessons:
        for step in lesson.steps:
            for index, block in enumerate(step.widgets(), start=1):
                preferred = (block.name, lesson.slug, step.number) == FIRST
                if block.name in found and not preferred:
                    continue
                query = {k: v for k, v in block.params.items() if not isinstance(v, (list, dict))}
                query.update(w=index, lesson=lesson.slug, step=step.number)
                found[block.name] = Target(block.name, f"/widgets/{block.name}?{urlencode(query)}",
                                           f"/lessons/{lesson.slug}/{step.number}", f"w{index}")
    for name in all_widgets():
        found.setdefault(name, Target(name, f"/widgets/{name}"))
    return sorted(found.values(), key=lambda t: t.name != FIRST[0])


def pct(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


async def asgi_times(urls: dict[str, str], n: int) -> dict[str, list[float]]:
    app = create_app(Settings(data_dir=Path(tempfile.mkdtemp()), secret_key="bench"))
    out: dict[str, list[float]] = {}
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://bench") as client:
            for name, url in urls.items():
                samples = []
                for _ in range(n):
                    t0 = time.perf_counter()
                    r = await client.get(url, headers=HX)
                    samples.append((time.perf_counter() - t0) * 1000)
                    if r.status_code >= 500:
                        raise SystemExit(f"{url} answered {r.status_code}")
                out[name] = samples
    return out


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
        value = float(text.replace(",", ""))
    except ValueError:
        return text + " "
    return str(int(value) + 1) if value.is_integer() and abs(value) < 1e6 else f"{value * 1.5:g}"


# Installed in every page before its own scripts. It counts each widget form's answers and keeps their URLs (for
# the bare XHR), and times one armed edit: from the control's trusted input event to the first DOM mutation after
# which the result element's text is the expected one.
PAGE_CLOCK = """(() => {
  const bench = window.__gcBench = {answers: 0, urls: [], armed: null, done: null};
  document.addEventListener('htmx:afterRequest', (event) => {
    const form = event.detail.elt;
    if (!form || !form.matches || !form.matches('[data-widget-form]')) return;
    bench.answers += 1;
    if (event.detail.xhr && event.detail.xhr.responseURL) bench.urls.push(event.detail.xhr.responseURL);
  }, true);
  addEventListener('input', (event) => {
    const a = bench.armed;
    if (a && a.t0 === null && event.isTrusted && event.target.id === a.control) a.t0 = performance.now();
  }, true);
  new MutationObserver(() => {
    const a = bench.armed;
    if (!a || a.t0 === null) return;
    const result = document.getElementById(a.result);
    if (!result || result.textContent !== a.expected) return;
    bench.armed = null;
    clearTimeout(a.timer);
    a.resolve(performance.now() - a.t0);
  }).observe(document, {childList: true, subtree: true, characterData: true});
  bench.arm = (control, result, expected, ms) => {
    bench.done = new Promise((resolve) => {
      const timer = setTimeout(() => { bench.armed = null; resolve(null); }, ms);
      bench.armed = {control, result, expected, t0: null, timer, resolve};
    });
  };
})();"""

# The synthetic method: set the control, fire an untrusted input event, stop at htmx:afterSwap.
TIME_SYNTHETIC = """async ({id, values, n}) => {
  const control = document.getElementById(id);
  const times = [];
  const first = control.value === values[0] ? 1 : 0;  // start with the value not shown ("changed" skips the same)
  for (let i = first; i < n + first; i++) {
    await new Promise((resolve) => setTimeout(resolve, 40));  // let the previous update settle
    const swapped = new Promise((resolve) => document.body.addEventListener('htmx:afterSwap', resolve, {once: true}));
    const timeout = new Promise((resolve) => setTimeout(() => resolve('timeout'), 5000));
    const t0 = performance.now();
    control.value = values[i % 2];
    control.dispatchEvent(new Event('input', {bubbles: true}));
    if (await Promise.race([swapped, timeout]) === 'timeout') return {times, error: `no swap after ${values[i % 2]}`};
    times.push(performance.now() - t0);
  }
  return {times, error: null};
}"""

# The bare XHR: the fragment URLs the widget's own edits asked for, fetched from the same page with htmx's
# request header, from the request to the whole answer read; nothing parsed, nothing swapped.
TIME_FETCH = """async ({urls, n}) => {
  const times = [];
  for (let i = 0; i < n; i++) {
    await new Promise((resolve) => setTimeout(resolve, 20));
    const t0 = performance.now();
    const answer = await fetch(urls[i % urls.length], {headers: {'HX-Request': 'true'}});
    await answer.text();
    times.push(performance.now() - t0);
  }
  return times;
}"""

def commit_guess(page: Any, scope: str) -> None:
    """Predict-first widgets open after a guess: commit one, as a learner would."""
    guess = page.locator(f"{scope} form.predict").first
    if guess.count() == 0 or not guess.is_visible():
        return
    radio = guess.locator("input[type=radio]")
    if radio.count():
        radio.first.check()
    guess.locator("input[name=guess]").fill("1")
    guess.get_by_role("button", name="Commit my guess").click()
    page.locator(f"{scope} form.widget-form").first.wait_for(timeout=5000)


Edit = Callable[[], None]


def pick_edits(page: Any, scope: str) -> tuple[str, str, str, Edit, Edit] | None:
    """The widget's first text box, list or slider in a form htmx updates, and two trusted edits between two
    values: (control id, result id, kind, to the other value, back). A list moves one option with the arrow keys,
    a slider jumps between its ends (End, Home), a text box gets a nearby value typed over its own and back.
    Each edit readies the field first (focus, text selected) so that while it is timed the driver sends a single
    input command (Playwright's `fill` makes several round trips that compete with the browser and server)."""
    form = page.locator(f"{scope} form.widget-form[hx-get]").first
    if form.count() == 0:
        return None
    control = form.locator("input[type=text], input[type=range], select").first
    ident = control.get_attribute("id") if control.count() else None
    target = form.get_attribute("hx-target") or ""
    if not ident or not target.startswith("#"):
        return None
    tag, kind = control.evaluate("el => el.tagName"), control.get_attribute("type") or ""
    keys = page.keyboard

    def key(name: str) -> Edit:
        return lambda: keys.press(name)

    if tag == "SELECT":
        last = control.evaluate("el => el.selectedIndex === el.options.length - 1")
        there, back = ("ArrowUp", "ArrowDown") if last else ("ArrowDown", "ArrowUp")
        return ident, target[1:], "list", key(there), key(back)
    if kind == "range":
        control.focus()
        keys.press("Home")  # start from one end so both edits change the value
        return ident, target[1:], "slider", key("End"), key("Home")
    original = control.input_value()
    other = nudge(original)

    def typed(text: str) -> Edit:
        return lambda: keys.insert_text(text)

    return ident, target[1:], "text", typed(other), typed(original)


def ready(page: Any, ident: str) -> None:
    """Focus the field and select its text, as a person about to type over it (not timed)."""
    page.evaluate("(id) => { const el = document.getElementById(id); el.focus(); if (el.select) el.select(); }", ident)


def settled_text(page: Any, ident: str, edit: Edit, result: str) -> str:
    """Make one edit, wait for its answer and a moment more, and read the result's text."""
    answers = page.evaluate("() => window.__gcBench.answers")
    ready(page, ident)
    edit()
    page.wait_for_function(f"() => window.__gcBench.answers > {answers}", timeout=10_000)
    page.wait_for_timeout(150)
    return str(page.evaluate(f"() => document.getElementById({result!r}).textContent"))


def time_widget(page: Any, base: str, target: Target, edits: int, gap_ms: int, into: Samples) -> None:
    """One run's samples of a widget, all three methods, added to `into`."""
    scope = f"#{target.wid}"
    page.goto(base + target.page)
    commit_guess(page, scope)
    picked = pick_edits(page, scope)
    if picked is None:
        into.notes.append("no text box, list or slider that htmx updates")
        return
    ident, result, into.control, there, back = picked
    page.wait_for_timeout(300)  # a slider's Home, the page's own first requests
    expected, values = [], []
    for edit in (there, back):
        expected.append(settled_text(page, ident, edit, result))
        values.append(page.locator(f"#{ident}").input_value())
    if expected[0] == expected[1]:
        into.notes.append(f"#{ident}: the result reads the same for both values")
        return
    for i in range(edits):
        ready(page, ident)
        page.evaluate("([c, r, e]) => window.__gcBench.arm(c, r, e, 5000)", [ident, result, expected[i % 2]])
        (there if i % 2 == 0 else back)()
        took = page.evaluate("() => window.__gcBench.done")
        if took is None:
            into.notes.append(f"#{ident}: no expected text within 5 s (edit {i + 1})")
            return
        into.trusted.append(float(took))
        page.wait_for_timeout(gap_ms)
    urls = page.evaluate("() => window.__gcBench.urls.slice(-2)")
    into.xhr += page.evaluate(TIME_FETCH, {"urls": urls, "n": edits})
    page.wait_for_timeout(gap_ms)
    synthetic = page.evaluate(TIME_SYNTHETIC, {"id": ident, "values": values, "n": edits})
    if synthetic["error"]:
        into.notes.append(f"synthetic: {synthetic['error']} in #{ident}")
    into.synthetic += synthetic["times"]


def browser_run(base: str, chosen: list[Target], edits: int, gap_ms: int, out: dict[str, Samples]) -> None:
    """One run: a fresh Chromium against the server at `base`, every chosen widget in turn."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM) if CHROMIUM.exists() else None,
                                    args=["--no-sandbox", "--disable-gpu"])
        context = browser.new_context()
        context.add_init_script(PAGE_CLOCK)
        page = context.new_page()
        for target in chosen:
            if target.page:
                time_widget(page, base, target, edits, gap_ms, out.setdefault(target.name, Samples()))
        browser.close()


def print_browser(out: dict[str, Samples], runs: int, edits: int) -> None:
    print(f"\nChromium, {edits} edits x {runs} runs a widget, fresh server and browser each run (ms).")
    print("trusted: text typed / a key pressed in the field -> expected text in the result (MutationObserver);")
    print("xXHR: trusted p50 / bare XHR p50, the same fragment URL fetched from the same page;")
    print("synthetic: script-set value + untrusted input event -> htmx:afterSwap (the earlier method).")
    print(f"{'widget':20} {'field':7} {'trusted p50':>11} {'p90':>6} {'XHR p50':>8} {'xXHR':>5} "
          f"| {'synthetic p50':>13} {'p90':>6}  {'target':7}")
    medians = []
    for name, s in out.items():
        if not s.trusted:
            print(f"{name:20} {s.control or '-':7} {'-':>11}   ({'; '.join(dict.fromkeys(s.notes)) or 'no samples'})")
            continue
        p50 = statistics.median(s.trusted)
        medians.append((p50, pct(s.trusted, 0.9), name))
        xhr = statistics.median(s.xhr) if s.xhr else 0.0
        ratio = f"{p50 / xhr:5.1f}" if xhr else f"{'-':>5}"
        syn = (f"{statistics.median(s.synthetic):13.2f} {pct(s.synthetic, 0.9):6.2f}" if s.synthetic
               else f"{'-':>13} {'-':>6}")
        p90 = pct(s.trusted, 0.9)
        met = p50 <= TARGET_P50_MS and p90 <= TARGET_P90_MS
        print(f"{name:20} {s.control:7} {p50:11.2f} {p90:6.2f} {xhr:8.2f} {ratio} | {syn}  {'yes' if met else 'NO':7}"
              + (f"  ({'; '.join(dict.fromkeys(s.notes))})" if s.notes else ""))
    if medians:
        within = sum(1 for p50, _, _ in medians if p50 <= FRAME_MS)
        met = sum(1 for p50, p90, _ in medians if p50 <= TARGET_P50_MS and p90 <= TARGET_P90_MS)
        slow, slow90 = max(medians), max(medians, key=lambda m: m[1])
        print(f"\nwithin one frame ({FRAME_MS:.1f} ms): {within} of {len(medians)} widgets; the slowest median: "
              f"{slow[2]} {slow[0]:.2f} ms; the slowest p90: {slow90[2]} {slow90[1]:.2f} ms")
        print(f"target (median <= {TARGET_P50_MS:g} ms and p90 <= {TARGET_P90_MS:g} ms): {met} of {len(medians)} "
              "widgets")


def print_server(urls: dict[str, str], requests: int, clients: int) -> None:
    """The server's share: in process through the ASGI app, and over HTTP with `clients` at once."""
    asgi = asyncio.run(asgi_times(urls, requests))
    with own_server(1, "") as base:
        http = {name: asyncio.run(http_times(base, url, clients, requests)) for name, url in urls.items()}
    health = statistics.median(http["/healthz"])
    print(f"\n{'widget':20} {'ASGI p50':>9} {'p99':>7} | {'HTTP x' + str(clients) + ' p50':>13} {'p99':>7} "
          f"{'÷healthz':>8}   (ms)")
    for name in urls:
        a, h = asgi[name], http[name]
        print(f"{name:20} {statistics.median(a):9.2f} {pct(a, 0.99):7.2f} | {statistics.median(h):13.2f} "
              f"{pct(h, 0.99):7.2f} {statistics.median(h) / health:8.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=3, help="fresh server and browser each run")
    parser.add_argument("--edits", type=int, default=30, help="timed edits a widget each run")
    parser.add_argument("--gap", type=int, default=300,
                        help="ms between edits: a learner reads the answer, and the address bar catches up")
    parser.add_argument("--widgets", nargs="*", help="only these widgets (default: every one)")
    parser.add_argument("--server", action="store_true", help="also the ASGI and HTTP figures (no browser)")
    parser.add_argument("--requests", type=int, default=200, help="with --server: requests a widget")
    parser.add_argument("--clients", type=int, default=20, help="with --server: concurrent HTTP clients")
    args = parser.parse_args()
    chosen = [t for t in targets() if not args.widgets or t.name in args.widgets]
    out: dict[str, Samples] = {t.name: Samples() for t in chosen if t.page}
    for _ in range(args.runs):
        with own_server(1, "") as base:
            browser_run(base, chosen, args.edits, args.gap, out)
    print_browser(out, args.runs, args.edits)
    if args.server:
        print_server({"/healthz": "/healthz", **{t.name: t.url for t in chosen}}, args.requests, args.clients)


if __name__ == "__main__":
    main()
