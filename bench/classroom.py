"""Load a class: N learners join, step through the lesson, move widgets, answer drills and poll their banner
while the instructor's dashboard and projector poll every 2 s; 40 % into the run the instructor brings everyone
to step 7 (a drill) and the learners follow the banner's link. Prints requests, errors and latency per route,
checks that the database holds exactly the answers the server acknowledged, and ends with one line:

    learners=N requests=N errors=N lost=N p99_ms=N        (p99 over the learners' requests)

Run: .venv/bin/python bench/classroom.py [--learners 300] [--seconds 120] [--workers 2]
     [--url http://host:port]            use a running server instead of starting one
     [--timeline 5]                      also print the learners' p50/p99 per 5-second window
     [--database-url postgresql+asyncpg://postgres@127.0.0.1/test --fresh-database]   PostgreSQL
     [--profile]                         cProfile in the server's workers: top functions by CPU, CPU by route
     [--server-cpu]                      the workers' CPU seconds and CPU per request, without the profiler
     [--wait]                            banner polls the server holds until the class changes, as pages poll now
The server started here keeps idle connections 30 s (--timeout-keep-alive), as a load balancer would.
An asyncio load generator (uvloop): the learners use bench/light_http.py, a light keep-alive client, so the
generator leaves the cores to the server (--httpx: httpx, as before, about ten times the CPU); the instructor
uses httpx. Randomness is seeded (--seed).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import re
import resource
import socket
import ssl
import subprocess
import sys
import tempfile
import time
import uuid
from collections import defaultdict
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import httpx
import uvloop

sys.path.insert(0, str(Path(__file__).resolve().parent))
from light_http import LightClient, LightError  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
LESSON = "what-ai-workloads-need"
BANNER_EVERY = 5.0  # seconds, as the banner's hx-trigger
# Think times in seconds (uniform): a learner spends 30 s to 1 min on a step, about twice the lesson's own pace
# (21 steps in 30 minutes), moving each widget 1 to 3 times and answering a drill 2 to 4 times.
WIDGET_THINK = (4.0, 12.0)
DRILL_THINK = (8.0, 20.0)
STEP_THINK = (5.0, 15.0)
DASHBOARD_EVERY = 2.0
INSTRUCTOR_ROUTES = ("dashboard poll", "projector poll", "POST /teach/{code}/pace")
HELD = "GET /class-banner?wait=1"  # --wait: a poll the server holds until the class changes (up to 10 s)
NOT_LEARNER_LATENCY = (*INSTRUCTOR_ROUTES, HELD)  # a held poll's time is the class being quiet, not a wait
BRING_TO = 7  # the first drill of the flagship lesson
# One TLS context for every client: httpx builds (and loads the CA bundle into) a new one per client
# otherwise, ~50 ms of CPU each, which the generator spent while 300 learners joined, on the server's cores.
TLS = ssl.create_default_context()


# --- what the pages hold ---------------------------------------------------------------------------------


@dataclass
class Form:
    action: str
    method: str
    fields: dict[str, str] = field(default_factory=dict)
    choices: dict[str, list[str]] = field(default_factory=dict)
    kind: str = ""  # widget | drill | done


class Forms(HTMLParser):
    """The forms of a step page a learner would use: widgets, drills, and the Done button."""

    def __init__(self) -> None:
        super().__init__()
        self.forms: list[Form] = []
        self.banner_url = ""
        self._form: Form | None = None
        self._select: str | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = {k: v or "" for k, v in attrs}
        if a.get("id") == "class-banner" and a.get("hx-get"):
            self.banner_url = a["hx-get"]
        if tag == "form":
            classes = a.get("class", "")
            kind = ("widget" if a.get("hx-get", "").startswith("/widgets/") else
                    "drill" if "drill-form" in classes else "done" if a.get("action", "").endswith("/done") else "")
            action = a.get("hx-get") if kind == "widget" else a.get("action", "")
            self._form = Form(action=action or "", method=a.get("method", "get"), kind=kind)
        elif self._form is not None and tag == "input" and a.get("name"):
            if a.get("type") in ("checkbox", "radio") and "checked" not in a:
                if a.get("type") == "radio":
                    self._form.choices.setdefault(a["name"], []).append(a.get("value", ""))
                return
            self._form.fields[a["name"]] = a.get("value", "")
        elif self._form is not None and tag == "select":
            self._select = a.get("name")
        elif self._form is not None and tag == "option" and self._select:
            self._form.choices.setdefault(self._select, []).append(a.get("value", ""))
            if "selected" in a or self._select not in self._form.fields:
                self._form.fields[self._select] = a.get("value", "")

    def handle_endtag(self, tag: str) -> None:
        if tag == "select":
            self._select = None
        elif tag == "form" and self._form is not None:
            if self._form.kind:
                self.forms.append(self._form)
            self._form = None


FORM_OR_BANNER = re.compile(r'<form\b.*?</form>|<div id="class-banner"[^>]*>', re.S)


def banner_tag(html: str) -> str:
    """The ETag the page's banner polls with (If-None-Match), as static/app.js builds it from data-token."""
    match = re.search(r'id="class-banner"[^>]*data-token="([^"]+)"', html)
    return f'"banner-{match.group(1)}"' if match else ""


