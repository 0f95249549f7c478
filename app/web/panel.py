"""The dgx-1 panel beside a widget's answer: sent out of band only when it differs from the panel the page shows.

Every widget form sends the key of the panel on the page (templates/panel.html's hidden `panel_key`, which lives
inside the panel, so a page restored by back/forward or changed by another widget of the page always sends the key
of what it shows). An answer whose panel has that key leaves the panel out: nothing for the browser to parse.

The key is a digest of what the panel shows (`PanelView.key`). Working it out means laying the panel out, so each
process remembers, per placed load (`NodeLoad`, the panel's only input), the key and the rendered out-of-band
copy: a widget moved back and forth between a few values pays for neither again.
"""

from __future__ import annotations

import hashlib
from weakref import WeakKeyDictionary

from markupsafe import Markup
from starlette.requests import Request

from app.engine.placement import NodeLoad
from app.pages.contexts import panel_view
from app.web.templating import Templates

KEPT = 512  # placed loads remembered per process (a key and a few kB of markup each)

_known: WeakKeyDictionary[Templates, dict[str, tuple[str, Markup]]] = WeakKeyDictionary()


def load_digest(node: NodeLoad) -> str:
    """A short digest of everything the panel is drawn from."""
    return hashlib.blake2s(node.model_dump_json().encode(), digest_size=8).hexdigest()


def panel_update(tpl: Templates, node: NodeLoad, shown: str | None) -> str:
    """The panel's out-of-band copy for an answer whose widget placed `node`; "" when the page already shows
    that panel (`shown` is the key the page sent)."""
    known = _known.setdefault(tpl, {})
    digest = load_digest(node)
    entry = known.get(digest)
    if entry is None:
        if len(known) >= KEPT:
            known.clear()
        panel = panel_view(node)
        entry = known[digest] = (panel.key, tpl.panel(panel, oob=True))
    key, html = entry
    return "" if key == shown else str(html)  # str: adding Markup to a str would escape the str


async def shown_panel(request: Request) -> str | None:
    """The key of the panel the page shows, as a widget's query string or a posted form carries it."""
    if "panel_key" in request.query_params:
        return request.query_params["panel_key"]
    if request.method == "POST":
        value = (await request.form()).get("panel_key")  # the form FastAPI already read: no second parse
        return value if isinstance(value, str) else None
    return None
