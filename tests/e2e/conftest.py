"""End-to-end fixtures: a real server process and Debian's Chromium driven by Playwright."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest
from playwright.sync_api import Browser, BrowserContext, Page, Playwright, sync_playwright

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "test-artifacts"
# The screenshots docs/ shows are retaken by `make screenshots` (which sets this); a plain test run writes them to
# test-artifacts/, so `make test` leaves the tracked files alone.
DOCS_SHOTS = Path(os.environ.get("GC_DOCS_SCREENSHOTS") or ARTIFACTS)
AXE = ROOT / "node_modules" / "axe-core" / "axe.min.js"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
]

pytestmark = pytest.mark.e2e


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class Server:
    url: str
    data_dir: Path
    process: subprocess.Popen[bytes]
    env: dict[str, str] = field(default_factory=dict)


def start_server(data_dir: Path, lessons: Path = ROOT / "lessons", **env: str) -> Server:
    """Start `uvicorn --factory app.main:create_app` on a free port and wait until /healthz answers."""
    port = free_port()
    full_env = {
        **os.environ,
        "GPU_CLASSROOM_DATA_DIR": str(data_dir),
        "GPU_CLASSROOM_LESSONS_DIR": str(lessons),
        "GPU_CLASSROOM_SECRET_KEY": "e2e-secret",
        **env,
    }
    log = open(data_dir.parent / f"server-{port}.log", "wb")  # noqa: SIM115 - closed with the process
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "uvicorn",
            "--factory",
            "app.main:create_app",
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--log-level",
            "warning",
        ],
        cwd=ROOT,
        env=full_env,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"server exited: {(data_dir.parent / f'server-{port}.log').read_text()[-2000:]}")
        try:
            if httpx.get(url + "/healthz", timeout=1).status_code == 200:
                return Server(url=url, data_dir=data_dir, process=proc, env=full_env)
        except httpx.HTTPError:
            pass
        time.sleep(0.1)
    proc.kill()
    raise RuntimeError("server did not answer /healthz within 60 s")


def stop_server(server: Server) -> None:
    server.process.terminate()
    try:
        server.process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        server.process.kill()


@pytest.fixture(scope="session")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    data = tmp_path_factory.mktemp("e2e") / "data"
    data.mkdir()
    srv = start_server(data)
    yield srv
    stop_server(srv)


def chromium_path() -> str | None:
    for candidate in ("/usr/bin/chromium", shutil.which("chromium") or "", shutil.which("chromium-browser") or ""):
        if candidate and Path(candidate).exists():
            return candidate
    return None  # Playwright's own browser, when one was installed


@pytest.fixture(scope="session")
def playwright_instance() -> Iterator[Playwright]:
    with sync_playwright() as p:
        yield p


@pytest.fixture(scope="session")
def browser(playwright_instance: Playwright) -> Iterator[Browser]:
    b = playwright_instance.chromium.launch(executable_path=chromium_path(), args=CHROMIUM_ARGS, headless=True)
    yield b
    b.close()


@dataclass
class Watched:
    """A page plus what it did that a user would not want: console errors, off-server requests."""

    page: Page
    base: str
    console_errors: list[str] = field(default_factory=list)
    requests: list[str] = field(default_factory=list)

    def off_server(self) -> list[str]:
        return [u for u in self.requests if not u.startswith(self.base) and not u.startswith("data:")]

    def errors(self) -> list[str]:
        """Console errors, less the pair htmx logs when hx-sync replaces a request still in flight: DESIGN.md asks
        for that abort (a newer keystroke wins), and htmx reports it with console.error. A failed request still
        shows here as htmx:sendError or htmx:responseError."""
        aborts = self.console_errors.count("htmx:sendAbort")
        kept, skip_after = [], aborts
        for message in self.console_errors:
            if message == "htmx:sendAbort":
                continue
            if message == "htmx:afterRequest" and skip_after:
                skip_after -= 1
                continue
            kept.append(message)
        return kept

    def assert_clean(self) -> None:
        assert self.errors() == [], self.errors()
        assert self.off_server() == [], self.off_server()


def watch(page: Page, base: str) -> Watched:
    w = Watched(page=page, base=base)
    page.on("console", lambda m: w.console_errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: w.console_errors.append(str(e)))
    page.on("request", lambda r: w.requests.append(r.url))
    page.set_default_timeout(10_000)
    return w


@pytest.fixture
def context(browser: Browser) -> Iterator[BrowserContext]:
    ctx = browser.new_context(viewport={"width": 1280, "height": 900})
    yield ctx
    ctx.close()


@pytest.fixture
def watched(context: BrowserContext, server: Server) -> Watched:
    return watch(context.new_page(), server.url)


def axe_violations(browser: Browser, url: str, width: int = 1280, color_scheme: Any = "light") -> list[dict[str, Any]]:
    """Run axe-core on a page (in a context that lets the test inject axe) and return its violations."""
    ctx = browser.new_context(bypass_csp=True, viewport={"width": width, "height": 900}, color_scheme=color_scheme)
    try:
        page = ctx.new_page()
        page.goto(url)
        page.add_script_tag(path=str(AXE))
        rules = "['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'best-practice']"
        result: dict[str, Any] = page.evaluate(f"async () => await axe.run(document, {{runOnly: {rules}}})")
        return [
            {"id": v["id"], "help": v["help"], "nodes": [n["target"] for n in v["nodes"]][:5]}
            for v in result["violations"]
        ]
    finally:
        ctx.close()


def screenshot(page: Page, name: str) -> Path:
    ARTIFACTS.mkdir(exist_ok=True)
    path = ARTIFACTS / f"{name}.png"
    page.screenshot(path=str(path), full_page=True)
    return path
