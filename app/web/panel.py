"""The dgx-1 panel beside an answer that places work: sent out of band only when it differs from the page's.

Every form that can move the panel (a widget's, a drill's answer, a guess) sends the key of the panel the page
shows as `panel_key` (static/app.js reads it from the panel's `data-key`, which back/forward cannot restore to an
old value). The key is the placed load's digest (app.pages.contexts.panel_key); the rendered panel is kept by it
in one cache (app/web/templating.py, Templates.panel).
"""

from __future__ import annotations

from starlette.requests import Request

from app.engine.placement import NodeLoad
from app.pages.contexts import changed_panel
from app.web.templating import Templates


def panel_update(tpl: Templates, node: NodeLoad, shown: str | None) -> str:
    """The panel's out-of-band copy for an answer that placed `node`; "" when the page already shows it."""
    panel = changed_panel(node, shown)
    return "" if panel is None else str(tpl.panel(panel, oob=True))  # str: Markup + str would escape the str


async def shown_panel(request: Request) -> str | None:
    """The key of the panel the page shows, as a query string or a posted form carries it."""
    if "panel_key" in request.query_params:
        return request.query_params["panel_key"]
    if request.method == "POST":
        value = (await request.form()).get("panel_key")  # the form FastAPI already read: no second parse
        return value if isinstance(value, str) else None
    return None
