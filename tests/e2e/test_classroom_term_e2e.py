"""A class run all term, in real Chromium against a real server (issue 28): a learner back on a new device, the
roster, pacing that ends, a rushing flag dismissed, the room's message and timer, exports and the report, the
instructor's own list on another device, reopen and copy, and neighbours' different questions."""

from __future__ import annotations

import csv
import io
import re
import time
from pathlib import Path

import pytest
from playwright.sync_api import Browser, BrowserContext, expect

from app.drills.registry import all_drills
from app.web.security import LEARNER_COOKIE, Signer
from tests.e2e.conftest import Server, start_server, stop_server, watch
from tests.e2e.test_classroom_e2e import LESSON, host_class, join_class
from tests.e2e.test_flagship_a_e2e import commit_guess

pytestmark = pytest.mark.e2e
SOON = 4_000  # a learner's page holds a banner poll the server answers within a second of a change
LIVE = 5_000  # the dashboard and projector poll every 2 s


def contexts(browser: Browser, n: int) -> list[BrowserContext]:
    return [browser.new_context(viewport={"width": 1280, "height": 900}) for _ in range(n)]


def test_a_learner_on_a_new_device_comes_back_and_the_instructor_renames_and_removes(
        browser: Browser, server: Server) -> None:
    teacher_ctx, laptop_ctx, phone_ctx, eve_ctx = contexts(browser, 4)
    try:
        t = watch(teacher_ctx.new_page(), server.url)
        code = host_class(t.page, server.url, "Resume class")
        laptop = watch(laptop_ctx.new_page(), server.url).page
        join_class(laptop, server.url, code, "Cy")
        commit_guess(laptop.locator('[data-widget="plan"]'), "30")  # step 1 is done once its guess is in
        laptop.get_by_role("button", name=re.compile("Done, next")).click()
        expect(laptop).to_have_url(re.compile(LESSON + "/2$"))
        laptop.goto(f"{server.url}/class/{code}")
        resume_code = laptop.locator("[data-resume-code]").inner_text()
        link = laptop.locator("[data-resume-link]").get_attribute("href")
        assert link and resume_code in link

        phone = watch(phone_ctx.new_page(), server.url).page  # the laptop is gone; Cy tries the phone
        phone.goto(f"{server.url}/join/{code}")
        expect(phone.get_by_role("heading", name="Join Resume class")).to_be_visible()
        phone.get_by_label("Your name").fill("cy")
        phone.get_by_role("button", name="Join").click()
        expect(phone.locator("#f-name-error")).to_contain_text("type your resume code below")
        phone.get_by_label("Your resume code").fill(resume_code.lower())
        phone.get_by_role("button", name="Join").click()
        expect(phone).to_have_url(re.compile(LESSON + "/2$"))  # where Cy was, as Cy
        expect(phone.locator("#class-banner [data-name]")).to_have_text("Cy")

        eve = watch(eve_ctx.new_page(), server.url).page
        join_class(eve, server.url, code, "Eve")
        dash = t.page
        rows = dash.locator("tr[data-learner]")
        expect(rows).to_have_count(2, timeout=LIVE)  # Cy once, and Eve: no ghost row
        dash.get_by_role("link", name="Cy", exact=True).click()
        dash.get_by_label("New display name").fill("Cy Rivera")
        dash.get_by_role("button", name="Rename").click()
        expect(dash.get_by_role("heading", name="Cy Rivera", level=1)).to_be_visible()
        expect(phone.locator("#class-banner [data-name]")).to_have_text("Cy Rivera", timeout=SOON)  # without a reload
        dash.goto(f"{server.url}/teach/{code}")
        dash.get_by_role("link", name="Eve", exact=True).click()
        dash.get_by_role("button", name="Remove").click()
        expect(dash.locator("#f-confirm-error")).to_contain_text("Tick the box")
        dash.get_by_label(re.compile("Remove Eve")).check()
        dash.get_by_role("button", name="Remove").click()
        expect(dash.locator("tr[data-learner]")).to_have_count(1)
        expect(eve.locator("#class-banner")).to_have_count(0, timeout=SOON)  # her banner goes
        assert t.off_server() == []  # (its console holds the 422 of the unticked removal, as it should)
    finally:
        for c in (teacher_ctx, laptop_ctx, phone_ctx, eve_ctx):
            c.close()


