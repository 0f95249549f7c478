"""Each typed page context is tied to its template, as datasette's test_template_context ties its view contexts
to theirs: every field is described and read by the template, and every name the template reads is a field (or
one of the few that base.html reads on every page)."""

from __future__ import annotations

import inspect
import re

import pytest
from jinja2 import meta, nodes
from pydantic import BaseModel

from app.pages import class_pages, views
from app.pages.contexts import PanelView, StepPage, WidgetView
from app.pages.drills import DrillView
from app.pages.views import PageContext
from app.pages.widgets import WidgetPage, WidgetUpdate
from app.web.templating import Templates

TEMPLATES = Templates()
ENV = TEMPLATES.env
BASE = {"request", "author"}  # read by base.html on every page: the request, and author mode's flag when it is on


def contexts(base: type[BaseModel] = PageContext) -> list[type[BaseModel]]:
    """Every subclass of `base`, at any depth, by name."""
    found, todo = [], list(base.__subclasses__())
    while todo:
        cls = todo.pop()
        found.append(cls)
        todo += cls.__subclasses__()
    return sorted(found, key=lambda c: c.__name__)


def own_names(name: str) -> set[str]:
    """The names a template reads that it does not set itself anywhere (a `set` outside its blocks, a loop), not
    following includes."""
    assert ENV.loader is not None
    tree = ENV.parse(ENV.loader.get_source(ENV, name)[0])
    stored = {n.name for n in tree.find_all(nodes.Name) if n.ctx in ("store", "param")}
    return set(meta.find_undeclared_variables(tree)) - stored


def reached(name: str, seen: set[str] | None = None) -> list[tuple[str, nodes.Template]]:
    """A template and every template it extends, includes or imports, each once: (source, parsed tree)."""
    seen = set() if seen is None else seen
    if name in seen:
        return []
    seen.add(name)
    assert ENV.loader is not None
    source = ENV.loader.get_source(ENV, name)[0]
    tree = ENV.parse(source)
    found = [(source, tree)]
    for ref in meta.find_referenced_templates(tree):
        if ref:
            found += reached(ref, seen)
    return found


def every_name(name: str) -> set[str]:
    """The names a template and every template it reaches read (`oob`, a global, found in the text too)."""
    return set().union(*(set(meta.find_undeclared_variables(tree)) | set(re.findall(r"\b(oob)\b", source))
                         for source, tree in reached(name)))


CONTEXTS = contexts()


def test_every_context_of_app_pages_views_is_here() -> None:
    assert {c.__name__ for c in CONTEXTS} >= {"HomePage", "GlossaryPage", "OverviewPage", "CompletePage",
                                              "ErrorPage", "SlidePage", "NotesPage", "SheetPage", "RevealBlock"}
    assert all(c.__module__ == views.__name__ for c in CONTEXTS)


@pytest.mark.parametrize("context", CONTEXTS, ids=lambda c: c.__name__)
def test_every_field_is_described(context: type[PageContext]) -> None:
    undescribed = [k for k, f in context.model_fields.items() if not (f.description or "").strip()]
    assert not undescribed, f"{context.__name__}: fields without a description: {undescribed}"
    assert (context.__doc__ or "").strip(), f"{context.__name__} says nothing about the page it is"


@pytest.mark.parametrize("context", CONTEXTS, ids=lambda c: c.__name__)
def test_every_name_the_template_reads_is_a_field(context: type[PageContext]) -> None:
    missing = own_names(context.TEMPLATE) - set(context.model_fields) - set(ENV.globals) - BASE
    assert not missing, f"{context.TEMPLATE} reads {sorted(missing)}, which {context.__name__} does not give"


@pytest.mark.parametrize("context", CONTEXTS, ids=lambda c: c.__name__)
def test_every_field_is_read_by_the_template(context: type[PageContext]) -> None:
    unused = set(context.model_fields) - every_name(context.TEMPLATE)
    assert not unused, f"{context.__name__} gives {sorted(unused)}, which {context.TEMPLATE} never reads"


# --- the class pages: one typed `page` each (app/pages/class_pages.py), read by their templates as page.<field> ---

CLASS_TEMPLATES = {"TeachPage": "classroom/teach.html", "OpenLinkPage": "classroom/open-link.html",
                   "CreatedPage": "classroom/created.html", "JoinPage": "classroom/join.html",
                   "MyClassPage": "classroom/me.html", "DashboardPage": "classroom/dashboard.html",
                   "CockpitPage": "classroom/cockpit.html", "ProjectorPage": "classroom/projector.html",
                   "LearnerPage": "classroom/learner.html", "DeletedPage": "classroom/deleted.html"}


def attributes_read(name: str) -> set[str]:
    """Every attribute a template and every template it reaches read: `page.x`, `p.x`, `x.y`."""
    return {n.attr for _, tree in reached(name) for n in tree.find_all(nodes.Getattr)}


CLASS_CONTEXTS = contexts(class_pages.Page)
CLASS_READ = set().union(*(attributes_read(t) for t in CLASS_TEMPLATES.values()))


def test_every_class_page_is_here() -> None:
    assert set(CLASS_TEMPLATES) <= {c.__name__ for c in CLASS_CONTEXTS}


@pytest.mark.parametrize("context", CLASS_CONTEXTS, ids=lambda c: c.__name__)
def test_every_field_of_a_class_page_is_described_and_read(context: type[BaseModel]) -> None:
    undescribed = [k for k, f in context.model_fields.items() if not (f.description or "").strip()]
    assert not undescribed, f"{context.__name__}: fields without a description: {undescribed}"
    assert (context.__doc__ or "").strip(), f"{context.__name__} says nothing about the page it is"
    template = CLASS_TEMPLATES.get(context.__name__)
    read = attributes_read(template) if template else CLASS_READ  # a part (a head, a report) is read where shown
    for name, prop in inspect.getmembers(context, lambda m: isinstance(m, property)):  # fields read through one
        if name in read and prop.fget is not None:
            read |= set(re.findall(r"self\.(\w+)", inspect.getsource(prop.fget)))
    unused = set(context.model_fields) - read
    assert not unused, f"{context.__name__} gives {sorted(unused)}, which {template or 'no class page'} never reads"


@pytest.mark.parametrize("context", [StepPage, PanelView, WidgetView, DrillView, WidgetUpdate, WidgetPage],
                         ids=lambda c: c.__name__)
def test_every_field_of_the_step_widget_drill_and_panel_contexts_is_described(context: type[BaseModel]) -> None:
    undescribed = [k for k, f in context.model_fields.items() if not (f.description or "").strip()]
    assert not undescribed, f"{context.__name__}: fields without a description: {undescribed}"
