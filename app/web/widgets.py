"""GET /widgets/{name}: a widget's result for htmx (with the dgx-1 panel out of band), or its page."""

from __future__ import annotations

from fastapi import APIRouter, HTTPException, Request
from fastapi.responses import HTMLResponse

from app.web.contexts import panel_view, widget_view
from app.web.deps import Lessons, Tpl, is_htmx
from app.web.panel import panel_update
from app.web.steps import lesson_defaults
from app.widgets.registry import get_widget

router = APIRouter()


@router.get("/widgets/{name}", response_class=HTMLResponse)
async def widget(request: Request, name: str, tpl: Tpl, lessons: Lessons) -> HTMLResponse:
    """Recompute a widget from its query string; bad input: 422 with the message beside the field.

    Inside a lesson (`lesson`, `step`, `w`) the answer's X-Share-Url names this widget's inputs that differ from
    the lesson's own, as `w2.gpus=4` keys; static/app.js merges them into the address bar."""
    found = get_widget(name)
    if found is None:
        raise HTTPException(status_code=404, detail=f"There is no widget called '{name}'.")
    q = request.query_params
    index = int(q["w"]) if q.get("w", "").isdigit() and 0 < int(q["w"]) < 100 else 1
    lesson = q.get("lesson", "") if q.get("lesson", "").replace("-", "").isalnum() else ""
    step = int(q["step"]) if q.get("step", "").isdigit() else 0
    defaults = lesson_defaults(lessons, lesson, step, index, name) if lesson and step else {}
    view = widget_view(found, defaults, q, index=index, lesson=lesson, step=step)
    status = 422 if view.errors else 200
    headers = {"Vary": "HX-Request"}
    if not is_htmx(request):
        html = tpl.page("widget_page.html", request=request, w=view, panel=panel_view(view.node))
        return HTMLResponse(html, status_code=status, headers=headers)
    # Messages go out of band only with a 422 (errors_oob; static/app.js clears them after a good answer), and
    # the dgx-1 panel only when it differs from the one the page shows: every element swapped costs the browser.
    body = tpl.blocks(found.template, ["result", "errors"], w=view, oob=True)
    if view.node is not None:
        body += panel_update(tpl, view.node, q.get("panel_key"))
    if found.running is not None and not view.errors and not found.running(view.result):
        status = 286  # htmx stops polling: the live run has finished or is paused
    if view.errors:
        headers["HX-Reswap"] = "none"  # keep the last good result; the messages swap in beside the fields
    elif lesson and step:
        headers["X-Share-Url"] = view.share_url()
    return HTMLResponse(body, status_code=status, headers=headers)
