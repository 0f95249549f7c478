"""The widget page service: GET /widgets/{name} in one call, from the lessons, the widget's name and the query.

    widget_update(lessons, name, query, shown_panel) -> WidgetUpdate     an htmx update: result, panel, status
    widget_page(lessons, name, query) -> WidgetPage                      the widget on its own page (no JavaScript)

Each finds the widget once, reads the envelope (`w`, `lesson`, `step`), takes the lesson block's own values as
the widget's defaults, runs the widget's lifecycle (app.widgets.service.render) and says what the answer holds:
the view, the dgx-1 panel when it differs from the page's, the status and the share link.
"""

from __future__ import annotations

from collections.abc import Mapping

from pydantic import BaseModel, Field, JsonValue

from app.lessons.model import Lesson
from app.pages.contexts import AnyWidgetView, PanelUpdate, PanelView, changed_panel, panel_view, widget_view
from app.pages.errors import NotFound
from app.pages.lessons import lesson_defaults
from app.widgets.registry import all_widgets, get_widget
from app.widgets.service import W_MAX as W_MAX
from app.widgets.service import W_MIN as W_MIN
from app.widgets.service import WidgetAddress

STOP_POLLING = 286  # htmx stops polling a live run that has finished or is paused


class WidgetDoc(BaseModel):
    """A widget as the OpenAPI document describes its GET /widgets/<name>."""

    name: str = Field(description="The widget's name")
    title: str = Field(description="Its title")
    description: str = Field(description="What it shows, in a sentence")
    params: dict[str, JsonValue] = Field(description="The JSON schema of its Params: the query's fields")


def widget_docs() -> list[WidgetDoc]:
    """Every widget, by name, with the JSON schema of its query."""
    return [
        WidgetDoc(name=name, title=w.title, description=w.description or w.title, params=w.params.model_json_schema())
        for name, w in sorted(all_widgets().items())
    ]


class WidgetUpdate(BaseModel):
    """What an htmx update of one widget answers: its `result` and `errors` blocks, the panel out of band when it
    changed, the status and, inside a lesson, the address of the widget's inputs."""

    w: AnyWidgetView = Field(description="The widget computed for the query, as its template shows it")
    panel: PanelUpdate | None = Field(description="The dgx-1 panel out of band; None when the page already shows it")
    status: int = Field(description="200; 422 when a field was refused; 286 when a live run stopped")
    share_url: str = Field(description="X-Share-Url: the step's address with this widget's changed inputs, or ''")


class WidgetPage(BaseModel):
    """A widget on its own page (templates/widget_page.html): a form sent without JavaScript lands here."""

    w: AnyWidgetView = Field(description="The widget computed for the query")
    panel: PanelView = Field(description="The dgx-1 panel with the widget's work placed, else idle")
    status: int = Field(description="200, or 422 when a field was refused")


def widget_update(lessons: list[Lesson], name: str, query: Mapping[str, str], shown_panel: str | None) -> WidgetUpdate:
    """One widget's update; `shown_panel` is the key of the panel the page shows (the form's `panel_key`)."""
    view, in_lesson = _view(lessons, name, query)
    status = 422 if view.errors else STOP_POLLING if view.stopped else 200
    share = view.share_url() if in_lesson and not view.errors else ""
    return WidgetUpdate(w=view, panel=changed_panel(view.node, shown_panel), status=status, share_url=share)


def widget_page(lessons: list[Lesson], name: str, query: Mapping[str, str]) -> WidgetPage:
    """The widget and the panel as a whole page."""
    view, _ = _view(lessons, name, query)
    return WidgetPage(w=view, panel=panel_view(view.node), status=422 if view.errors else 200)


def _view(lessons: list[Lesson], name: str, query: Mapping[str, str]) -> tuple[AnyWidgetView, bool]:
    """The widget looked up once, its envelope read, the lesson's values as its defaults, then computed."""
    widget = get_widget(name)
    if widget is None:
        raise NotFound(f"There is no widget called '{name}'.")
    at = WidgetAddress.from_query(query)
    defaults = lesson_defaults(lessons, at.lesson, at.step, at.w, name) if at.in_lesson else {}
    return widget_view(widget, defaults, query, index=at.w, lesson=at.lesson, step=at.step), at.in_lesson
