"""The README stays true: its commands, its settings table."""

from __future__ import annotations

from pathlib import Path

from app.settings import Settings

README = (Path(__file__).resolve().parents[2] / "README.md").read_text()


def test_readme_gives_the_two_commands_first() -> None:
    run, test = README.index("make run"), README.index("make test")
    assert run < test < README.index("## Layout")


def test_every_setting_is_in_the_readme_table() -> None:
    for name, field in Settings.model_fields.items():
        env = "DATABASE_URL" if name == "database_url" else f"GPU_CLASSROOM_{name.upper()}"
        assert f"| `{env}` |" in README, f"{env} is missing from the README's settings table"
        assert field.description, f"setting {name} has no description"
