"""Each typed page context is tied to its template, as datasette's test_template_context ties its view contexts
to theirs: every field is described and read by the template, and every name the template reads is a field (or
one of the few that base.html reads on every page)."""

from __future__ import annotations

import re

import pytest
from jinja2 import meta, nodes

from app.pages import views
from app.pages.views import PageContext
from app.web.templating import Templates

TEMPLATES = Templates()
ENV = TEMPLATES.env
BASE = {"request", "author"}  # read by base.html on every page: the request, and author mode's flag when it is on


def contexts() -> list[type[PageContext]]:
    found, todo = [], list(PageContext.__subclasses__())
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


def every_name(name: str, seen: set[str] | None = None) -> set[str]:
    """The names a template and every template it extends, includes or imports read."""
    seen = set() if seen is None else seen
    if name in seen:
        return set()
    seen.add(name)
    assert ENV.loader is not None
    tree = ENV.parse(ENV.loader.get_source(ENV, name)[0])
    source = ENV.loader.get_source(ENV, name)[0]
    names = set(meta.find_undeclared_variables(tree)) | set(re.findall(r"\b(oob)\b", source))  # oob: a global too
    for ref in meta.find_referenced_templates(tree):
        if ref:
            names |= every_name(ref, seen)
    return names


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
