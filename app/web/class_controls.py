"""The instructor's controls: every one a form that needs the class's key (or its owner's) and CSRF, and that
answers input it cannot use with the same view again, the message beside the field, and a 4xx.

POST /teach/{code}/pace | idle | reveal | answer | message | timer | flags | close | reopen | copy | delete
POST /teach/{code}/learners/{n}/rename | merge | remove | resume
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Form, HTTPException, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from app.classroom import classes, owners, projection, roster
from app.classroom.class_models import Classroom
from app.classroom.figures import outline_of
from app.classroom.outline import Outline
from app.classroom.room import answers_of
from app.lessons.model import Lesson
from app.pages.class_drills import outline_for
from app.pages.class_pages import DeletedPage, cockpit_page, dashboard_page, learner_page
from app.web.class_common import (
    KEY_COOKIE,
    NO_STORE,
    Instructing,
    Owner,
    back,
    base_url,
    join_url,
    keep_key,
    keep_owner,
    render,
    resume_secret,
)
from app.web.class_views import member_of
from app.web.deps import DB, Config, Lessons, Tpl
from app.web.security import require_csrf
from app.web.teach import end_hours

router = APIRouter(dependencies=[Depends(require_csrf)])
View = Annotated[str, Form(max_length=20)]
Short = Annotated[str, Form(max_length=20)]


async def refused(request: Request, tpl: Tpl, db: DB, klass: Classroom, view: str, exc: classes.ClassError,
                  values: dict[str, str] | None = None, panel: str = "") -> HTMLResponse:
    """The view the form came from, again, with the message beside the field that caused it."""
    errors, values = {exc.field: exc.message}, values or {}
    if view == "cockpit":
        page = await cockpit_page(db, klass, join_url(request, klass), errors=errors, values=values)
        return render(tpl, request, "classroom/cockpit.html", page, status=exc.status, headers=NO_STORE)
    dash = await dashboard_page(db, klass, join_url(request, klass), errors=errors, values=values,
                                open_panel=panel)
    return render(tpl, request, "classroom/dashboard.html", dash, status=exc.status, headers=NO_STORE)


@router.post("/teach/{code}/pace", response_model=None)
async def pace(request: Request, tpl: Tpl, db: DB, klass: Instructing, mode: Short = "free", step: Short = "",
               move: Short = "", view: View = "dashboard") -> Response:
    """Bring everyone to step N (tell them, or move them), bring them and hold them there in one go
    (mode=bring-hold), hold the class at N, or release it."""
    number = int(step) if step.strip().isdigit() else None
    hold = mode == "bring-hold"
    try:
        await classes.set_pace(db, klass, "bring" if hold else mode, number, move == "on",
                               len(outline_of(klass).steps), hold)
    except classes.ClassError as exc:
        return await refused(request, tpl, db, klass, view, exc, {"step": step})
    return back(klass, view)


@router.post("/teach/{code}/idle", response_model=None)
async def idle(request: Request, tpl: Tpl, db: DB, klass: Instructing, minutes: Short = "",
               view: View = "dashboard") -> Response:
    """After how many quiet minutes a learner counts as inactive (and time on task stops counting)."""
    try:
        await classes.set_idle(db, klass, int(minutes) if minutes.strip().isdigit() else 0)
    except classes.ClassError as exc:
        return await refused(request, tpl, db, klass, view, exc, {"idle_minutes": minutes})
    return back(klass, view)


async def drill_key(db: DB, klass: Classroom, drill: str) -> str:
    keys = {d.key for d in (await projection.build_projection(db, klass)).drills}
    if drill not in keys:
        raise HTTPException(status_code=404, detail="This lesson has no such drill.")
    return drill


@router.post("/teach/{code}/reveal")
async def reveal(db: DB, klass: Instructing, drill: Annotated[str, Form(max_length=80)] = "", shown: Short = "1",
                 view: View = "dashboard") -> Response:
    """Show (or hide again) one drill's answer distribution on the projector."""
    await classes.reveal(db, klass, await drill_key(db, klass, drill), shown == "1")
    return back(klass, view)