def test_bring_and_hold_moves_the_class_and_ends_for_each_learner_once_they_reach_the_step(
        browser: Browser, server: Server) -> None:
    teacher_ctx, ada_ctx, bo_ctx, dee_ctx = contexts(browser, 4)
    try:
        t = watch(teacher_ctx.new_page(), server.url).page
        code = host_class(t, server.url, "Pacing class")
        ada, bo = ada_ctx.new_page(), bo_ctx.new_page()
        join_class(ada, server.url, code, "Ada")
        join_class(bo, server.url, code, "Bo")
        bo.goto(server.url + LESSON + "/5")
        t.get_by_label("Step", exact=True).select_option("3")
        t.get_by_label(re.compile("Move learners there")).check()
        clicked = time.perf_counter()
        t.get_by_role("button", name="Bring everyone here and hold").click()
        expect(ada).to_have_url(re.compile(LESSON + "/3$"), timeout=SOON)
        expect(bo).to_have_url(re.compile(LESSON + "/3$"), timeout=SOON)
        moved = time.perf_counter() - clicked
        expect(t.locator(".pace-status")).to_contain_text("2 of 2 reached it", timeout=LIVE)
        ada.goto(server.url + LESSON + "/2")  # she reached step 3: the bring is over for her, the hold is not
        expect(ada.locator("#class-banner")).not_to_contain_text("asks everyone to go")
        ada.goto(server.url + LESSON + "/4")
        expect(ada.get_by_role("heading", name="Not yet: the class is held at step 3")).to_be_visible()
        t.get_by_role("button", name="Release").click()
        expect(ada.get_by_role("heading", name="Not yet: the class is held at step 3")).to_be_hidden(timeout=SOON)
        ada.goto(server.url + LESSON + "/6")

        t.get_by_label("Step", exact=True).select_option("4")
        t.get_by_label(re.compile("Move learners there")).uncheck()
        t.get_by_role("button", name="Bring everyone to this step").click()
        expect(ada.locator("#class-banner [data-bring='4']")).to_be_visible(timeout=SOON)
        dee = dee_ctx.new_page()  # a late joiner lands where the class is going, with no hole behind her
        dee.goto(f"{server.url}/join/{code}")
        dee.get_by_label("Your name").fill("Dee")
        dee.get_by_role("button", name="Join").click()
        expect(dee).to_have_url(re.compile(LESSON + "/4$"))
        t.goto(f"{server.url}/teach/{code}")
        dee_row = t.locator("tr[data-learner]", has_text="Dee")
        expect(dee_row.locator("td.c-passed")).to_have_count(3)
        assert moved < 4.0, moved
    finally:
        for c in (teacher_ctx, ada_ctx, bo_ctx, dee_ctx):
            c.close()


def test_a_learner_rushing_through_steps_is_flagged_and_the_instructor_dismisses_it(
        browser: Browser, server: Server) -> None:
    teacher_ctx, ada_ctx = contexts(browser, 2)
    try:
        t = watch(teacher_ctx.new_page(), server.url).page
        code = host_class(t, server.url, "Rushing class")
        ada = ada_ctx.new_page()
        join_class(ada, server.url, code, "Ada")
        ada.goto(f"{server.url}{LESSON}/8")  # three plain steps: no guess or drill stands between Done and done
        for n in (8, 9, 10):
            ada.get_by_role("button", name=re.compile("Done, next")).click()
            expect(ada).to_have_url(re.compile(LESSON + f"/{n + 1}$"))
        flag = t.locator("[data-flag='rushing']")
        expect(flag).to_contain_text("clicked Done on 3 steps within a second of opening each", timeout=LIVE)
        flag.get_by_role("button", name=re.compile("^Dismiss")).click()
        expect(t.locator("[data-flag='rushing']")).to_have_count(0)
        expect(t.locator("[data-count='rushing']")).to_have_text("0")
    finally:
        teacher_ctx.close()
        ada_ctx.close()


