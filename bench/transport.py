"""What an HTTP request costs the browser itself: the same 10 kB answer by fetch and by XMLHttpRequest (what htmx
uses), from headless Chromium to a bare Starlette app on 127.0.0.1 (no project code on the server side).

It is the floor under every widget update (docs/widgets.md): of a keystroke's time to the expected text on screen,
this much is Chromium's own work for the request, whatever the server and the swap do.

Run: .venv/bin/python bench/transport.py [--samples 60] [--rounds 2]
Prints figures only.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, Response
from starlette.routing import Route

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.classroom import own_server  # noqa: E402 - free port, uvicorn, stopped at the end

BODY = "<div>" + "x" * 10_000 + "</div>"
CHROMIUM = Path("/usr/bin/chromium")


async def page(request: Request) -> Response:
    return HTMLResponse("<!doctype html><title>transport</title><p>bench")


async def fragment(request: Request) -> Response:
    return HTMLResponse(BODY)


def create_app() -> Starlette:
    """A bare app: a page, a health check and the 10 kB fragment."""
    return Starlette(routes=[Route("/", page), Route("/healthz", page), Route("/fragment", fragment)])

TIME = """async (n) => {
  const pause = () => new Promise((resolve) => setTimeout(resolve, 30));
  const out = {fetch: [], xhr: []};
  for (let i = 0; i < n; i++) {
    await pause(); const t0 = performance.now();
    await (await fetch('/fragment?i=' + i)).text(); out.fetch.push(performance.now() - t0);
  }
  for (let i = 0; i < n; i++) {
    await pause(); const t0 = performance.now();
    await new Promise((done) => {
      const x = new XMLHttpRequest(); x.open('GET', '/fragment?i=' + i); x.onload = done; x.send();
    });
    out.xhr.push(performance.now() - t0);
  }
  return out;
}"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--samples", type=int, default=60, help="round trips of each kind a round")
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    print("10 kB answer from 127.0.0.1, headless Chromium, median ms (p90):")
    with own_server(1, "", app="bench.transport:create_app") as base, sync_playwright() as p:
        browser = p.chromium.launch(
            executable_path=str(CHROMIUM) if CHROMIUM.exists() else None, args=["--no-sandbox", "--disable-gpu"]
        )
        tab = browser.new_page()
        tab.goto(base + "/")
        for round_ in range(1, args.rounds + 1):
            out = tab.evaluate(TIME, args.samples)
            figures = "  ".join(
                f"{kind} {statistics.median(v):.2f} ({sorted(v)[int(0.9 * len(v))]:.2f})" for kind, v in out.items()
            )
            print(f"round {round_}: {figures}")
        browser.close()


if __name__ == "__main__":
    main()
