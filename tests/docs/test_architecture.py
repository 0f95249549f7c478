"""docs/architecture.md is the map of the house: every file path and every `app.` name it cites exists (after
datasette's documentation tests, which check the docs against the code)."""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOC = (ROOT / "docs" / "architecture.md").read_text()
CODE = re.findall(r"`([^`\n]+)`", DOC)
# A path: starts at a top-level folder of the repository and names a file or a folder.
PATHS = sorted({c for c in CODE if re.fullmatch(r"(app|templates|static|docs|tests|bench|lessons)/[\w./-]*", c)})
# A dotted name: app.<module>[.<attribute>...], possibly followed by a call's arguments, which are cut off.
NAMES = sorted({m[1] for c in CODE if (m := re.match(r"(app(?:\.\w+)+)", c)) and "/" not in c})


def resolve(dotted: str) -> object:
    """The module or attribute a dotted name means: the longest importable prefix, then attributes."""
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            found: object = importlib.import_module(".".join(parts[:cut]))
        except ModuleNotFoundError:
            continue
        for attr in parts[cut:]:
            found = getattr(found, attr)
        return found
    raise ModuleNotFoundError(dotted)


def test_the_page_cites_enough_to_be_worth_checking() -> None:
    assert len(PATHS) >= 15 and len(NAMES) >= 25, (PATHS, NAMES)


@pytest.mark.parametrize("path", PATHS)
def test_every_path_the_page_cites_exists(path: str) -> None:
    folder = path.rstrip("/").split("/")[0]
    if folder == "lessons" and "my-lesson" in path:
        return  # the "add a lesson" recipe's example folder
    if re.search(r"my[-_]", path):
        return  # the "add a widget/drill" recipes' example files
    assert (ROOT / path).exists(), f"docs/architecture.md cites {path}, which does not exist"


@pytest.mark.parametrize("name", NAMES)
def test_every_dotted_name_the_page_cites_exists(name: str) -> None:
    try:
        resolve(name)
    except (ModuleNotFoundError, AttributeError) as exc:
        raise AssertionError(f"docs/architecture.md cites {name}, which does not exist: {exc}") from exc


def test_every_package_of_app_is_on_the_map() -> None:
    packages = sorted(p.name for p in (ROOT / "app").iterdir() if (p / "__init__.py").exists())
    for package in packages:
        assert f"app.{package}" in DOC, f"docs/architecture.md's diagram leaves out app.{package}"


def test_every_listener_of_app_js_is_in_its_table() -> None:
    script = (ROOT / "static" / "app.js").read_text()
    events = set(re.findall(r'addEventListener\("([\w:]+)"', script))
    section = DOC.split("## static/app.js", 1)[1].split("\n## ", 1)[0]
    missing = sorted(e for e in events if f"`{e}`" not in section and f"`{e}` (" not in section)
    assert not missing, f"docs/architecture.md's static/app.js table leaves out: {missing}"


def test_the_add_a_widget_recipe_holds_for_every_widget_template() -> None:
    """The page's recipe says a widget template has the blocks `widget`, `result` and `errors`, and opens with
    `widget_open` from templates/widgets/_macros.html (and `form_open` for a form that updates over htmx): every
    widget of the catalogue keeps it, and the macros the page names exist."""
    from jinja2 import Environment, nodes

    from app.widgets.catalog import WIDGETS

    folder = ROOT / "templates" / "widgets"
    env = Environment()
    macros = {m.name for m in env.parse((folder / "_macros.html").read_text()).find_all(nodes.Macro)}
    named = set(re.findall(r"`(\w+_open)`", DOC))
    assert named and named <= macros, named - macros
    for widget in WIDGETS:
        source = (ROOT / "templates" / widget.template).read_text()
        blocks = {b.name for b in env.parse(source).find_all(nodes.Block)}
        assert {"widget", "result", "errors"} <= blocks, (widget.template, blocks)
        assert "widget_open(" in source, widget.template


def test_every_widget_module_is_in_the_hand_kept_catalogue() -> None:
    """The catalogue is a list kept by hand (no import side effects): a module under app/widgets that defines a
    WIDGET and is not in app.widgets.catalog.WIDGETS would be a widget no lesson can use."""
    from app.widgets.catalog import WIDGETS

    modules = (ROOT / "app" / "widgets").glob("*.py")
    defined = [p.stem for p in modules if re.search(r"^WIDGET\s*=", p.read_text(), re.M)]
    missing = [m for m in defined if importlib.import_module(f"app.widgets.{m}").WIDGET not in WIDGETS]
    assert len(defined) == len(WIDGETS) and not missing, missing
