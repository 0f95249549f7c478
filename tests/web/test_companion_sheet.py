"""The workload sheet and the profiling data over HTTP: autosave, the to-measure rule, exports, attachments."""

from __future__ import annotations

import html
import json
import re
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from app.classroom import sheets
from app.companion import profiling
from app.companion.profiling import ProfileReport
from app.web.templating import md as markdown_text

HX = {"HX-Request": "true"}
SHEET = "/companion/sheet"


def csrf(client: TestClient) -> str:
    match = re.search(r'name="csrf_token" value="([^"]+)"', client.get(SHEET).text)
    assert match
    return match.group(1)


def save(client: TestClient, htmx: bool = True, **fields: str) -> tuple[int, str]:
    r = client.post(SHEET, data={"csrf_token": csrf(client), **fields}, headers=HX if htmx else {},
                    follow_redirects=False)
    return r.status_code, r.text


def report(seconds: float = 0.02, source: str = "terminal", checksum: float = 43_822_457.110082) -> dict[str, object]:
    phase = {"seconds": [seconds, seconds * 1.5, seconds * 1.2]}
    return {
        "source": source, "size_bytes": 1_000_000, "values": 100_000, "repeat": 3,
        "environment": {"runtime": "CPython 3.11.7", "platform": "Linux", "processor": "AMD EPYC", "cores": 2},
        "phases": {"read": phase, "parse": phase, "arithmetic": phase}, "checksum": checksum,
    }


def test_what_the_learner_types_is_saved_and_comes_back_on_reload(client: TestClient) -> None:
    code, body = save(client, input="Photos on the team share", input_0_label="photos", input_0_value="1,281,167",
                      input_0_status="known")
    assert code == 200 and "All changes saved." in body
    page = client.get(SHEET).text
    assert re.search(r'<textarea id="sheet-input"[^>]*>Photos on the team share</textarea>', page)
    assert 'name="input_0_label" maxlength="200" value="photos"' in page
    assert re.search(r'name="input_0_status" value="known" checked', page)
    assert re.search(r'name="input_1_status" value="to_measure" checked', page)  # a blank row for the next number


def test_a_number_to_measure_needs_a_note_and_nothing_saved_is_lost(client: TestClient) -> None:
    save(client, input="Photos on the team share")
    code, body = save(client, input="photos", input_0_label="photos", input_0_value="1,281,167",
                      preparation="decode and resize")
    assert code == 422
    assert re.search(
        r'id="sheet-input-error" hx-swap-oob="true">“photos” is marked to measure but holds a figure', body
    )
    assert "Not saved: 1 field needs a change" in body
    page = client.get(SHEET).text
    assert ">Photos on the team share</textarea>" in page  # the refused edit did not replace what was saved
    assert ">decode and resize</textarea>" in page  # the valid field of the same request was saved


def test_numbers_under_one_heading_are_marked_one_by_one(client: TestClient) -> None:
    code, _ = save(client, input="photos on the share",
                   input_0_label="photos", input_0_value="1,281,167", input_0_status="known",
                   input_1_label="total size", input_1_value="140 GB", input_1_note="du -sh on the share, 3 May",
                   input_2_label="images decoded a second", input_2_value="")
    assert code == 200
    page = client.get(SHEET).text
    assert re.search(r'name="input_0_status" value="known" checked', page)
    assert re.search(r'name="input_1_status" value="to_measure" checked', page)
    assert 'value="du -sh on the share, 3 May"' in page
    assert re.search(r'name="input_2_status" value="to_measure" checked', page)


def test_without_javascript_a_refused_field_keeps_what_was_typed_beside_its_message(client: TestClient) -> None:
    code, body = save(client, htmx=False, input_0_label="size", input_0_value="about 140 GB",
                      next="/lessons/understanding-the-work/5")
    assert code == 422 and "<html" in body
    assert 'value="about 140 GB"' in body and 'id="sheet-input-error">“size” is marked to measure' in body
    code, _ = save(client, htmx=False, input="photos", next="/lessons/understanding-the-work/5")
    assert code == 303


