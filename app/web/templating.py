"""The Jinja2 environment: templates/ on disk, the engine's formatter as filters, and fragment rendering."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from jinja2 import Environment, FileSystemLoader, StrictUndefined, pass_context, select_autoescape
from jinja2.runtime import Context
from jinja2_fragments import render_block, render_blocks
from markupsafe import Markup

from app.engine.text import FILTERS
from app.lessons.glossary import Glossary
from app.pages.contexts import PanelUpdate, PanelView
from app.pages.views import PageContext
from app.web.static import StaticUrls

ROOT = Path(__file__).resolve().parents[2]
PACKAGED = ROOT / "app" / "site"  # where a wheel keeps templates/ and static/ (setup.py); a checkout has them at ROOT
TEMPLATES = PACKAGED / "templates" if (PACKAGED / "templates").is_dir() else ROOT / "templates"
STATIC = PACKAGED / "static" if (PACKAGED / "static").is_dir() else ROOT / "static"
PANELS_KEPT = 512  # rendered dgx-1 panels remembered per process (a few kB each)
# The dashboard's cell per learner and step, by state: 600 learners × 21 steps is 12,600 cells every 2 s, so a
# row's cells are joined in Python (one string a row) rather than output one by one by the template.
GRID_CELLS = {"done": '<td class="c c-done">✓</td>', "current": '<td class="c c-current">●</td>',
              "seen": '<td class="c c-seen">○</td>', "todo": '<td class="c"></td>',
              "mastered": '<td class="c c-done c-mastered" title="drill mastered">★</td>',
              "skipped": '<td class="c c-skipped" title="drill skipped">–</td>',
              "passed": '<td class="c c-passed" title="passed with the class">↷</td>'}


_MD_INLINE = re.compile(r"([\\`*_{}\[\]()#|~!])")
# A line that would open a block: "- ", "+ ", "> ", "=" (a setext underline) or "1. " / "1) " (an ordered list: the
# marker is the punctuation after the digits, and only when a space or the line's end follows, so "1.2 M" stays).
_MD_LINE_START = re.compile(r"^(\s*)([-+=>]|\d+(?=[.)](?:\s|$)))", re.MULTILINE)


def md(text: object) -> str:
    """Learner text for a Markdown file, shown as typed and never rendered: HTML characters become entities,
    Markdown's punctuation is backslash-escaped, and a line cannot open a heading, list, quote or rule."""
    out = str(text).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    out = _MD_INLINE.sub(r"\\\1", out)
    return _MD_LINE_START.sub(_line_start, out)


def _line_start(match: re.Match[str]) -> str:
    """Escape the character that would open a block: the punctuation, which CommonMark lets a backslash escape
    (after the digits of a list number; a backslash before a digit would be shown as typed)."""
    lead, opener = match.group(1), match.group(2)
    return f"{lead}\\{opener}" if not opener[0].isdigit() else f"{lead}{opener}\\"


def grid_cells(states: list[str]) -> Markup:
    """A dashboard row's step cells (states: done, mastered, skipped, current, seen, todo) as table cells."""
    return Markup("".join(GRID_CELLS[state] for state in states))


def link_terms(markup: str, state: Any, lesson: str, step: int, prefix: str) -> Markup:
    """A widget's HTML with the first use of each term its step has not taught yet marked as in prose (issue 27,
    W2): `state` is the app's state (its glossary and lessons). Per widget, not per step: an update swaps one widget
    alone, so what it explains must not depend on another widget's inputs. Outside a lesson nothing is marked."""
    glossary: Glossary | None = getattr(state, "glossary", None)
    if not lesson or glossary is None:
        return Markup(markup)
    lessons = sorted(getattr(state, "lessons", []), key=lambda le: (le.order, le.title))
    order = {le.slug: i for i, le in enumerate(lessons)}
    return Markup(glossary.linker(lesson, step, order).link(str(markup), f"{prefix}-def"))


@pass_context
def widget_terms(context: Context, markup: str, w: Any) -> Markup:
    """The `widget_terms(w)` filter around a widget included in a page (templates/step.html, present.html)."""
    request = context.get("request")
    state = getattr(getattr(request, "app", None), "state", None)
    return link_terms(markup, state, w.lesson, w.step, w.wid)


class Templates:
    """Renders whole templates or named blocks of them (one template per page or widget)."""

    def __init__(self, templates: Path = TEMPLATES, static: Path = STATIC) -> None:
        self.env = Environment(
            loader=FileSystemLoader(templates),
            autoescape=select_autoescape(["html", "svg"]),
            undefined=StrictUndefined,
            trim_blocks=True,
            lstrip_blocks=True,
        )
        self.env.filters.update(FILTERS)
        self.env.filters["md"] = md
        self.env.filters["grid_cells"] = grid_cells
        self.env.filters["widget_terms"] = widget_terms
        self.env.globals["static_url"] = StaticUrls(static)
        self.env.globals["oob"] = False
        self.env.globals["panel_html"] = self.panel
        self._panels: dict[tuple[str, bool], Markup] = {}

    def render(self, context: PageContext, request: object = None, *, blocks: list[str] | None = None) -> str:
        """A typed context's template, whole or only some of its blocks; `request` for base.html."""
        names = {**context.names(), "request": request}
        return self.blocks(context.TEMPLATE, blocks, **names) if blocks else self.page(context.TEMPLATE, **names)

    def page(self, name: str, **context: Any) -> str:
        return self.env.get_template(name).render(**context)

    def block(self, name: str, block_name: str, /, **context: Any) -> str:
        return render_block(self.env, name, block_name, **context)

    def blocks(self, name: str, blocks: list[str], /, **context: Any) -> str:
        return render_blocks(self.env, name, blocks, **context)

    def panel(self, panel: PanelView | PanelUpdate, oob: bool = False) -> Markup:
        """The dgx-1 panel (templates/panel.html), rendered once per different panel: a step page or a widget
        update showing a panel already drawn gets it from memory by its key, the placed load's digest (the
        panel's one cache: about 1 ms a render saved)."""
        key = (panel.key, oob)
        html = self._panels.get(key)
        if html is None:
            if len(self._panels) >= PANELS_KEPT:
                self._panels.clear()
            view = panel.view() if isinstance(panel, PanelUpdate) else panel  # laid out only when drawn
            html = self._panels[key] = Markup(self.block("panel.html", "panel", panel=view, oob=oob))
        return html