def test_a_message_and_a_drill_timer_reach_the_room(browser: Browser, server: Server) -> None:
    teacher_ctx, ada_ctx = contexts(browser, 2)
    try:
        t = watch(teacher_ctx.new_page(), server.url).page
        code = host_class(t, server.url, "Message class")
        ada = ada_ctx.new_page()
        join_class(ada, server.url, code, "Ada")
        cockpit = teacher_ctx.new_page()
        cockpit.set_viewport_size({"width": 390, "height": 844})
        cockpit.goto(f"{server.url}/teach/{code}/cockpit")
        cockpit.get_by_label(re.compile("On every learner's page")).fill("Five minutes, then we discuss step 7")
        cockpit.get_by_role("button", name="Send to the room").click()
        expect(ada.locator("[data-room-message]")).to_contain_text("Five minutes, then we discuss step 7",
                                                                   timeout=SOON)
        room = teacher_ctx.new_page()
        room.set_viewport_size({"width": 1920, "height": 1080})
        room.goto(f"{server.url}/teach/{code}/projector")
        expect(room.locator("[data-room-message]")).to_have_text("Five minutes, then we discuss step 7")
        cockpit.get_by_label(re.compile("Minutes \\(1 to 60\\)")).fill("0")
        cockpit.get_by_role("button", name="Start the timer").click()
        expect(cockpit.locator("#f-timer_minutes-error")).to_contain_text("from 1 to 60")
        cockpit.get_by_label(re.compile("Minutes \\(1 to 60\\)")).fill("2")
        cockpit.get_by_role("button", name="Start the timer").click()
        timer = room.locator("p.proj-timer")
        expect(timer).to_contain_text(re.compile(r"Step 7: 1 min 5\d s left"), timeout=LIVE)
        first = timer.inner_text()
        room.wait_for_timeout(1_500)
        assert timer.inner_text() != first  # it counts down by itself
        cockpit.get_by_role("button", name="Clear the message").click()
        expect(ada.locator("[data-room-message]")).to_have_count(0, timeout=SOON)
    finally:
        teacher_ctx.close()
        ada_ctx.close()


def test_the_exports_and_the_report_download_from_the_dashboard(browser: Browser, server: Server,
                                                                 tmp_path: Path) -> None:
    teacher_ctx, ada_ctx = contexts(browser, 2)
    try:
        t = watch(teacher_ctx.new_page(), server.url).page
        code = host_class(t, server.url, "Export class")
        ada = ada_ctx.new_page()
        join_class(ada, server.url, code, "Ada")
        ada.goto(server.url + LESSON + "/7")
        drill = ada.locator('[data-drill="bytes-per-parameter"]')
        for field in drill.locator("input[type=text]").all():
            field.fill("2")
        drill.get_by_role("button", name="Check answer").click()
        expect(drill.locator(".drill-feedback")).to_be_visible()
        t.reload()
        with t.expect_download() as got:
            t.get_by_role("link", name="Class report (Markdown)").click()
        report = Path(got.value.path()).read_text()
        assert "# Export class: class report" in report and "### Step 7:" in report and "Ada" not in report
        with t.expect_download() as got:
            t.get_by_role("link", name="Attempts (CSV)").click()
        rows = list(csv.DictReader(io.StringIO(Path(got.value.path()).read_text())))
        assert {r["question"] for r in rows} == {"1"} and all(r["expected"] for r in rows)
        assert {r["unit"] for r in rows} >= {"GB"}
        with t.expect_download() as got:
            t.get_by_role("link", name="Learners (CSV)").click()
        learner = next(csv.DictReader(io.StringIO(Path(got.value.path()).read_text())))
        assert learner["bytes-per-parameter@7_first_try_pct"] == "0"
        assert learner["bytes-per-parameter@7_mastered"] == "no"
    finally:
        teacher_ctx.close()
        ada_ctx.close()


