"""GET /widgets/{name}: a widget's result for htmx (with the dgx-1 panel out of band), or its page."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse

from app.pages.widgets import widget_page, widget_update
from app.web.deps import Lessons, Tpl, is_htmx
from app.web.responses import vary_html
from app.web.templating import link_terms

router = APIRouter()


@router.get("/widgets/{name}", response_class=HTMLResponse)
async def widget(request: Request, name: str, tpl: Tpl, lessons: Lessons) -> HTMLResponse:
    """Recompute a widget from its query string (app.pages.widgets); bad input: 422 with the message beside the field.

    For htmx: the `result` and `errors` blocks (messages out of band only with a 422; static/app.js clears them
    after a good answer), the dgx-1 panel only when it differs from the page's `panel_key`, and inside a lesson
    X-Share-Url, which static/app.js merges into the address bar. Every element swapped costs the browser."""
    if not is_htmx(request):
        page = widget_page(lessons, name, request.query_params)
        return vary_html(tpl.page("widget_page.html", request=request, page=page), page.status)
    update = widget_update(lessons, name, request.query_params, request.query_params.get("panel_key"))
    body = tpl.blocks(update.w.template, ["result", "errors"], w=update.w, oob=True)
    body = str(link_terms(body, request.app.state, update.w.lesson, update.w.step, update.w.wid))
    if update.panel is not None:
        body += str(tpl.panel(update.panel, oob=True))  # str: a str plus Markup would escape the str
    return vary_html(body, update.status, {"X-Share-Url": update.share_url} if update.share_url else {})
