"""`gpu-classroom serve` and `migrate` fail at start-up in one line naming the host or path and what to do,
with a non-zero exit and no traceback (unless --debug); they refuse a database they cannot write."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CLI = [sys.executable, "-m", "app.cli"]


def closed_port() -> int:
    """A port on 127.0.0.1 nothing listens on (bound, then released)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def run_cli(tmp_path: Path, *argv: str, **env: str) -> subprocess.CompletedProcess[str]:
    base = {k: v for k, v in os.environ.items() if not k.startswith("GPU_CLASSROOM_") and k != "DATABASE_URL"}
    base.update({"GPU_CLASSROOM_DATA_DIR": str(tmp_path / "data"), "GPU_CLASSROOM_LESSONS_DIR": str(ROOT / "lessons"),
                 "GPU_CLASSROOM_SECRET_KEY": "test-secret-key", **env})
    return subprocess.run([*CLI, *argv], cwd=ROOT, env=base, capture_output=True, text=True, timeout=60)


def one_line_failure(done: subprocess.CompletedProcess[str]) -> str:
    assert done.returncode != 0, done
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and "Traceback" not in done.stderr, done.stderr
    return lines[0]


@pytest.mark.parametrize("command", ["serve", "migrate"])
def test_postgresql_unreachable_names_host_and_port(tmp_path: Path, command: str) -> None:
    port = closed_port()
    line = one_line_failure(run_cli(tmp_path, command, DATABASE_URL=f"postgresql://postgres@127.0.0.1:{port}/x"))
    assert f"127.0.0.1:{port}" in line and "DATABASE_URL" in line and "Start it" in line


@pytest.mark.postgres
@pytest.mark.parametrize("command", ["serve", "migrate"])
def test_a_missing_database_is_named_with_how_to_create_it(tmp_path: Path, command: str) -> None:
    line = one_line_failure(run_cli(tmp_path, command,
                                    DATABASE_URL="postgresql://postgres@127.0.0.1:5432/gc_no_such_database"))
    assert "gc_no_such_database" in line and "createdb" in line and "127.0.0.1:5432" in line


@pytest.mark.parametrize("command", ["serve", "migrate"])
def test_a_data_folder_it_cannot_write_is_named(tmp_path: Path, command: str) -> None:
    folder = "/sys/gpu-classroom-data"  # no process, root included, can create anything under /sys
    line = one_line_failure(run_cli(tmp_path, command, GPU_CLASSROOM_DATA_DIR=folder))
    assert folder in line and "write access" in line


def test_a_bad_setting_is_one_line_too(tmp_path: Path) -> None:
    line = one_line_failure(run_cli(tmp_path, "serve", GPU_CLASSROOM_PORT="0"))
    assert "bad setting" in line


def test_debug_shows_the_traceback(tmp_path: Path) -> None:
    port = closed_port()
    done = run_cli(tmp_path, "--debug", "migrate", DATABASE_URL=f"postgresql://postgres@127.0.0.1:{port}/x")
    assert done.returncode != 0 and "Traceback" in done.stderr and "StartupProblem" in done.stderr


@pytest.mark.skipif(os.geteuid() != 0 or shutil.which("unshare") is None,
                    reason="a read-only mount needs root and unshare (a private mount namespace)")
def test_an_existing_database_in_a_read_only_folder_is_refused_not_served(tmp_path: Path) -> None:
    """The issue's case: the database exists and the secret key is set, but the folder is mounted read-only.
    A private mount namespace holds the read-only mount; nothing outside the test sees it."""
    assert run_cli(tmp_path, "migrate").returncode == 0
    data = tmp_path / "data"
    script = (f"mount --bind {data} {data} && mount -o remount,bind,ro {data} && "
              f"exec {sys.executable} -m app.cli serve --port {closed_port()}")
    base = {k: v for k, v in os.environ.items() if not k.startswith("GPU_CLASSROOM_") and k != "DATABASE_URL"}
    base.update({"GPU_CLASSROOM_DATA_DIR": str(data), "GPU_CLASSROOM_SECRET_KEY": "test-secret-key",
                 "GPU_CLASSROOM_LESSONS_DIR": str(ROOT / "lessons")})
    done = subprocess.run(["unshare", "--mount", "--propagation", "private", "sh", "-c", script], cwd=ROOT,
                          env=base, capture_output=True, text=True, timeout=60)
    line = one_line_failure(done)
    assert str(data.resolve()) in line and "write" in line