def test_a_save_without_javascript_returns_to_the_step_and_never_elsewhere(client: TestClient) -> None:
    token = csrf(client)
    ok = client.post(SHEET, data={"csrf_token": token, "input": "x", "next": "/lessons/understanding-the-work/5"},
                     follow_redirects=False)
    assert ok.headers["location"] == "/lessons/understanding-the-work/5#sheet"
    away = client.post(SHEET, data={"csrf_token": token, "input": "y", "next": "https://evil.example/"},
                       follow_redirects=False)
    assert away.headers["location"] == "/companion/sheet#sheet"


def test_a_save_without_the_csrf_token_is_refused_and_changes_nothing(client: TestClient) -> None:
    save(client, input="kept")
    r = client.post(SHEET, data={"input": "forged"}, headers=HX)
    assert r.status_code == 403
    assert ">kept</textarea>" in client.get(SHEET).text


def test_an_unknown_status_and_an_overlong_field_are_refused(client: TestClient) -> None:
    code, body = save(client, input_0_value="9", input_0_status="probably")
    assert code == 422 and "Choose known or to measure." in body
    code, body = save(client, dependencies="x" * 2001)
    assert code == 422 and "Keep it under 2,000 characters" in body


def test_learner_text_is_escaped(client: TestClient) -> None:
    assert save(client, input="<script>alert('x')</script>")[0] == 200
    page = client.get(SHEET).text
    assert "<script>alert('x')</script>" not in page and "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;" in page


def test_each_learner_sees_only_their_own_sheet(client: TestClient) -> None:
    save(client, input="mine")
    client.cookies.clear()
    assert ">mine</textarea>" not in client.get(SHEET).text


def test_markdown_export_keeps_empty_fields_empty_and_says_how_numbers_were_measured(client: TestClient) -> None:
    save(client, input="photos on the share", input_0_label="photos", input_0_value="1,281,167",
         input_0_note="counted on the share", computation="a classifier", computation_0_label="parameters",
         computation_0_value="25.6 M", computation_0_status="known")
    r = client.get("/companion/sheet.md")
    assert r.headers["content-type"].startswith("text/markdown") and "attachment" in r.headers["content-disposition"]
    md = r.text
    assert ("## Input source and size\n\nphotos on the share\n\n"
            "- photos: 1,281,167 (to measure); measured: counted on the share") in md
    assert "- parameters: 25.6 M (known)" in md  # no stray backslash before a number (U2)
    assert "## Preparation\n\n_(empty)_" in md


def test_json_export_has_the_same_fields(client: TestClient) -> None:
    save(client, outputs="checkpoints", outputs_0_label="checkpoint size", outputs_0_value="1 GB",
         outputs_0_status="known")
    data = client.get("/companion/sheet.json").json()
    assert [f["key"] for f in data["fields"]] == ["input", "preparation", "computation", "outputs", "dependencies"]
    outputs = next(f for f in data["fields"] if f["key"] == "outputs")
    assert outputs["value"] == "checkpoints"
    assert outputs["numbers"] == [{"label": "checkpoint size", "value": "1 GB", "status": "known", "note": ""}]
    assert data["fields"][0]["value"] == "" and data["fields"][0]["numbers"] == []


def test_pasted_terminal_json_is_attached_and_exported(client: TestClient) -> None:
    r = client.post("/companion/sheet/profiles", data={"csrf_token": csrf(client), "source": "terminal",
                    "report": json.dumps(report())}, headers=HX)
    assert r.status_code == 200 and 'data-source="terminal"' in r.text
    assert re.search(r'<tr data-phase="parse"><th scope="row">parse</th><td class="num">24 ms</td>', r.text)
    md = client.get("/companion/sheet.md").text
    assert "### In a terminal: CPython 3.11.7, 2 cores" in md and "| parse | 24 ms |" in md


