"""docs/security.md stays true: it names every defence the counts script counts, and the README links it."""

from __future__ import annotations

from pathlib import Path

from tests.security_counts import DEFENCES

ROOT = Path(__file__).resolve().parents[2]
DOC = (ROOT / "docs" / "security.md").read_text()


def test_the_security_page_counts_every_defence_the_script_does() -> None:
    counted = {line.split("|")[1].strip() for line in DOC.splitlines() if line.startswith("| ") and "|" in line[2:]}
    assert set(DEFENCES) <= counted, set(DEFENCES) - counted
    assert "python -m tests.security_counts" in DOC


def test_every_test_the_counts_name_exists() -> None:
    for tests in DEFENCES.values():
        for target in tests:
            path, _, name = target.partition("::")
            assert (ROOT / path).is_file(), target
            assert not name or f"def {name}(" in (ROOT / path).read_text(), target


def test_the_readme_links_the_security_page() -> None:
    assert "(docs/security.md)" in (ROOT / "README.md").read_text()
