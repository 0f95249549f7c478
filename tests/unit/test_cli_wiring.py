"""The CLI's wiring: every command is there (none dropped by a failed import), and `check` builds no app."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from app.cli import build_parser

ROOT = Path(__file__).resolve().parents[2]


def test_every_command_the_readme_names_is_there() -> None:
    commands = build_parser()._subparsers._group_actions[0].choices  # type: ignore[union-attr]
    assert set(commands) == {"serve", "author", "new", "check", "plan", "migrate", "profile", "export"}


def test_checking_lessons_builds_no_app_and_reads_no_web_module() -> None:
    code = ("import sys; from app.cli import main; rc = main(['check', 'tests/fixtures/lessons', '--seeds', '1']);"
            "print(rc, sorted(m for m in sys.modules if m == 'app.main' or m.startswith('app.web')))")
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.stdout.strip().splitlines()[-1] == "0 []", done.stdout + done.stderr