def read_forms(html: str) -> Forms:
    """Parse only the forms and the banner (a step page is large; the load generator must stay light)."""
    parser = Forms()
    parser.feed("".join(FORM_OR_BANNER.findall(html)))
    return parser


# --- measuring -------------------------------------------------------------------------------------------


Client = httpx.AsyncClient | LightClient
USE_HTTPX = False  # --httpx: the learners use httpx, as the bench did before light_http.py
USE_WAIT = False  # --wait: banner polls the server holds (wait=1), as static/app.js asks since issue 28


def learner_client(base: str) -> Client:
    if USE_HTTPX:
        return httpx.AsyncClient(base_url=base, timeout=30, limits=httpx.Limits(max_connections=3), verify=TLS)
    return LightClient(base, timeout=30, max_connections=3, tls=TLS)


@dataclass
class Stats:
    times: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))
    errors: dict[str, int] = field(default_factory=lambda: defaultdict(int))
    samples: list[str] = field(default_factory=list)
    acknowledged: int = 0
    began: float = field(default_factory=time.perf_counter)
    timeline: list[tuple[float, str, float]] = field(default_factory=list)  # (started at s, route, seconds)

    async def call(self, client: Client, route: str, method: str, url: str, ok: tuple[int, ...],
                   **kw: Any) -> Any:
        start = time.perf_counter()
        try:
            r = await client.request(method, url, **kw)
        except (httpx.HTTPError, LightError) as exc:
            self._time(route, start)
            self._error(route, f"{type(exc).__name__} on {url}")
            return None
        self._time(route, start)
        if r.status_code not in ok:
            self._error(route, f"{r.status_code} on {method} {url}: {r.text[:200]!r}")
        return r

    def _time(self, route: str, start: float) -> None:
        took = time.perf_counter() - start
        self.times[route].append(took)
        self.timeline.append((start - self.began, route, took))

    def _error(self, route: str, text: str) -> None:
        self.errors[route] += 1
        if len(self.samples) < 8:
            self.samples.append(text)


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q * len(ordered)) - 1))] * 1000 if ordered else 0.0


# --- the people ------------------------------------------------------------------------------------------


def csrf(html: str) -> str:
    match = re.search(r'name="csrf_token" value="([^"]+)"', html)
    return match.group(1) if match else ""


async def instructor(base: str, stats: Stats, stop: asyncio.Event) -> tuple[str, str]:
    """Create the class; return its code and key."""
    async with httpx.AsyncClient(base_url=base, timeout=30, verify=TLS) as c:
        page = (await c.get("/teach")).text
        r = await c.post("/teach", data={"csrf_token": csrf(page), "title": "Bench class", "lesson": LESSON},
                         follow_redirects=True)
        assert r.status_code == 200, r.text[:500]
        code = re.search(r'data-code="(\w+)"', r.text).group(1)  # type: ignore[union-attr]
        key = re.search(r"key=([\w-]+)", r.text).group(1)  # type: ignore[union-attr]
    return code, key


