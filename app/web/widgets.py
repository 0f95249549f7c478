"""GET /widgets/{name}: a widget's result for htmx (with the dgx-1 panel out of band), or its page."""

from __future__ import annotations

from fastapi import APIRouter, HTTPException, Request
from fastapi.responses import HTMLResponse

from app.pages.contexts import WidgetView, panel_view, widget_view
from app.pages.lessons import lesson_defaults
from app.web.deps import Lessons, Tpl, is_htmx
from app.web.panel import panel_update, shown_panel
from app.web.responses import vary_html
from app.web.templating import Templates
from app.widgets.base import Widget
from app.widgets.registry import get_widget
from app.widgets.service import WidgetAddress

router = APIRouter()


@router.get("/widgets/{name}", response_class=HTMLResponse)
async def widget(request: Request, name: str, tpl: Tpl, lessons: Lessons) -> HTMLResponse:
    """Recompute a widget from its query string; bad input: 422 with the message beside the field.

    Inside a lesson (`lesson`, `step`, `w`) the answer's X-Share-Url names this widget's inputs that differ from
    the lesson's own, as `w2.gpus=4` keys; static/app.js merges them into the address bar."""
    found = get_widget(name)
    if found is None:
        raise HTTPException(status_code=404, detail=f"There is no widget called '{name}'.")
    at = WidgetAddress.from_query(request.query_params)
    defaults = lesson_defaults(lessons, at.lesson, at.step, at.w, name) if at.in_lesson else {}
    view = widget_view(found, defaults, request.query_params, index=at.w, lesson=at.lesson, step=at.step)
    if not is_htmx(request):
        page = tpl.page("widget_page.html", request=request, w=view, panel=panel_view(view.node))
        return vary_html(page, 422 if view.errors else 200)
    return _update(tpl, found, view, await shown_panel(request), shared=at.in_lesson)


def _update(tpl: Templates, widget: Widget, view: WidgetView, panel_key: str | None, shared: bool) -> HTMLResponse:
    """The result block for htmx, also with a 422: a refused field keeps its last valid value, the other fields
    are used as typed, and the result says it is not the form's (stale). Messages go out of band only with a 422
    (errors_oob; static/app.js clears them after a good answer), and the dgx-1 panel only when it differs from
    the one the page shows (`panel_key`):
    every element swapped costs the browser."""
    body = tpl.blocks(widget.template, ["result", "errors"], w=view, oob=True)
    if view.node is not None:
        body += panel_update(tpl, view.node, panel_key)
    status, headers = (422 if view.errors else 200), {}
    if view.running is False and not view.errors:
        status = 286  # htmx stops polling: the live run has finished or is paused
    if shared and not view.errors:
        headers["X-Share-Url"] = view.share_url()
    return vary_html(body, status, headers)