@pytest.mark.parametrize(
    "text, message",
    [
        ("", "Paste the JSON"),
        ("writing the 64 MB data file: 100 %", "This is not JSON"),
        (json.dumps({"source": "terminal"}), "This is not a whole profiling result: “size_bytes”, “values”, "
                                             "“repeat” and more are missing. Paste everything “gpu-classroom "
                                             "profile --json” printed, from the first { to the last }."),
        (json.dumps({"a": 1}), "This is not a whole profiling result: “source”, “size_bytes”"),
        ("{", "This is not JSON. Paste everything “gpu-classroom profile --json” printed"),
        (json.dumps(report(seconds=-1)), "positive number of seconds"),
    ],
)
def test_pasted_text_that_is_not_a_profile_gets_its_message_beside_the_box(
    client: TestClient, text: str, message: str
) -> None:
    r = client.post("/companion/sheet/profiles", data={"csrf_token": csrf(client), "source": "terminal",
                    "report": text}, headers=HX)
    assert r.status_code == 422
    assert re.search(rf'id="paste-report-error" hx-swap-oob="true">[^<]*{re.escape(html.escape(message, quote=False))}',
                     r.text)
    said = re.search(r'id="paste-report-error" hx-swap-oob="true">([^<]*)<', r.text).group(1)  # type: ignore[union-attr]
    assert "Field required" not in said and "`" not in said  # words a learner can act on, no raw Markdown
    assert "No timings attached yet" in r.text


def test_a_browser_result_whose_sum_is_wrong_is_refused(client: TestClient) -> None:
    assert client.get("/companion/profile-data.csv?size_mb=1").status_code == 200  # caches the file and its sum
    good = report(source="browser")
    expected = sum(profiling.parse(client.get("/companion/profile-data.csv?size_mb=1").content))
    good["checksum"] = expected
    token = csrf(client)
    ok = client.post("/companion/sheet/profiles", data={"csrf_token": token, "source": "browser",
                     "report": json.dumps(good)}, headers=HX)
    assert ok.status_code == 200 and 'id="profile-attach-note" hx-swap-oob="true">Attached to your sheet.' in ok.text
    bad = {**good, "checksum": expected - 1000}
    r = client.post("/companion/sheet/profiles", data={"csrf_token": token, "source": "browser",
                    "report": json.dumps(bad)}, headers=HX)
    assert r.status_code == 422 and "the parse missed or misread some numbers" in r.text


def test_a_measurement_can_be_removed(client: TestClient) -> None:
    token = csrf(client)
    client.post("/companion/sheet/profiles", data={"csrf_token": token, "report": json.dumps(report())}, headers=HX)
    pid = re.search(r'data-profile="([0-9a-f]+)"', client.get(SHEET).text)
    assert pid
    r = client.post(f"/companion/sheet/profiles/{pid.group(1)}/delete", data={"csrf_token": token}, headers=HX)
    assert r.status_code == 200 and "No timings attached yet" in r.text


def test_the_data_file_is_streamed_exactly_and_cached_with_an_etag(client: TestClient) -> None:
    first = client.get("/companion/profile-data.csv?size_mb=1")
    assert first.status_code == 200 and first.headers["content-type"].startswith("text/csv")
    assert first.content == b"".join(profiling.data_chunks(1_000_000))
    assert first.headers["content-length"] == "1000000" and "gzip" not in first.headers.get("content-encoding", "")
    assert first.headers["x-profile-values"] == "100000" and "max-age" in first.headers["cache-control"]
    again = client.get("/companion/profile-data.csv?size_mb=1")  # now from the server's cache
    assert again.content == first.content and again.headers["etag"] == first.headers["etag"]
    cached = client.get("/companion/profile-data.csv?size_mb=1", headers={"If-None-Match": first.headers["etag"]})
    assert cached.status_code == 304 and cached.content == b""


@pytest.mark.parametrize("size", ["0", "65", "lots"])
def test_a_data_file_size_outside_1_to_64_mb_is_refused(client: TestClient, size: str) -> None:
    assert client.get(f"/companion/profile-data.csv?size_mb={size}").status_code == 422


