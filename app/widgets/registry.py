"""The widgets GPU Classroom knows, by name."""

from __future__ import annotations

from app.widgets.base import Widget

WIDGETS: dict[str, Widget] = {}


def register(widget: Widget) -> Widget:
    """Add a widget to the registry (names are unique)."""
    if widget.name in WIDGETS:
        raise ValueError(f"widget '{widget.name}' registered twice")
    WIDGETS[widget.name] = widget
    return widget


def get_widget(name: str) -> Widget | None:
    """The widget called `name`, or None."""
    _load_all()
    return WIDGETS.get(name)


def all_widgets() -> dict[str, Widget]:
    """Every registered widget."""
    _load_all()
    return dict(WIDGETS)


def _load_all() -> None:
    # Importing a widget module registers it; the list lives in one place.
    from app.widgets import catalog  # noqa: F401
