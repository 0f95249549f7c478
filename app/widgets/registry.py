"""The widgets GPU Classroom knows, by name (the list itself is app/widgets/catalog.py)."""

from __future__ import annotations

from functools import cache

from app.widgets.base import AnyWidget


@cache
def _by_name() -> dict[str, AnyWidget]:
    """The catalog by name, built once; names are unique. (Imported here, not at the top: a widget that links to
    others, five_questions, looks them up here while the catalog imports it.)"""
    from app.widgets.catalog import WIDGETS

    found: dict[str, AnyWidget] = {}
    for widget in WIDGETS:
        if widget.name in found:
            raise ValueError(f"widget '{widget.name}' listed twice")
        found[widget.name] = widget
    return found


def get_widget(name: str) -> AnyWidget | None:
    """The widget called `name`, or None."""
    return _by_name().get(name)


def all_widgets() -> dict[str, AnyWidget]:
    """Every widget, by name, in the catalog's order."""
    return dict(_by_name())