@router.post("/teach/{code}/answer")
async def show_answer(db: DB, klass: Instructing, lessons: Lessons, drill: Annotated[str, Form(max_length=80)] = "",
                      seed: Annotated[str, Form(max_length=20)] = "", shown: Short = "1",
                      view: View = "projector") -> Response:
    """Show the right answer and worked solution of the question on the projector (its seed), or hide them."""
    key = await drill_key(db, klass, drill)
    if shown != "1":
        await classes.show_answer(db, klass, key, None)
        return back(klass, view)
    chosen = int(seed) if seed.isdigit() and int(seed) < 2**63 else await latest_seed(db, klass, key)
    if chosen is None:
        raise HTTPException(status_code=409, detail="Nobody has answered this drill yet: there is no question on "
                            "the screen to answer.")
    await classes.show_answer(db, klass, key, chosen)
    return back(klass, view)


async def latest_seed(db: DB, klass: Classroom, key: str) -> int | None:
    """The question the projector shows for a drill before an answer is pinned: the latest one answered."""
    rows = (await answers_of(db, klass, [key], limit=1)).get(key, [])
    return rows[0][0] if rows else None


@router.post("/teach/{code}/message", response_model=None)
async def message(request: Request, tpl: Tpl, db: DB, klass: Instructing,
                  text: Annotated[str, Form(max_length=2000)] = "", action: Short = "send",
                  view: View = "dashboard") -> Response:
    """A message on every learner's page and the projector until cleared."""
    try:
        await classes.set_message(db, klass, None if action == "clear" else text)
    except classes.ClassError as exc:
        return await refused(request, tpl, db, klass, view, exc, {"message": text[:300]})
    return back(klass, view)


@router.post("/teach/{code}/timer", response_model=None)
async def timer(request: Request, tpl: Tpl, db: DB, klass: Instructing,
                drill: Annotated[str, Form(max_length=80)] = "", minutes: Short = "", action: Short = "start",
                view: View = "dashboard") -> Response:
    """A countdown for one drill on the projector, or stop it."""
    try:
        if action == "stop":
            await classes.set_timer(db, klass, "", None)
        else:
            await classes.set_timer(db, klass, await drill_key(db, klass, drill), minutes)
    except classes.ClassError as exc:
        return await refused(request, tpl, db, klass, view, exc, {"timer_minutes": minutes, "timer_drill": drill})
    return back(klass, view)


@router.post("/teach/{code}/flags")
async def mark_flag(db: DB, klass: Instructing, member: Annotated[int, Form(ge=1, le=2**31 - 1)],
                    flag: Annotated[str, Form(max_length=100)] = "", outcome: Short = "dismissed",
                    view: View = "dashboard") -> Response:
    """Mark one learner's flag helped or dismissed: it stays hidden until newer evidence."""
    found = await member_of(db, klass, member)
    try:
        await roster.mark_flag(db, found, flag, outcome)
    except classes.ClassError as exc:
        raise HTTPException(status_code=exc.status, detail=exc.message) from exc
    return back(klass, view, "#stuck-title")


@router.post("/teach/{code}/close")
async def close(db: DB, klass: Instructing, view: View = "dashboard") -> Response:
    """Close the class: learners keep reading; nothing more is recorded for it (reopen undoes it)."""
    await classes.close(db, klass)
    return back(klass, view)


@router.post("/teach/{code}/reopen", response_model=None)
async def reopen(request: Request, tpl: Tpl, db: DB, klass: Instructing, ends: Short = "",
                 view: View = "dashboard") -> Response:
    """Open a closed or ended class again, with a new end time (or none)."""
    try:
        await classes.reopen(db, klass, end_hours(ends))
    except classes.ClassError as exc:
        return await refused(request, tpl, db, klass, view, exc, {"ends": ends})
    return back(klass, view)


@router.post("/teach/{code}/copy", response_model=None)
async def copy(request: Request, tpl: Tpl, db: DB, klass: Instructing, lessons: Lessons, settings: Config,
               owner: Owner, title: Annotated[str, Form(max_length=500)] = "", copy_ends: Short = "") -> Response:
    """A new class for the next section: the same lesson, settings and pacing, no learners; in this browser's list."""
    try:
        hours = end_hours(copy_ends)
        classes.clean_title(title)
        owner, owner_key = (owner, "") if owner is not None else await owners.new_instructor(db)
        new, key = await classes.create_class(db, title, _outline(klass, lessons), hours, owner_id=owner.id,
                                              like=klass)
    except classes.ClassError as exc:
        return await refused(request, tpl, db, klass, "dashboard", exc, {"copy_title": title, "copy_ends": copy_ends},
                             panel="copy")
    response = keep_key(request, RedirectResponse(f"/teach/{new.code}/created", status_code=303), new, key, settings)
    return keep_owner(request, response, owner_key, settings) if owner_key else response


