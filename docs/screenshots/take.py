"""Retake the README's screenshots from a running server: `make screenshots` (or this file with --base URL).

Each shot is one state a learner reaches by ordinary clicks; the file names are the ones the README shows.
"""

from __future__ import annotations

import argparse
import time
import urllib.request
from pathlib import Path

from playwright.sync_api import Page, sync_playwright

HERE = Path(__file__).parent
FLAGSHIP = "/lessons/what-ai-workloads-need"


def step_one(page: Page, base: str) -> None:
    """Step 1 after a guess of 20 GB: the calculator, the plan and the panel with its one model on GPU 0."""
    page.goto(f"{base}{FLAGSHIP}/1")
    page.locator("form.predict input[name=guess]").first.fill("20")
    page.get_by_role("button", name="Commit my guess").first.click()
    page.get_by_text("You guessed").first.wait_for()
    page.locator(".widget").first.scroll_into_view_if_needed()


def overflowing(page: Page, base: str) -> None:
    """Step 14: Llama 3.1 70B in bf16 on one GPU, which does not fit."""
    page.goto(f"{base}{FLAGSHIP}/14")
    page.locator(".widget").first.scroll_into_view_if_needed()


def roofline(page: Page, base: str) -> None:
    """Step 16: the roofline with its batch slider."""
    page.goto(f"{base}{FLAGSHIP}/16")
    page.locator(".widget").first.scroll_into_view_if_needed()


def drill(page: Page, base: str) -> None:
    """Step 17: a will-it-fit question before any answer."""
    page.goto(f"{base}{FLAGSHIP}/17")
    page.get_by_role("button", name="Check answer").first.scroll_into_view_if_needed()


SHOTS = {
    "step-desktop.png": (step_one, 1280),
    "step-360px.png": (step_one, 360),
    "panel-overflowing.png": (overflowing, 1280),
    "roofline.png": (roofline, 1280),
    "drill.png": (drill, 1280),
}


def wait_for(base: str, seconds: float) -> None:
    """Until the server answers /healthz (a server started just before this script needs a moment)."""
    end = time.monotonic() + seconds
    while True:
        try:
            urllib.request.urlopen(f"{base}/healthz", timeout=2).close()
            return
        except OSError:
            if time.monotonic() > end:
                raise SystemExit(f"No server answers at {base}: start one (make run) or pass --base.") from None
            time.sleep(0.2)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--base", default="http://127.0.0.1:8000", help="a running server")
    parser.add_argument("--chromium", default="/usr/bin/chromium")
    parser.add_argument("--wait", type=float, default=0, help="seconds to wait for the server's /healthz")
    parser.add_argument("names", nargs="*", help="only these files (default: all)")
    args = parser.parse_args()
    wait_for(args.base, args.wait)
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=args.chromium if Path(args.chromium).exists() else None)
        for name, (reach, width) in SHOTS.items():
            if args.names and name not in args.names:
                continue
            context = browser.new_context(viewport={"width": width, "height": 1000 if width > 400 else 800})
            page = context.new_page()  # a fresh learner for each shot
            reach(page, args.base)
            page.wait_for_timeout(300)  # let the swapped panel settle before the picture
            page.screenshot(path=str(HERE / name))
            context.close()
            print(name)
        browser.close()


if __name__ == "__main__":
    main()