def test_the_sheet_service_merges_only_what_the_form_carries() -> None:
    field = sheets.SheetField(value="photos", numbers=[sheets.SheetNumber(label="photos", value="9", status="known")])
    merged, error = sheets.merge(field, {"input": "photos on the share"}, "input")
    assert error == "" and merged == sheets.SheetField(value="photos on the share", numbers=field.numbers)
    assert sheets.touched({"input_3_note": "x", "csrf_token": "t"}) == ["input"]


def test_a_report_from_the_cli_is_what_the_sheet_accepts(tmp_path: Path) -> None:
    path = tmp_path / "numbers.csv"
    profiling.write_file(path, 100_000)
    produced = profiling.run_profile(path, 2)
    assert (
        ProfileReport.model_validate_json(produced.model_dump_json()).phases.parse.seconds
        == produced.phases.parse.seconds
    )


def test_learner_text_in_the_markdown_export_is_text_not_markup(client: TestClient) -> None:
    """HTML, javascript: links, headings and table breakers typed into the sheet or pasted in a profile arrive in
    sheet.md as the characters typed, escaped, never as Markdown or HTML a viewer would render."""
    hostile = ("<script>alert(1)</script> [click](javascript:alert(1)) <img src=x onerror=alert(1)>\n"
               "# Injected heading\nText\n===\n- item\n1. first\n| a | b |\n![x](http://evil.example/x.png)")
    save(client, input=hostile, input_0_label="<b>bold</b> # h", input_0_value="[v](javascript:v)",
         input_0_note="<b>bold</b> [n](javascript:x)", input_0_status="known", computation="**loud** `code` _it_")
    evil = report()
    evil["environment"] = {"runtime": "CPython <script>x</script>", "platform": "[p](javascript:y)",
                           "processor": "# CPU | pipe", "cores": 2}
    r = client.post("/companion/sheet/profiles", data={"csrf_token": csrf(client), "source": "terminal",
                                                       "report": json.dumps(evil)})
    assert r.status_code in (200, 303), r.text[-500:]
    md = client.get("/companion/sheet.md").text
    assert "<script" not in md and "<img" not in md and "<b>" not in md
    assert "](javascript:" not in md and "](http://evil" not in md
    ours = {"# Workload sheet", "## Measured timings"}
    headings = [line for line in md.splitlines() if line.lstrip().startswith("#")]
    assert all(h in ours or h.startswith(("## ", "### ")) and "Injected" not in h and "CPU" not in h
               for h in headings), headings
    assert "\n===" not in md and "\n- item" not in md and "\n1. first" not in md
    assert "&lt;script&gt;alert\\(1\\)&lt;/script&gt;" in md  # still readable as what was typed


@pytest.mark.parametrize("typed", ["1.2 M", "25.6 M", "3.14", "1,281,167", "2. second", "12) x", "1.", "- item",
                                   "-5", "> quote", "+1", "# h", "a_b_c", "x\n2. y", "[v](javascript:v)", "100%"])
def test_a_value_in_the_markdown_export_reads_as_typed_in_a_markdown_viewer(typed: str) -> None:
    """What a CommonMark viewer shows of an exported value is exactly what the learner typed: no stray
    backslash ("\\1.2 M", U2), no list, heading or link made of it."""
    from markdown_it import MarkdownIt

    rendered = MarkdownIt("commonmark").render(f"- images: {markdown_text(typed)} (known)")
    assert rendered.startswith("<ul>\n<li>") and rendered.count("<li>") == 1, rendered
    shown = html.unescape(re.sub(r"<[^>]*>", "", rendered)).strip()
    assert shown == f"images: {typed} (known)", (typed, rendered)


def test_the_terminal_route_says_where_the_command_comes_from(lessons_client: TestClient) -> None:
    """U4: a learner reading online is told how to get `gpu-classroom` (and that the browser run needs nothing),
    not sent to an unnamed "repository"."""
    page = lessons_client.get("/lessons/understanding-the-work/6").text
    text = " ".join(html.unescape(re.sub(r"<[^>]*>", " ", page)).split())
    assert "ask whoever runs this server" in text and "pipx install ." in text
    assert "GPU Classroom repository" not in text and "browser run above: it needs nothing installed" in text
