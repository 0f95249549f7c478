"""GET /healthz: 200 when the database answers."""

from __future__ import annotations

from fastapi import APIRouter
from fastapi.responses import JSONResponse

from app.web.deps import DB

router = APIRouter()


@router.get("/healthz", include_in_schema=False)
async def healthz(db: DB) -> JSONResponse:
    """Liveness and readiness in one: the database must answer."""
    ok = await db.ping()
    return JSONResponse({"status": "ok" if ok else "database unavailable"}, status_code=200 if ok else 503)
