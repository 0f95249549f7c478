"""The response shapes the routers share: the Vary header, a 429's Retry-After, and the 422 JSON body."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol

from fastapi import HTTPException
from fastapi.responses import HTMLResponse, JSONResponse


class Limited(Protocol):
    """A refusal for going too fast (app.classroom.ratelimit.RateLimited): a sentence and the seconds to wait."""

    retry_after: int


VARY = {"Vary": "HX-Request"}  # an answer that is a fragment for htmx and a page otherwise (app.web.deps.is_htmx)


def vary_html(body: str, status: int = 200, headers: Mapping[str, str] | None = None) -> HTMLResponse:
    """HTML that is a fragment for htmx and a page otherwise (app.web.deps.is_htmx): caches key it on HX-Request."""
    return HTMLResponse(body, status_code=status, headers={**VARY, **(headers or {})})


def retry_after(seconds: int | None) -> dict[str, str]:
    """The Retry-After header of a 429, or none."""
    return {} if seconds is None else {"Retry-After": str(seconds)}


def too_many(exc: Limited) -> HTTPException:
    """429 with the refusal's sentence and its Retry-After."""
    return HTTPException(status_code=429, detail=str(exc), headers=retry_after(exc.retry_after))


def problem(field: str, message: str, loc: Sequence[str | int], type_: str, msg: str | None = None) -> dict[str, Any]:
    """One entry of a 422's `detail`: our `field` and `message`, and FastAPI's own `loc`, `msg` and `type`."""
    return {"field": field, "message": message, "loc": list(loc), "msg": message if msg is None else msg,
            "type": type_}


def unprocessable(detail: list[dict[str, Any]], message: str | None = None) -> JSONResponse:
    """422 in the one JSON shape of bad input: `detail` (see problem) and a `message` of them all in a line."""
    text = "; ".join(f"{d['field']}: {d['message']}" for d in detail) if message is None else message
    return JSONResponse({"detail": detail, "message": text}, status_code=422)
