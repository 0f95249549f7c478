"""GET /docs (Swagger UI) and /redoc (ReDoc): the API's own pages, from static/vendor, with no inline script.

FastAPI's built-in pages load both from a CDN with an inline script, which the site's CSP blocks. These load
the copies `make frontend` takes from the npm registry (pinned in package-lock.json) and start them from
static/api-docs.js. Both libraries write their own <style> elements, so these two pages alone allow inline
styles; scripts stay 'self' only.
"""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse

from app.pages.views import RedocPage, SwaggerPage
from app.web.deps import Tpl
from app.web.security import CSP

router = APIRouter(include_in_schema=False)
DOCS_CSP = CSP.replace("style-src 'self'", "style-src 'self' 'unsafe-inline'").replace(
    "worker-src 'self'", "worker-src 'self' blob:")


def _page(tpl: Tpl, request: Request, page: type[SwaggerPage]) -> HTMLResponse:
    html = tpl.render(page(spec_url=request.app.openapi_url or "/openapi.json"), request)
    return HTMLResponse(html, headers={"Content-Security-Policy": DOCS_CSP})


@router.get("/docs", response_class=HTMLResponse)
async def swagger(request: Request, tpl: Tpl) -> HTMLResponse:
    """Swagger UI over /openapi.json."""
    return _page(tpl, request, SwaggerPage)


@router.get("/redoc", response_class=HTMLResponse)
async def redoc(request: Request, tpl: Tpl) -> HTMLResponse:
    """ReDoc over /openapi.json."""
    return _page(tpl, request, RedocPage)