def _outline(klass: Classroom, lessons: list[Lesson]) -> Outline:
    """The lesson as it is now (a fix since the first section applies), or as the class kept it if it is gone."""
    lesson = next((le for le in lessons if le.slug == klass.lesson), None)
    return outline_for(lesson) if lesson is not None else outline_of(klass)


@router.post("/teach/{code}/delete", response_model=None)
async def delete(request: Request, tpl: Tpl, db: DB, klass: Instructing,
                 confirm: Annotated[str, Form(max_length=20)] = "") -> Response:
    """Delete the class and its learners' class data, once the instructor typed the code to confirm."""
    if classes.normalise_code(confirm) != klass.code:
        exc = classes.ClassError("confirm", f"Type the class code {klass.code} to confirm deleting it; nothing "
                                 "was deleted.")
        return await refused(request, tpl, db, klass, "dashboard", exc, {"confirm": confirm}, panel="delete")
    removed = await classes.delete_class(db, klass)
    page = DeletedPage(code=klass.code, title=klass.title, removed=removed)
    response = render(tpl, request, "classroom/deleted.html", page, headers=NO_STORE)
    response.delete_cookie(KEY_COOKIE, path=f"/teach/{klass.code}")
    return response


# --- the roster --------------------------------------------------------------------------------------------


async def learner_refused(request: Request, tpl: Tpl, db: DB, klass: Classroom, member_id: int,
                          exc: classes.ClassError, values: dict[str, str]) -> HTMLResponse:
    member = await member_of(db, klass, member_id)
    page = await learner_page(db, klass, member, resume_secret(request), base_url(request),
                              errors={exc.field: exc.message}, values=values)
    return render(tpl, request, "classroom/learner.html", page, status=exc.status, headers=NO_STORE)


def to_learner(klass: Classroom, member_id: int) -> RedirectResponse:
    return RedirectResponse(f"/teach/{klass.code}/learners/{member_id}", status_code=303)


@router.post("/teach/{code}/learners/{member_id}/rename", response_model=None)
async def rename(request: Request, member_id: int, tpl: Tpl, db: DB, klass: Instructing,
                 name: Annotated[str, Form(max_length=500)] = "") -> Response:
    """Another display name, on the board, the learner's banner and the exports."""
    member = await member_of(db, klass, member_id)
    try:
        await roster.rename(db, klass, member, name)
    except classes.ClassError as exc:
        return await learner_refused(request, tpl, db, klass, member_id, exc, {"name": name[:100]})
    return to_learner(klass, member_id)


@router.post("/teach/{code}/learners/{member_id}/merge", response_model=None)
async def merge(request: Request, member_id: int, tpl: Tpl, db: DB, klass: Instructing, into: Short = "",
                keep: Short = "other") -> Response:
    """This row and another are one person: this row's steps, time and answers go to the other, which stays."""
    gone = await member_of(db, klass, member_id)
    try:
        if not into.isdigit():
            raise classes.ClassError("into", "Choose the learner this row is the same person as.")
        kept = await member_of(db, klass, int(into)) if int(into) != member_id else gone
        await roster.merge(db, klass, gone, kept, gone.name if keep == "this" else kept.name)
    except classes.ClassError as exc:
        return await learner_refused(request, tpl, db, klass, member_id, exc, {"into": into})
    return to_learner(klass, kept.id)


@router.post("/teach/{code}/learners/{member_id}/remove", response_model=None)
async def remove(request: Request, member_id: int, tpl: Tpl, db: DB, klass: Instructing, confirm: Short = ""
                 ) -> Response:
    """Take a learner out of the class, with their name, time and class answers, after a tick to confirm."""
    member = await member_of(db, klass, member_id)
    if confirm != "on":
        exc = classes.ClassError("confirm", f"Tick the box to confirm removing {member.name}; nothing was removed.")
        return await learner_refused(request, tpl, db, klass, member_id, exc, {})
    await roster.remove(db, klass, member)
    return back(klass, "dashboard")


@router.post("/teach/{code}/learners/{member_id}/resume")
async def new_resume(member_id: int, db: DB, klass: Instructing) -> Response:
    """A new resume code for the learner: the old one stops working."""
    await roster.replace_resume(db, await member_of(db, klass, member_id))
    return to_learner(klass, member_id)
