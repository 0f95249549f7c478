"""The locks install what pyproject.toml asks for: every dependency (and every test extra) pinned, with hashes, so a
fresh clone's `make` gets the versions the tests passed on."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]


def name(requirement: str) -> str:
    return re.split(r"[\s\[<>=!~;]", requirement, maxsplit=1)[0].lower().replace("_", "-")


def pins(lock: str) -> dict[str, str]:
    text = (ROOT / lock).read_text()
    return {m[1].lower().replace("_", "-"): m[2] for m in re.finditer(r"^([A-Za-z0-9_.-]+)==(\S+) \\$", text, re.M)}


def test_every_dependency_of_the_app_is_pinned_in_requirements_lock() -> None:
    missing = {name(r) for r in PROJECT["dependencies"]} - set(pins("requirements.lock"))
    assert not missing, f"requirements.lock lacks {sorted(missing)}: run `make lock`"


def test_every_test_dependency_is_pinned_in_requirements_test_lock_at_the_app_locks_versions() -> None:
    app, test = pins("requirements.lock"), pins("requirements-test.lock")
    wanted = {name(r) for r in PROJECT["dependencies"] + PROJECT["optional-dependencies"]["test"]}
    assert not wanted - set(test), f"requirements-test.lock lacks {sorted(wanted - set(test))}: run `make lock`"
    assert {k: v for k, v in test.items() if k in app} == app, "the two locks pin the app's packages differently"


def test_every_pin_carries_its_hashes() -> None:
    for lock in ("requirements.lock", "requirements-test.lock"):
        blocks = re.split(r"\n(?=\S)", (ROOT / lock).read_text().strip())
        unhashed = [b.split()[0] for b in blocks if "==" in b and "--hash=sha256:" not in b]
        assert not unhashed, f"{lock}: no hash for {unhashed}"
