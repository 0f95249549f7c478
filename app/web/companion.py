"""The companion lessons' learner data: the workload sheet (autosaved, exported) and the profiling data."""

from __future__ import annotations

import re

from fastapi import APIRouter, Depends, HTTPException, Query, Request
from fastapi.responses import FileResponse, HTMLResponse, JSONResponse, RedirectResponse, Response

from app.classroom import sheets
from app.classroom.db import Database
from app.classroom.ratelimit import RateLimited, hit
from app.companion import profiling
from app.pages.companion import parse_report
from app.pages.views import SheetMarkdown, SheetPage
from app.web import heavy
from app.web.deps import DB, Config, LearnerId, Tpl, is_htmx
from app.web.responses import too_many, vary_html
from app.web.security import require_csrf

router = APIRouter()

SAVES_PER_MINUTE = 240  # autosave sends a request after each pause in typing
ATTACHES_PER_MINUTE = 30
SAFE_NEXT = re.compile(r"^/(lessons/[a-z0-9-]+/[0-9]+|companion/sheet)$")


def _next(value: object) -> str:
    """Where to go after a form post without JavaScript: a lesson step or the sheet page, nothing else."""
    return value if isinstance(value, str) and SAFE_NEXT.match(value) else "/companion/sheet"


async def _limit(db: Database, key: str, limit: int) -> None:
    try:
        await hit(db, key, limit, 60)
    except RateLimited as exc:
        raise too_many(exc) from exc


async def _form(request: Request) -> dict[str, str]:
    form = await request.form()
    return {k: v for k, v in form.items() if isinstance(v, str)}


def _page(request: Request, tpl: Tpl, page: SheetPage, status: int = 200) -> HTMLResponse:
    return vary_html(tpl.render(page, request), status)


@router.get("/companion/sheet", response_class=HTMLResponse)
async def sheet_page(request: Request, db: DB, tpl: Tpl, learner: LearnerId) -> HTMLResponse:
    """The learner's workload sheet on a page of its own, with its measurements and exports."""
    return _page(request, tpl, SheetPage(sheet=await sheets.get_sheet(db, learner)))


@router.post("/companion/sheet", dependencies=[Depends(require_csrf)])
async def save_sheet(request: Request, db: DB, tpl: Tpl, learner: LearnerId) -> Response:
    """Autosave: keep every field that passes its check; a refused field gets its message beside it (422)."""
    form = await _form(request)
    await _limit(db, f"sheet:{learner}", SAVES_PER_MINUTE)
    result = await sheets.save(db, learner, form)
    status = 422 if result.errors else 200
    if is_htmx(request):
        page = SheetPage(sheet=result.sheet, errors=result.errors, saved=result.saved)
        body = tpl.render(page, request, blocks=["save_response"])
        return vary_html(body, status)
    if result.errors:
        typed = {k: sheets.from_form(result.sheet.field(k), form, k) for k in result.errors}
        return _page(request, tpl, SheetPage(sheet=result.sheet, errors=result.errors, typed=typed), 422)
    return RedirectResponse(_next(form.get("next")) + "#sheet", status_code=303)


@router.get("/companion/sheet.md")
async def sheet_markdown(request: Request, db: DB, tpl: Tpl, learner: LearnerId) -> Response:
    """The sheet as a Markdown file: empty fields stay empty, measurements keep where they came from."""
    data = sheets.export(await sheets.get_sheet(db, learner))
    text = tpl.render(SheetMarkdown(sheet=data))
    return Response(
        text,
        media_type="text/markdown; charset=utf-8",
        headers={"Content-Disposition": 'attachment; filename="workload-sheet.md"'},
    )


@router.get("/companion/sheet.json")
async def sheet_json(db: DB, learner: LearnerId) -> JSONResponse:
    """The sheet as JSON, the same fields as the Markdown export."""
    data = sheets.export(await sheets.get_sheet(db, learner))
    return JSONResponse(
        data.model_dump(mode="json"),
        headers={"Content-Disposition": 'attachment; filename="workload-sheet.json"'},
    )


@router.post("/companion/sheet/profiles", dependencies=[Depends(require_csrf)])
async def attach_profile(request: Request, db: DB, tpl: Tpl, learner: LearnerId, config: Config) -> Response:
    """Attach a profiling result (from the browser's run or pasted from the terminal) to the sheet."""
    form = await _form(request)
    await _limit(db, f"profile:{learner}", ATTACHES_PER_MINUTE)
    report, error = parse_report(form.get("report", ""), config.data_dir / "profile-cache")
    sheet = await (sheets.attach_profile(db, learner, report) if report else sheets.get_sheet(db, learner))
    if is_htmx(request):
        body = _profiles(tpl, request, sheet, form, error, form.get("source", "terminal"), report is not None)
        return vary_html(body, 422 if error else 200)
    if error:
        page = SheetPage(sheet=sheet, report_text=form.get("report", ""), report_error=error)
        return _page(request, tpl, page, 422)
    return RedirectResponse(_next(form.get("next")) + "#measurements", status_code=303)


@router.post("/companion/sheet/profiles/{profile_id}/delete", dependencies=[Depends(require_csrf)])
async def remove_profile(request: Request, profile_id: str, db: DB, tpl: Tpl, learner: LearnerId) -> Response:
    """Detach one measurement from the sheet."""
    form = await _form(request)
    sheet = await sheets.remove_profile(db, learner, profile_id[:32])
    if is_htmx(request):
        return vary_html(_profiles(tpl, request, sheet, form))
    return RedirectResponse(_next(form.get("next")) + "#measurements", status_code=303)


def _profiles(
    tpl: Tpl, request: Request, sheet: sheets.Sheet, form: dict[str, str], error: str = "", source: str = "",
    attached: bool = False,
) -> str:
    """The sheet's measurements block for htmx, after one was attached or removed."""
    page = SheetPage(sheet=sheet, report_error=error, source=source, attached=attached, next=_next(form.get("next")))
    return tpl.render(page, request, blocks=["profiles_response"])


@router.get("/companion/profile-data.csv")
async def profile_data(
    request: Request, config: Config, size_mb: int = Query(default=8, ge=1, le=profiling.WEB_MAX_MB)
) -> Response:
    """The profiling exercise's CSV: generated once per size (in a worker process) into a cache, served from it."""
    if size_mb not in profiling.WEB_SIZES_MB:
        sizes = ", ".join(str(s) for s in profiling.WEB_SIZES_MB)
        raise HTTPException(status_code=422, detail=f"size_mb: Choose one of: {sizes}.")
    nbytes = profiling.size_bytes(size_mb)
    headers = _csv_headers(nbytes)
    if profiling.etag(nbytes) in request.headers.get("if-none-match", ""):
        return Response(status_code=304, headers=headers)
    cache = config.data_dir / "profile-cache"
    path = profiling.cached_path(cache, nbytes)
    if not (path.exists() and profiling.cached_sum(cache, nbytes) is not None):
        await heavy.in_process(request.app, profiling.ensure_cached, cache, nbytes)
    return FileResponse(path, media_type="text/csv", headers=headers)


def _csv_headers(nbytes: int) -> dict[str, str]:
    return {
        "ETag": profiling.etag(nbytes),
        "Cache-Control": "public, max-age=86400",
        "Content-Encoding": "identity",  # the exercise times reading these bytes: no gzip in between
        "X-Profile-Values": str(profiling.value_count(nbytes)),
    }