async def watch(base: str, code: str, key: str, view: str, route: str, stats: Stats, stop: asyncio.Event,
                bring_at: float | None = None) -> None:
    """The instructor's open dashboard (or projector): an htmx poll every 2 s; at `bring_at` seconds the
    instructor brings everyone to the first drill's step (learners follow the banner's link)."""
    started = time.monotonic()
    async with httpx.AsyncClient(base_url=base, timeout=30, headers={"Accept-Encoding": "gzip"}, verify=TLS) as c:
        page = await c.get(f"/teach/{code}{view}?key={key}", follow_redirects=True)
        since = re.search(r"since=([0-9.]+)", page.text)  # the dashboard's poll sends its stamp, as the page does
        while not stop.is_set():
            path = f"/teach/{code}{view}" + (f"?since={since.group(1)}" if since else "")
            r = await stats.call(c, route, "GET", path, (200,), headers={"HX-Request": "true"})
            since = re.search(r"since=([0-9.]+)", r.text) if r is not None else since
            if bring_at is not None and time.monotonic() - started > bring_at:
                await stats.call(c, "POST /teach/{code}/pace", "POST", f"/teach/{code}/pace", (303,),
                                 data={"csrf_token": csrf(page.text), "mode": "bring", "step": str(BRING_TO)})
                bring_at = None
            await pause(stop, DASHBOARD_EVERY)


async def pause(stop: asyncio.Event, seconds: float) -> None:
    try:
        await asyncio.wait_for(stop.wait(), timeout=seconds)
    except TimeoutError:
        pass


@dataclass
class Learner:
    number: int
    base: str
    code: str
    rng: random.Random
    stats: Stats
    stop: asyncio.Event
    banner_url: str = ""
    banner_tag: str = ""
    bring_to: int = 0

    async def run(self, start_within: float) -> None:
        await pause(self.stop, self.rng.uniform(0, start_within))
        async with learner_client(self.base) as c:
            page = await self.stats.call(c, "GET /join/{code}", "GET", f"/join/{self.code}", (200,))
            if page is None:
                return
            name = f"Learner {self.number} {uuid.uuid4().hex[:4]}"
            r = await self.stats.call(c, "POST /join", "POST", "/join", (303,),
                                      data={"csrf_token": csrf(page.text), "code": self.code, "name": name})
            if r is None or r.status_code != 303:
                return
            poller = asyncio.create_task(self.poll_banner(c))
            try:
                await self.work(c, str(r.headers["location"]))
            finally:
                poller.cancel()

    async def work(self, c: Client, url: str) -> None:
        while not self.stop.is_set() and url.startswith("/lessons/"):
            r = await self.stats.call(c, "GET /lessons/{slug}/{n}", "GET", url, (200,))
            if r is None:
                return
            forms = read_forms(r.text)
            self.banner_url = forms.banner_url or self.banner_url
            self.banner_tag = banner_tag(r.text) or self.banner_tag
            for form in [f for f in forms.forms if f.kind == "widget"][:2]:
                for _ in range(self.rng.randint(1, 3)):
                    await self.think(*WIDGET_THINK)
                    await self.move_widget(c, form)
            for form in [f for f in forms.forms if f.kind == "drill"]:
                for _ in range(self.rng.randint(2, 4)):
                    await self.think(*DRILL_THINK)
                    await self.answer(c, form)
            await self.think(*STEP_THINK)
            if self.bring_to and f"/{self.bring_to}" != url[url.rfind("/"):]:  # follow the banner's link
                url, self.bring_to = f"/lessons/{LESSON}/{self.bring_to}", 0
                continue
            done = next((f for f in forms.forms if f.kind == "done"), None)
            if done is None or self.stop.is_set():
                return
            r = await self.stats.call(c, "POST /lessons/{slug}/{n}/done", "POST", done.action, (303,),
                                      data=done.fields)
            if r is None or r.status_code != 303:
                return
            url = str(r.headers["location"])

    async def think(self, low: float, high: float) -> None:
        await pause(self.stop, self.rng.uniform(low, high))

    async def move_widget(self, c: Client, form: Form) -> None:
        if self.stop.is_set():  # the run ended while this learner thought: no last click from all at once
            return
        params = dict(form.fields)
        if form.choices:
            name = self.rng.choice(sorted(form.choices))
            params[name] = self.rng.choice(form.choices[name])
        route = "GET " + form.action.split("?")[0]  # one line per widget
        await self.stats.call(c, route, "GET", form.action, (200, 286, 422), params=params,
                              headers={"HX-Request": "true"})  # 286: a live widget says "stop polling"

    async def answer(self, c: Client, form: Form) -> None:
        if self.stop.is_set():
            return
        data = dict(form.fields)
        for name in [n for n in data if n.startswith("answer-")]:
            if name in form.choices:
                data[name] = self.rng.choice([v for v in form.choices[name] if v] or [""])
            else:
                data[name] = str(self.rng.choice([2, 4, 8, 16, 80, 128, 140]))
        for name, options in form.choices.items():  # radio groups
            if name not in data:
                data[name] = self.rng.choice(options)
        r = await self.stats.call(c, "POST " + form.action, "POST", form.action, (200, 409),
                                  data=data, headers={"HX-Request": "true"})
        if r is not None and r.status_code == 200:
            if "was replaced by question" not in r.text:  # that reply grades and stores nothing
                self.stats.acknowledged += 1
            question = re.search(r'data-question="(\d+)"', r.text)
            if question:
                form.fields["question"] = str(int(question.group(1)) - 1)
        elif r is not None and r.status_code == 409:
            question = re.search(r'data-question="(\d+)"', r.text)
            if question:
                form.fields["question"] = str(int(question.group(1)) - 1)

    async def poll_banner(self, c: Client) -> None:
        asked = time.monotonic()
        while not self.stop.is_set():
            # --wait: as static/app.js, ask again at once after a held answer, never more than once every 5 s
            await pause(self.stop, max(BANNER_EVERY - (time.monotonic() - asked), 0) if USE_WAIT else BANNER_EVERY)
            if self.banner_url and not self.stop.is_set():
                headers = {"HX-Request": "true"} | ({"If-None-Match": self.banner_tag} if self.banner_tag else {})
                url = self.banner_url.replace("&amp;", "&") + ("&wait=1" if USE_WAIT else "")
                asked = time.monotonic()
                r = await self.stats.call(c, HELD if USE_WAIT else "GET /class-banner", "GET", url,
                                          (200, 204, 304), headers=headers)  # as static/app.js asks: ETag, 304
                if r is not None and r.status_code == 200:
                    self.banner_url = read_forms(r.text).banner_url or self.banner_url
                    self.banner_tag = r.headers.get("etag", self.banner_tag)
                    bring = re.search(r'data-bring="(\d+)"', r.text)
                    self.bring_to = int(bring.group(1)) if bring else 0