def test_the_instructor_opens_their_classes_on_another_device_reopens_one_and_copies_it(
        browser: Browser, server: Server) -> None:
    desk_ctx, laptop_ctx = contexts(browser, 2)
    try:
        desk = watch(desk_ctx.new_page(), server.url).page
        code = host_class(desk, server.url, "Monday section")
        desk.get_by_role("button", name="Close the class").click()
        expect(desk.get_by_text("closed: nobody can join")).to_be_visible()
        desk.get_by_label("New end time").select_option("2")
        desk.get_by_role("button", name="Reopen").click()
        expect(desk.get_by_text("learners join at")).to_be_visible()
        desk.get_by_text("Copy for the next section").click()
        desk.get_by_label("Title of the new class").fill("Tuesday section")
        desk.get_by_role("button", name="Copy the class").click()
        expect(desk.get_by_role("heading", name="Tuesday section is ready")).to_be_visible()
        desk.goto(server.url + "/teach")
        expect(desk.locator("[data-class]")).to_have_count(2)
        desk.get_by_role("button", name="Show my instructor link").click()
        link = desk.locator("[data-link='instructor']").get_attribute("href")
        assert link

        laptop = watch(laptop_ctx.new_page(), server.url).page
        laptop.goto(link)
        laptop.get_by_role("button", name="Open them here").click()
        expect(laptop.locator("[data-class]")).to_have_count(2)
        laptop.get_by_role("link", name="Monday section").click()
        expect(laptop).to_have_url(re.compile(rf"/teach/{code}$"))
        expect(laptop.get_by_role("heading", name="Monday section")).to_be_visible()
    finally:
        desk_ctx.close()
        laptop_ctx.close()


def _small_lesson(root: Path) -> Path:
    """A lesson whose declared drill has 4 questions: 2 models × 2 optimizers' bytes."""
    lesson = root / "small-drill"
    lesson.mkdir(parents=True)
    (lesson / "lesson.yaml").write_text("slug: small-drill\ntitle: Small drill\nsummary: Four questions.\nminutes: 2\n"
                                        "sections:\n  - title: Only\n    steps: [01-drill.md]\n")
    (lesson / "01-drill.md").write_text('''---
title: "Drill: weights of a model"
summary: Weights take parameters times bytes.
minutes: 2
---

How big are the weights?

```drill weights
kind: numeric
title: Weights of a model
parameters:
  llm:
    choices: [llama-3.1-8b, mistral-7b]
  bytes:
    choices: [2, 4]
prompt: "{{ model(llm).name }} has {{ model(llm).parameters | num }} parameters, {{ bytes }} bytes each."
parts:
  - id: size
    prompt: Size of the weights
    unit: GB
    tolerance: 0.02
    answer: model(llm).parameters * bytes
solution:
  - "{{ model(llm).parameters | num }} parameters × {{ bytes }} bytes = {{ (model(llm).parameters * bytes) | gb }}."
hints:
  - Multiply.
```
''')
    return root


