"""`serve`, `author` and `check` run as an author runs them: from a folder of their own, outside the checkout, with
the built-in lessons found where GPU Classroom is installed and the author's folders beside them. A missing folder is
one line naming the variable and the path; a lesson over its expression budget is a problem at its line in `check`,
left out by `serve` (which still starts), and shown by author mode, which never spins and stops on SIGTERM."""

from __future__ import annotations

import html
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from tests.budget_probes import CLI, LOOPS, PROSE, add_looping_prompt, add_probe_lines, new_lesson

ROOT = Path(__file__).resolve().parents[2]
AUTHORING = ROOT / "tests" / "fixtures" / "authoring"
STARTUP = 90.0  # seconds a server may take to answer /healthz on a busy machine
pytestmark = pytest.mark.slow


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def env_for(home: Path, **extra: str) -> dict[str, str]:
    """The environment of an author's shell: no lesson setting unless given, a data folder of their own."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GPU_CLASSROOM_")}
    return {**env, "GPU_CLASSROOM_DATA_DIR": str(home / "data"), "GPU_CLASSROOM_SECRET_KEY": "cli-test", **extra}


def run(home: Path, *args: str, timeout: float = 300, **extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([CLI, *args], cwd=home, env=env_for(home, **extra), capture_output=True, text=True,
                          timeout=timeout)


@dataclass
class Running:
    url: str
    process: subprocess.Popen[bytes]
    log: Path

    def text(self) -> str:
        return self.log.read_text(errors="replace")

    def cpu_seconds(self) -> float:
        """CPU time the server process has used so far (user + system, from /proc)."""
        fields = Path(f"/proc/{self.process.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def stop(self) -> float:
        """SIGTERM, then the seconds until the process ended (SIGKILL after 30 s, and the test fails)."""
        start = time.monotonic()
        self.process.send_signal(signal.SIGTERM)
        try:
            self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
            raise AssertionError("SIGTERM did not stop the server within 30 s") from None
        return time.monotonic() - start


def start(home: Path, *args: str, **extra: str) -> Running:
    """`gpu-classroom <args> --port P` from `home`, once it answers /healthz."""
    port = free_port()
    log = home / f"{args[0]}-{port}.log"
    with open(log, "wb") as out:
        process = subprocess.Popen([CLI, *args, "--port", str(port)], cwd=home, env=env_for(home, **extra),
                                   stdout=out, stderr=subprocess.STDOUT)
    running = Running(url=f"http://127.0.0.1:{port}", process=process, log=log)
    deadline = time.monotonic() + STARTUP
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise AssertionError(f"{args[0]} ended: {running.text()[-3000:]}")
        try:
            if httpx.get(running.url + "/healthz", timeout=2).status_code == 200:
                return running
        except httpx.HTTPError:
            pass
        time.sleep(0.2)
    running.stop()
    raise AssertionError(f"{args[0]} did not answer /healthz within {STARTUP:g} s: {running.text()[-3000:]}")


@pytest.fixture
def home(tmp_path: Path) -> Path:
    """An author's own folder, outside the checkout, holding the walk's lesson in my-lessons/."""
    assert ROOT not in tmp_path.parents
    shutil.copytree(AUTHORING, tmp_path / "my-lessons")
    return tmp_path


@pytest.fixture
def served(home: Path) -> Iterator[Running]:
    running = start(home, "serve", GPU_CLASSROOM_LESSONS_DIRS="my-lessons")
    yield running
    running.stop()


def test_check_from_another_folder_checks_the_built_in_lessons(home: Path) -> None:
    done = run(home, "check", "--seeds", "2")
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.strip() == f"ok: 3 lesson(s), 51 steps in {ROOT / 'lessons'}"


def test_check_of_the_authors_folder_from_that_folder(home: Path) -> None:
    done = run(home, "check", "my-lessons", "--seeds", "5")
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.strip() == "ok: 1 lesson(s), 3 steps in my-lessons"


@pytest.mark.parametrize(("args", "extra", "said"), [
    (("serve",), {"GPU_CLASSROOM_LESSONS_DIRS": "my-lesons"},
     "gpu-classroom serve: GPU_CLASSROOM_LESSONS_DIRS names my-lesons, which is not a folder "
     "(looked for {home}/my-lesons)"),
    (("serve",), {"GPU_CLASSROOM_LESSONS_DIR": "nowhere"},
     "gpu-classroom serve: GPU_CLASSROOM_LESSONS_DIR is nowhere, which is not a folder ({home}/nowhere); leave it "
     "unset for the built-in lessons"),
    (("author", "my-lesons"), {}, "gpu-classroom author: my-lesons is not a folder (looked for {home}/my-lesons)"),
    (("check", "my-lesons"), {}, "gpu-classroom check: my-lesons is not a folder (looked for {home}/my-lesons)"),
])
def test_a_missing_folder_is_one_line_naming_it_and_no_traceback(home: Path, args: tuple[str, ...],
                                                                 extra: dict[str, str], said: str) -> None:
    more = ("--seeds", "1") if args[0] == "check" else ("--port", str(free_port()))
    done = run(home, *args, *more, timeout=120, **extra)
    assert done.returncode == 2
    assert done.stderr.splitlines() == [said.format(home=home)] and done.stdout == ""


def test_serve_from_another_folder_serves_the_built_in_lessons_beside_the_authors(served: Running) -> None:
    with httpx.Client(base_url=served.url) as c:
        home = c.get("/").text
        assert "How big is a KV cache?" in home and "What AI Workloads Need" in home
        assert c.get("/lessons/what-ai-workloads-need/1").status_code == 200
        drill = c.get("/lessons/kv-cache-size/3")
        assert drill.status_code == 200 and 'data-drill="kv-cache-size/kv-size"' in drill.text
        assert '<option value="kv-cache-size"' in c.get("/teach").text


def test_serve_starts_with_a_lesson_over_budget_left_out_and_says_where(home: Path) -> None:
    probe = new_lesson(home / "my-lessons")
    at = add_probe_lines(probe, [p for p, _ in PROSE])
    prompt = add_looping_prompt(probe)
    began = time.monotonic()
    running = start(home, "serve", GPU_CLASSROOM_LESSONS_DIRS="my-lessons")
    try:
        assert time.monotonic() - began < STARTUP
        with httpx.Client(base_url=running.url) as c:
            page = c.get("/lessons/probe/1")
            assert page.status_code == 404 and "The lesson &#39;probe&#39; is not served" in page.text
            assert c.get("/lessons/kv-cache-size/1").status_code == 200  # the others are served
        log = running.text()
        assert "lesson probe is not served: 10 problems" in log
        for file, line in [*at, prompt]:  # as the folder was given: relative to where serve runs
            assert f"\n{file.relative_to(home)}:{line}: " in log, (file, line)
    finally:
        running.stop()


def test_check_reports_every_probe_at_its_line_and_returns(home: Path) -> None:
    probe = new_lesson(home / "my-lessons")
    at = add_probe_lines(probe, [p for p, _ in PROSE])
    prompt = add_looping_prompt(probe)
    began = time.monotonic()
    done = run(home, "check", "my-lessons", "--seeds", "20", timeout=120)
    assert done.returncode == 1 and time.monotonic() - began < 120
    for (file, line), (_, says) in zip(at, PROSE, strict=True):
        found = [x for x in done.stdout.splitlines() if x.startswith(f"{file.relative_to(home)}:{line}: ")]
        assert len(found) == 1 and says in found[0], (line, done.stdout)
    assert f"{prompt[0].relative_to(home)}:{prompt[1]}: drill weights-to-serve: prompt: cannot evaluate" in done.stdout
    assert "range(100000) has 100,000 numbers" in done.stdout


def banner(c: httpx.Client, path: str) -> str:
    """The author-mode banner of a page, as text a reader sees (entities read back)."""
    return html.unescape(c.get(path).text.split('id="author-mode"', 1)[1].split("</div>", 1)[0])


def wait_for(check: object, seconds: float = 30) -> None:
    deadline = time.monotonic() + seconds
    while not check():  # type: ignore[operator]
        assert time.monotonic() < deadline, "not within the time allowed"
        time.sleep(0.2)


def test_author_mode_shows_a_saved_probe_stays_idle_and_stops_on_sigterm(home: Path) -> None:
    probe = new_lesson(home / "my-lessons")
    running = start(home, "author", "my-lessons")
    try:
        with httpx.Client(base_url=running.url, timeout=10) as c:
            assert "Author mode: saving a file of this lesson refreshes this page" in banner(c, "/lessons/probe/1")
            assert "What AI Workloads Need" in c.get("/").text  # the built-in lessons beside the author's
            good = c.get("/lessons/probe/1").text
            for expression, says in [PROSE[0], PROSE[2], PROSE[5]]:
                add_probe_lines(probe, [expression])
                wait_for(lambda says=says: says in banner(c, "/lessons/probe/1"))
                assert "The page shows the lesson's last version without problems" in banner(c, "/lessons/probe/1")
                assert c.get("/healthz").status_code == 200
            add_looping_prompt(probe, LOOPS)
            wait_for(lambda: "range(100000)" in banner(c, "/lessons/probe/2"))
            title = "A model is its weights"
            assert good.count(title) == c.get("/lessons/probe/1").text.count(title)  # the last good version
        before = running.cpu_seconds()
        time.sleep(2)
        assert running.cpu_seconds() - before < 0.5  # no reload left spinning
        terminal = running.text()  # each reload, and each problem with its file and line
        assert "reloaded probe: 1 problem\n  my-lessons/probe/01-a-model-is-its-weights.md:" in terminal
    finally:
        assert running.stop() < 10


def test_author_mode_started_on_a_probe_answers_and_stops_on_sigterm(home: Path) -> None:
    probe = new_lesson(home / "my-lessons")
    add_probe_lines(probe, [p for p, _ in PROSE])
    add_looping_prompt(probe)
    running = start(home, "author", "my-lessons")
    try:
        with httpx.Client(base_url=running.url, timeout=10) as c:
            assert "10 problems in this lesson" in banner(c, "/lessons/probe/1")
        assert "loaded the lessons: 10 problems" in running.text()
    finally:
        assert running.stop() < 10


def test_a_wheel_build_carries_the_built_in_lessons_found_from_anywhere(tmp_path: Path) -> None:
    """What `pip install .` puts in site-packages: setup.py's build_py copies lessons/ into the app package."""
    source = tmp_path / "source"
    source.mkdir()
    for name in ("pyproject.toml", "setup.py", "README.md", "MANIFEST.in"):
        shutil.copy(ROOT / name, source / name)
    for folder in ("app", "lessons"):
        shutil.copytree(ROOT / folder, source / folder, ignore=shutil.ignore_patterns("__pycache__"))
    built = tmp_path / "site"
    subprocess.run([sys.executable, "setup.py", "-q", "build_py", "--build-lib", str(built)], cwd=source, check=True,
                   capture_output=True, timeout=300)
    assert (built / "app" / "builtin_lessons" / "what-ai-workloads-need" / "lesson.yaml").is_file()
    shutil.rmtree(source)  # no checkout left to fall back on
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    env = {**env_for(elsewhere), "PYTHONPATH": str(built)}
    done = subprocess.run([sys.executable, "-m", "app.cli", "check", "--seeds", "2"], cwd=elsewhere, env=env,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.strip() == f"ok: 3 lesson(s), 51 steps in {built / 'app' / 'builtin_lessons'}"


def test_a_wheel_build_serves_its_pages_with_no_checkout_left(tmp_path: Path) -> None:
    """The same build carries templates/ and static/ (app/site/): the app serves a step page and its stylesheet
    from anywhere, with no checkout to fall back on."""
    source = tmp_path / "source"
    source.mkdir()
    for name in ("pyproject.toml", "setup.py", "README.md", "MANIFEST.in"):
        shutil.copy(ROOT / name, source / name)
    for folder in ("app", "lessons", "templates", "static"):
        shutil.copytree(ROOT / folder, source / folder, ignore=shutil.ignore_patterns("__pycache__"))
    built = tmp_path / "site"
    subprocess.run([sys.executable, "setup.py", "-q", "build_py", "--build-lib", str(built)], cwd=source, check=True,
                   capture_output=True, timeout=300)
    shutil.rmtree(source)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    script = (
        "from fastapi.testclient import TestClient\n"
        "from app.main import create_app\n"
        "from app.settings import Settings\n"
        "from app.web.templating import TEMPLATES\n"
        "with TestClient(create_app(Settings(data_dir='data'))) as c:\n"
        "    step = c.get('/lessons/what-ai-workloads-need/1')\n"
        "    css = c.get('/static/app.css')\n"
        "    print(TEMPLATES, step.status_code, 'A model is a pile of numbers' in step.text, css.status_code)\n"
    )
    env = {**env_for(elsewhere), "PYTHONPATH": str(built)}
    done = subprocess.run([sys.executable, "-c", script], cwd=elsewhere, env=env, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.split() == [str(built / "app" / "site" / "templates"), "200", "True", "200"]


def test_author_mode_from_the_authors_folder_serves_the_built_in_lessons_beside_theirs(home: Path) -> None:
    """`gpu-classroom author my-lessons`, run where an author keeps their lessons: their lesson and the three
    built-in ones on the home page, each lesson's steps served (issue 29, item 1)."""
    running = start(home, "author", "my-lessons")
    try:
        with httpx.Client(base_url=running.url) as c:
            page = c.get("/").text
            for title in ("How big is a KV cache?", "What AI Workloads Need", "Understanding the work",
                          "What is GPU infrastructure?"):
                assert title in html.unescape(page), title
            assert c.get("/lessons/kv-cache-size/1").status_code == 200
            assert c.get("/lessons/what-ai-workloads-need/21").status_code == 200
    finally:
        running.stop()


def test_serve_stops_within_seconds_while_learners_hold_banner_polls_open(home: Path) -> None:
    """A learner's banner poll may wait up to HOLD (10 s) for the class to change; SIGTERM must not wait them out
    (`serve` gives held requests 3 s), so a restart between two classes is quick."""
    import threading

    from app.classroom.bell import HOLD
    from tests.web.classroom_helpers import Instructor, Student

    running = start(home, "serve")
    try:
        with (httpx.Client(base_url=running.url, follow_redirects=True) as teacher,
              httpx.Client(base_url=running.url, follow_redirects=True, timeout=30) as learner):
            created = Instructor(teacher).create("Held", "what-ai-workloads-need")  # type: ignore[arg-type]
            student = Student(learner)  # type: ignore[arg-type]
            student.joins(created.code, "Ada")
            page = student.open("/lessons/what-ai-workloads-need/1")
            poll = re.search(r'hx-get="(/class-banner\?[^"]+)"', page)
            assert poll, "the step page does not poll the class banner"
            answers: list[int] = []

            def held() -> None:
                try:
                    answers.append(learner.get(poll.group(1).replace("&amp;", "&") + "&wait=1").status_code)
                except httpx.HTTPError:
                    answers.append(0)  # the connection closed as the server stopped: the page asks again later

            waiting = threading.Thread(target=held)
            waiting.start()
            time.sleep(1.0)
            assert not answers, "the poll was answered at once: nothing was held"
            took = running.stop()
            waiting.join(timeout=30)
        assert took < HOLD - 2, f"serve took {took:.1f} s to stop with a poll held open"
    finally:
        if running.process.poll() is None:
            running.stop()