# --- a server of our own ---------------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def own_server(workers: int, database_url: str, app: str = "app.main:create_app") -> Iterator[str]:
    """uvicorn with a temp data dir (SQLite unless database_url), stopped at the end; `app` names a factory."""
    data = Path(tempfile.mkdtemp(prefix="gc-bench-"))
    port = free_port()
    env = {**os.environ, "GPU_CLASSROOM_DATA_DIR": str(data), "GPU_CLASSROOM_SECRET_KEY": "bench-secret",
           "GPU_CLASSROOM_LESSONS_DIR": str(ROOT / "lessons")}
    if database_url:
        env["DATABASE_URL"] = database_url
    # migrate once, then start the workers without racing each other to migrate
    subprocess.run([sys.executable, "-m", "app.cli", "migrate"], cwd=ROOT, env=env, check=True,
                   stdout=subprocess.DEVNULL)
    env["GPU_CLASSROOM_MIGRATE_ON_START"] = "false"
    log = open(data / "server.log", "wb")  # noqa: SIM115 - closed below
    proc = subprocess.Popen([sys.executable, "-m", "uvicorn", "--factory", app, "--host", "127.0.0.1", "--port",
                             str(port), "--workers", str(workers), "--log-level", "warning", "--no-access-log",
                             "--timeout-keep-alive", "30"],
                            cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        wait_healthy(url, data / "server.log")
        yield url
    finally:
        proc.terminate()
        proc.wait(timeout=20)
        log.close()


def wait_healthy(url: str, log: Path | None = None) -> None:
    """Until the server at url answers /healthz (about a minute at most), else stop with its log's tail."""
    for _ in range(600):
        try:
            if httpx.get(url + "/healthz", timeout=1).status_code == 200:
                return
        except httpx.HTTPError:
            time.sleep(0.1)
    raise RuntimeError("the server did not start: " + (log.read_text()[-2000:] if log else url))


@contextmanager
def fresh_postgres(admin_url: str) -> Iterator[str]:
    """A new database next to admin_url's, dropped afterwards."""
    import asyncpg  # type: ignore[import-untyped]

    dsn = admin_url.replace("postgresql+asyncpg://", "postgresql://")
    name = f"gc_bench_{uuid.uuid4().hex[:8]}"

    async def admin(sql: str) -> None:
        conn = await asyncpg.connect(dsn)
        try:
            await conn.execute(sql)
        finally:
            await conn.close()

    asyncio.run(admin(f'CREATE DATABASE "{name}"'))
    try:
        yield admin_url.rsplit("/", 1)[0] + "/" + name
    finally:
        asyncio.run(admin(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))


# --- profiling the server --------------------------------------------------------------------------------

# The function that answers each route the bench times (its file under app/web, its name).
ROUTE_FUNCTIONS = {
    "GET /class-banner": ("classroom.py", "banner"),
    "GET /lessons/{slug}/{n}": ("pages.py", "step"),
    "POST /lessons/{slug}/{n}/done": ("pages.py", "mark_done"),
    "GET /join/{code}": ("classroom.py", "join_form"),
    "POST /join": ("classroom.py", "join"),
    "dashboard poll": ("classroom.py", "class_dashboard"),
    "projector poll": ("classroom.py", "projector"),
    "POST /teach/{code}/pace": ("classroom.py", "pace"),
}


def start_profile(args: argparse.Namespace) -> Any:
    """With --profile or --server-cpu: run the server under bench/profiled.py, which writes each worker's
    figures to a folder; returns what prints them once the server has stopped (given the run's Stats)."""
    if not (args.profile or args.server_cpu) or args.url:
        return lambda stats: None
    folder = Path(tempfile.mkdtemp(prefix="gc-profile-"))
    os.environ["GC_BENCH_PROFILE_DIR"] = str(folder)  # own_server passes its environment on
    os.environ["GC_BENCH_CPROFILE"] = "1" if args.profile else "0"
    args.app = "bench.profiled:create_app"
    return lambda stats: print_profile(folder, stats, args.profile_top)


def print_profile(folder: Path, stats: Stats | None, top: int) -> None:
    """The workers' CPU, CPU per request, and (under cProfile) the top functions and CPU in each route."""
    import pstats

    figures = [json.loads(f.read_text()) for f in sorted(folder.glob("worker-*.json"))]
    requests = sum(len(t) for t in stats.times.values()) if stats else 0
    cpu = sum(f["cpu_s"] for f in figures)
    wall = max((f["wall_s"] for f in figures), default=0.0)
    print(f"\nserver workers: {len(figures)}, CPU {cpu:.1f} s over {wall:.0f} s "
          f"({cpu / wall if wall else 0:.2f} cores busy), {requests} requests: "
          f"{cpu / requests * 1000 if requests else 0:.2f} ms of CPU a request on average"
          + (" (under cProfile, which slows Python code about 1.5 to 2 times)" if any(folder.glob("*.prof")) else ""))
    files = [str(f) for f in sorted(folder.glob("worker-*.prof"))]
    if not files:
        return
    merged = pstats.Stats(files[0])
    for f in files[1:]:
        merged.add(f)
    table: dict[tuple[str, int, str], tuple[int, int, float, float, Any]] = merged.stats  # type: ignore[attr-defined]

    def where(key: tuple[str, int, str]) -> str:
        path, line, name = key
        for marker in ("/site-packages/", str(ROOT) + "/"):
            path = path.split(marker, 1)[-1]
        return f"{path}:{line}({name})" if line else name

    print(f"\ntop {top} functions by own CPU (tottime), all workers, s:")
    print(f"{'own s':>8} {'with callees s':>15} {'calls':>9}  function")
    for key, (_, calls, own, total, _) in sorted(table.items(), key=lambda kv: -kv[1][2])[:top]:
        print(f"{own:8.2f} {total:15.2f} {calls:9d}  {where(key)}")
    print(f"\ntop {top} functions of the app by CPU with callees (cumtime), s:")
    ours = [(k, v) for k, v in table.items() if str(ROOT / "app") in k[0]]
    for key, (_, calls, own, total, _) in sorted(ours, key=lambda kv: -kv[1][3])[:top]:
        print(f"{own:8.2f} {total:15.2f} {calls:9d}  {where(key)}")
    if stats is None:
        return
    print("\nCPU inside each route's function (its callees included; not the middleware, dependencies or "
          "sending), ms a request:")
    counts: dict[tuple[str, str], int] = defaultdict(int)  # one function answers every widget (every drill)
    for route in stats.times:
        counts[route_function(route)] += len(stats.times[route])
    for (file, name), count in sorted(counts.items()):
        routes = sorted(r for r in stats.times if route_function(r) == (file, name))
        label = routes[0] if len(routes) == 1 else routes[0].rsplit("/", 1)[0].replace("/widgets", "/widgets/*")
        total = sum(v[3] for k, v in table.items() if k[0].endswith(f"app/web/{file}") and k[2] == name)
        print(f"  {label:34} {total / count * 1000:8.2f}")
    print("  (the dashboard's and projector's rows are built and rendered on a worker thread, which cProfile does "
          "not see: bench/dashboard.py times them)")


def route_function(route: str) -> tuple[str, str]:
    """The file under app/web and the function that answer a route the bench times."""
    if route in ROUTE_FUNCTIONS:
        return ROUTE_FUNCTIONS[route]
    return ("drills.py", "answer") if route.endswith("/answer") else ("widgets.py", "widget")


# --- --abuse: one client hammering the heavy routes and the join form -----------------------------------


async def abuse(base: str, code: str, key: str, stop: asyncio.Event) -> Stats:
    """One client, back to back until the run ends: every profile file size, the class's three exports, wrong
    codes and empty posts to /join, and a 2 MB body to /api/plan. Its own Stats: the learners' p99 and errors
    stay theirs; what it got back is printed as one line of statuses."""
    stats = Stats()
    big = json.dumps({f"k{n}": n for n in range(200_000)})
    async with httpx.AsyncClient(base_url=base, timeout=120, verify=TLS) as c:
        await c.get(f"/teach/{code}?key={key}", follow_redirects=True)  # the key cookie for the exports
        token = csrf((await c.get("/join")).text)
        turn = 0
        while not stop.is_set():
            turn += 1
            size = (64, 32, 16, 8, 4, 2, 1)[turn % 7]
            async with c.stream("GET", f"/companion/profile-data.csv?size_mb={size}") as r:
                async for _ in r.aiter_raw():
                    pass
            stats.times[f"profile {r.status_code}"].append(0)
            for name in ("class.json", "learners.csv", "attempts.csv"):
                r2 = await c.get(f"/teach/{code}/export/{name}")
                stats.times[f"export {r2.status_code}"].append(0)
            for n in range(10):
                r2 = await c.post("/join", data={"csrf_token": token, "code": "" if n % 2 else f"ZZZZZ{n}",
                                                 "name": "P"})
                stats.times[f"join {r2.status_code}"].append(0)
            try:  # a 413 is sent before the body is read, and the connection closed under the sender
                r2 = await c.post("/api/plan", content=big, headers={"content-type": "application/json"})
                stats.times[f"api/plan 2 MB {r2.status_code}"].append(0)
            except httpx.HTTPError as exc:
                stats.times[f"api/plan 2 MB {type(exc).__name__}"].append(0)
    return stats


# --- the run ---------------------------------------------------------------------------------------------


async def load(base: str, learners: int, seconds: float, seed: int, hammer: bool = False) -> tuple[Stats, int]:
    stats, stop = Stats(), asyncio.Event()
    code, key = await instructor(base, stats, stop)
    abuser = asyncio.create_task(abuse(base, code, key, stop)) if hammer else None
    rng = random.Random(seed)
    tasks = [asyncio.create_task(watch(base, code, key, "", "dashboard poll", stats, stop, seconds * 0.4)),
             asyncio.create_task(watch(base, code, key, "/projector", "projector poll", stats, stop))]
    tasks += [asyncio.create_task(Learner(i, base, code, random.Random(rng.random()), stats, stop).run(
        min(30.0, seconds / 4))) for i in range(learners)]
    await asyncio.sleep(seconds)
    stop.set()
    await asyncio.gather(*tasks, return_exceptions=True)
    if abuser is not None:
        print("abuse:", " ".join(f"{k}={len(v)}" for k, v in sorted((await abuser).times.items())))
    async with httpx.AsyncClient(base_url=base, timeout=60, verify=TLS) as c:
        # the class export is read from the database by the server: the same count works against --url
        export = await c.get(f"/teach/{code}/export/class.json?key={key}", follow_redirects=True)
        data = json.loads(export.text)
    stored = sum(len(p["attempts"]) for p in data["learners"])
    return stats, stored


def print_timeline(stats: Stats, every: float) -> None:
    """The learners' requests in windows of `every` seconds: where in the run the slow ones were."""
    print(f"{'window s':>10} {'learner requests':>17} {'answers':>8} {'p50 ms':>8} {'p99 ms':>8}")
    windows: dict[int, list[tuple[str, float]]] = defaultdict(list)
    for at, route, took in stats.timeline:
        if route not in NOT_LEARNER_LATENCY:
            windows[int(at // every)].append((route, took))
    for w in sorted(windows):
        took = [t for _, t in windows[w]]
        answers = sum(1 for r, _ in windows[w] if r.endswith("/answer"))
        print(f"{w * every:4.0f}-{(w + 1) * every:<5.0f} {len(took):17d} {answers:8d} {pct(took, .5):8.1f} "
              f"{pct(took, .99):8.1f}")


def report(stats: Stats, stored: int, learners: int) -> str:
    print(f"{'route':34} {'requests':>9} {'errors':>7} {'p50 ms':>8} {'p95 ms':>8} {'p99 ms':>8}")
    for route in sorted(stats.times):
        t = stats.times[route]
        cells = f"{len(t):9d} {stats.errors[route]:7d}"
        print(f"{route:34} {cells} {pct(t, 0.5):8.1f} {pct(t, 0.95):8.1f} {pct(t, 0.99):8.1f}")
    for sample in stats.samples:
        print("  error:", sample)
    learner_times = [x for r, t in stats.times.items() if r not in NOT_LEARNER_LATENCY for x in t]
    requests = sum(len(t) for t in stats.times.values())
    errors = sum(stats.errors.values())
    lost = max(0, stats.acknowledged - stored)
    verdict = "equal" if stored == stats.acknowledged else (
        f"{lost} LOST" if lost else f"{stored - stats.acknowledged} stored but never acknowledged (a reply lost "
        "after the commit: see errors)")
    print(f"answers acknowledged={stats.acknowledged} in the database={stored}: {verdict}")
    used = resource.getrusage(resource.RUSAGE_SELF)
    print(f"load generator CPU: {used.ru_utime + used.ru_stime:.0f} s")
    return f"learners={learners} requests={requests} errors={errors} lost={lost} p99_ms={pct(learner_times, .99):.0f}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--learners", type=int, default=300)
    parser.add_argument("--seconds", type=float, default=120)
    parser.add_argument("--url", help="a running server (else one is started)")
    parser.add_argument("--workers", type=int, default=2, help="uvicorn workers of the server started here")
    parser.add_argument("--database-url", default="", help="PostgreSQL for the server started here")
    parser.add_argument("--fresh-database", action="store_true", help="create and drop a database beside it")
    parser.add_argument("--seed", type=int, default=6)
    parser.add_argument("--app", default="app.main:create_app", help="the factory of the ASGI app the server "
                        "started here runs")
    parser.add_argument("--timeline", type=float, default=0, metavar="SECONDS",
                        help="also print the learners' latency in windows of this many seconds")
    parser.add_argument("--profile", action="store_true", help="cProfile the server's workers; print the top "
                        "functions by CPU and the CPU per route")
    parser.add_argument("--profile-top", type=int, default=30, help="functions --profile lists")
    parser.add_argument("--server-cpu", action="store_true", help="the workers' CPU per request, no profiler")
    parser.add_argument("--abuse", action="store_true", help="add one client hammering heavy routes and /join")
    parser.add_argument("--httpx", action="store_true", help="the learners use httpx (the generator's CPU "
                        "before bench/light_http.py), not the light client")
    parser.add_argument("--wait", action="store_true", help="banner polls the server holds until the class changes "
                        "(wait=1), as pages poll since issue 28; timed apart and left out of the learners' p99")
    args = parser.parse_args()
    global USE_HTTPX, USE_WAIT
    USE_HTTPX, USE_WAIT = args.httpx, args.wait
    ran: list[Stats] = []
    print_profile = start_profile(args)

    def go(base: str) -> str:
        stats, stored = uvloop.run(load(base, args.learners, args.seconds, args.seed, args.abuse))
        ran.append(stats)
        if args.timeline:
            print_timeline(stats, args.timeline)
        return report(stats, stored, args.learners)

    if args.url:
        line = go(args.url.rstrip("/"))
    elif args.database_url and args.fresh_database:
        with fresh_postgres(args.database_url) as url, own_server(args.workers, url, args.app) as base:
            line = go(base)
    else:
        with own_server(args.workers, args.database_url, args.app) as base:
            line = go(base)
    print_profile(ran[0] if ran else None)
    print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
