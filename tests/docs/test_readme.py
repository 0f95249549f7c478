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
        env = name.upper() if name in ("database_url", "admin_token") else f"GPU_CLASSROOM_{name.upper()}"
        assert f"| `{env}`" in README, f"{env} is missing from the README's settings table"
        assert field.description, f"setting {name} has no description"


def test_every_widget_is_documented_with_every_parameter() -> None:
    from app.widgets.registry import all_widgets

    doc = (Path(__file__).resolve().parents[2] / "docs" / "widgets.md").read_text()
    for name, widget in all_widgets().items():
        assert f"\n## {name}\n" in doc, f"docs/widgets.md does not document the widget {name}"
        section = doc.split(f"\n## {name}\n", 1)[1].split("\n## ", 1)[0]
        for field in widget.params.model_fields:
            assert f"| `{field}` |" in section, f"docs/widgets.md: {name} lacks its parameter {field}"


def test_every_drill_is_documented() -> None:
    from app.drills.registry import all_drills

    doc = (Path(__file__).resolve().parents[2] / "docs" / "drills.md").read_text()
    for name in all_drills():
        assert name in doc, f"docs/drills.md does not mention the drill {name}"