def test_neighbours_in_a_class_get_different_questions_from_a_drill_with_four(browser: Browser,
                                                                             tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    srv = start_server(data, GPU_CLASSROOM_LESSONS_DIRS=str(_small_lesson(tmp_path / "mine")))
    ctxs = contexts(browser, 4)
    try:
        t = ctxs[0].new_page()
        t.goto(srv.url + "/teach")
        t.get_by_label("Class title").fill("Small")
        t.get_by_label("Lesson").select_option("small-drill")
        t.get_by_role("button", name="Create the class").click()
        code = t.locator("[data-code]").first.get_attribute("data-code")
        prompts = []
        for n, ctx in enumerate(ctxs[1:]):
            page = ctx.new_page()
            page.goto(f"{srv.url}/join/{code}")
            page.get_by_label("Your name").fill(f"Seat {n}")
            page.get_by_role("button", name="Join").click()
            expect(page).to_have_url(re.compile("/lessons/small-drill/1$"))
            prompts.append(page.locator(".drill-prompt").first.inner_text())
        assert prompts[0] != prompts[1] and prompts[1] != prompts[2], prompts  # neighbours: never the same
    finally:
        for c in ctxs:
            c.close()
        stop_server(srv)


def test_a_learner_who_types_the_size_the_question_shows_is_graded_right(browser: Browser, server: Server) -> None:
    """bytes-per-parameter writes a custom size with all its digits: 16 bytes × the size shown is the total."""
    drill = all_drills()["bytes-per-parameter"]
    learner = next(f"00000000-0000-4000-8000-{n:012d}" for n in range(10_000)
                   if (q := drill.question(_seed(f"00000000-0000-4000-8000-{n:012d}"))).parameters["model"] == "custom"
                   and q.parameters["optimizer"] == "adam")
    teacher_ctx, ctx = contexts(browser, 2)
    try:
        t = teacher_ctx.new_page()
        code = host_class(t, server.url, "Sizes class")
        ctx.add_cookies([{"name": LEARNER_COOKIE, "value": Signer("e2e-secret").cookie.dumps(learner),
                          "url": server.url}])
        page = ctx.new_page()
        join_class(page, server.url, code, "Ada")
        page.goto(server.url + LESSON + "/7")
        box = page.locator('[data-drill="bytes-per-parameter"]')
        shown = re.search(r"a ([\d.,]+) B-parameter model", box.inner_text())
        assert shown, box.inner_text()
        size = float(shown.group(1).replace(",", "")) * 1e9
        box.get_by_label("Bytes of training state per parameter").fill("16")
        box.get_by_label(re.compile("Total training state")).fill(f"{size * 16 / 1e9:.3f} GB")
        box.get_by_label(re.compile("Fewest 80 GB GPUs")).fill(str(-(-size * 16 // 80e9)).removesuffix(".0"))
        box.get_by_role("button", name="Check answer").click()
        expect(box.locator(".drill-feedback")).to_contain_text("All right")
    finally:
        teacher_ctx.close()
        ctx.close()


def _seed(learner: str) -> int:
    from app.drills.seeds import learner_seed

    return learner_seed(learner, "bytes-per-parameter", 0)


def test_the_new_class_pages_are_axe_clean_in_light_and_dark(browser: Browser, server: Server) -> None:
    from tests.e2e.test_classroom_e2e import _axe_with

    teacher_ctx, ada_ctx = contexts(browser, 2)
    try:
        t = teacher_ctx.new_page()
        code = host_class(t, server.url, "Axe term")
        ada = ada_ctx.new_page()
        join_class(ada, server.url, code, "Ada")
        t.goto(f"{server.url}/teach/{code}")
        t.get_by_role("link", name="Ada", exact=True).click()
        learner_page = t.url
        t.goto(server.url + "/teach")
        t.get_by_role("button", name="Show my instructor link").click()
        link = t.locator("[data-link='instructor']").get_attribute("href")
        assert link
        pages = [(teacher_ctx, learner_page), (teacher_ctx, server.url + "/teach"), (teacher_ctx, link),
                 (ada_ctx, f"{server.url}/class/{code}"), (ada_ctx, f"{server.url}/join/{code}?name=Ada&resume=X")]
        for ctx, url in pages:
            for scheme in ("light", "dark"):
                assert _axe_with(browser, ctx.cookies(), url, 1280, scheme) == [], (url, scheme)
    finally:
        teacher_ctx.close()
        ada_ctx.close()


def test_class_times_show_in_the_instructors_own_time_zone(browser: Browser, server: Server) -> None:
    """The server writes times in UTC; an instructor in Kolkata (UTC+5:30, so even the minutes differ) reads their
    class's start on /teach in their own clock, with the UTC instant kept in the title (issue 28, item 15)."""
    from datetime import datetime
    from zoneinfo import ZoneInfo

    ctx = browser.new_context(viewport={"width": 1280, "height": 900}, timezone_id="Asia/Kolkata")
    try:
        page = watch(ctx.new_page(), server.url).page
        code = host_class(page, server.url, "Evening section")
        page.goto(server.url + "/teach")
        started = page.locator(f'li[data-class="{code}"] time[data-local]')
        at = datetime.fromisoformat(started.get_attribute("datetime") or "")
        local = at.astimezone(ZoneInfo("Asia/Kolkata"))
        # the day and month in the browser's own order ("Dec 5" or "5 Dec"), then the local clock
        expect(started).to_have_text(re.compile(rf"^(\w+ {local.day}|{local.day} \w+), {local.strftime('%H:%M')}$"))
        assert "UTC" not in started.inner_text() and "India" in (started.get_attribute("title") or "")
    finally:
        ctx.close()
