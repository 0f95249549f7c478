"""Shareable links: a step's address keeps every widget's changed inputs (`w2.gpus=4`), old `?w=N` links still
work, forms sent without JavaScript keep the other widgets' inputs, and a predict-first widget opened from a link
shows the link's inputs once the guess is in (redirect without JavaScript, htmx reply with it)."""

from __future__ import annotations

import re
from html.parser import HTMLParser
from urllib.parse import parse_qs, urlencode, urlsplit

from fastapi.testclient import TestClient
from httpx import Response

HX = {"HX-Request": "true"}
SLUG = "what-ai-workloads-need"
FLAGSHIP = f"/lessons/{SLUG}"


class Forms(HTMLParser):
    """The forms of a page with the fields a browser would send: inputs (boxes only when checked), the chosen option."""

    def __init__(self, html: str) -> None:
        super().__init__()
        self.forms: list[tuple[dict[str, str], list[tuple[str, str]]]] = []
        self._select: str | None = None
        self._options: list[tuple[str, bool]] = []
        self.feed(html)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = {k: v or "" for k, v in attrs}
        if tag == "form":
            self.forms.append((a, []))
        elif not self.forms:
            return
        elif tag == "input" and a.get("name") and (a.get("type") not in ("checkbox", "radio") or "checked" in a):
            self.forms[-1][1].append((a["name"], a.get("value", "")))
        elif tag == "select":
            self._select, self._options = a.get("name"), []
        elif tag == "option" and self._select:
            self._options.append((a.get("value", ""), "selected" in a))

    def handle_endtag(self, tag: str) -> None:
        if tag == "select" and self._select and self._options:
            chosen = next((v for v, selected in self._options if selected), self._options[0][0])
            self.forms[-1][1].append((self._select, chosen))
            self._select = None

    def find(self, w: str, predict: bool = False) -> list[tuple[str, str]]:
        """The fields of widget w's form: its inputs' form, or its guess form."""
        found = [
            fields
            for attrs, fields in self.forms
            if dict(fields).get("w") == w and ("predict" in attrs.get("class", "").split()) == predict
        ]
        assert len(found) == 1, f"{len(found)} forms for widget {w}"
        return found[0]


def widget(html: str, wid: str) -> str:
    """One widget's section of a page."""
    start = html.index(f'id="{wid}"')
    return html[start : html.index("</section>", start)]


def field_value(html: str, wid: str, name: str) -> str:
    """What a widget's control shows: a text or range input's value, or the chosen option."""
    fields = dict(Forms(widget(html, wid)).find(w=wid[1:]))
    return fields[name]


def guess(client: TestClient, page: str, w: int, text: str, htmx: bool = False) -> Response:
    """Send widget w's guess form as the page has it."""
    fields = Forms(page).find(w=str(w), predict=True)
    data = [*fields, ("guess", text)]
    return client.post(
        "/predictions",
        content=urlencode(data),
        headers={"Content-Type": "application/x-www-form-urlencoded", **(HX if htmx else {})},
        follow_redirects=False,
    )


def open_plan(client: TestClient) -> None:
    """Answer step 1's guess, so its plan shows its inputs."""
    assert guess(client, client.get(f"{FLAGSHIP}/1").text, 2, "20").status_code == 303


# --- One link, every widget -------------------------------------------------------------------------------------


def test_a_link_with_two_widgets_inputs_shows_both_widgets_with_them(lessons_client: TestClient) -> None:
    open_plan(lessons_client)
    r = lessons_client.get(f"{FLAGSHIP}/1?w1.bits=8&w2.model=llama-3.1-70b&w2.gpus=4")
    assert r.status_code == 200
    storage, plan = widget(r.text, "w1"), widget(r.text, "w2")
    assert field_value(r.text, "w1", "bits") == "8" and '<span data-value="gb">8.03 GB</span>' in storage
    assert field_value(r.text, "w2", "model") == "llama-3.1-70b" and field_value(r.text, "w2", "gpus") == "4"
    assert "on each of 4 GPUs" in plan and "Llama 3.1 70B" in plan


def test_an_old_link_still_sets_the_widget_it_names_and_leaves_the_other_alone(lessons_client: TestClient) -> None:
    open_plan(lessons_client)
    page = lessons_client.get(f"{FLAGSHIP}/1?w=2&gpus=4").text
    assert field_value(page, "w2", "gpus") == "4"
    assert field_value(page, "w1", "bits") == "16"
    first = lessons_client.get(f"{FLAGSHIP}/1?bits=8").text  # no w: the first widget, as before
    assert field_value(first, "w1", "bits") == "8" and field_value(first, "w2", "gpus") == "1"


def test_an_update_names_only_its_own_inputs_that_differ_from_the_lesson(lessons_client: TestClient) -> None:
    where = f"w=1&lesson={SLUG}&step=1"
    changed = lessons_client.get(f"/widgets/weight-storage?parameters=8.03e9&bits=8&{where}", headers=HX)
    assert changed.headers["X-Share-Url"] == f"{FLAGSHIP}/1?w1.bits=8#w1"
    back = lessons_client.get(f"/widgets/weight-storage?parameters=8.03e9&bits=16&{where}", headers=HX)
    assert back.headers["X-Share-Url"] == f"{FLAGSHIP}/1#w1"  # all the lesson's own: nothing to carry


def test_invalid_values_in_a_link_are_explained_beside_the_field(lessons_client: TestClient) -> None:
    r = lessons_client.get(f"{FLAGSHIP}/1?w1.bits=3&w1.parameters=lots")
    assert r.status_code == 422 and "Traceback" not in r.text
    assert re.search(r'id="w1-bits-error">Choose one of: 32, 16, 8, 4', r.text)
    assert re.search(r'id="w1-parameters-error">Enter a number', r.text)
    odd = lessons_client.get(f"{FLAGSHIP}/1?w9.bits=8&w1.nothing=1&w1.=2&w0.bits=8&w1.bits.x=8")
    assert odd.status_code == 200 and field_value(odd.text, "w1", "bits") == "16"  # keys that name nothing


def test_without_javascript_a_widgets_form_keeps_the_other_widgets_inputs(lessons_client: TestClient) -> None:
    open_plan(lessons_client)
    page = lessons_client.get(f"{FLAGSHIP}/1?w1.bits=8&w2.gpus=4").text
    fields = Forms(widget(page, "w2")).find(w="2")
    assert ("w1.bits", "8") in fields and not any(k.startswith("w2.") for k, _ in fields)
    sent = [(k, "2" if k == "gpus" else v) for k, v in fields]  # the learner types 2 GPUs and presses Update
    after = lessons_client.get(f"{FLAGSHIP}/1?{urlencode(sent)}")
    assert after.status_code == 200
    assert field_value(after.text, "w2", "gpus") == "2" and field_value(after.text, "w1", "bits") == "8"


def test_a_fix_link_keeps_the_other_widgets_inputs(lessons_client: TestClient) -> None:
    open_plan(lessons_client)
    page = lessons_client.get(f"{FLAGSHIP}/1?w1.bits=8&w2.model=llama-3.1-405b&w2.fixes=true").text
    hrefs = re.findall(r'<a class="button fix" href="([^"]+)"[^>]*data-fix="gpus"', page)
    assert len(hrefs) == 1
    query = parse_qs(urlsplit(hrefs[0].replace("&amp;", "&")).query)
    assert query["w1.bits"] == ["8"] and query["w2.model"] == ["llama-3.1-405b"] and "w2.gpus" in query


# --- Predict first, then the shared inputs ----------------------------------------------------------------------


def test_a_shared_link_asks_for_the_guess_first_and_the_form_carries_the_links_inputs(
    lessons_client: TestClient,
) -> None:
    page = lessons_client.get(f"{FLAGSHIP}/16?w=1&batch_size=512").text
    assert "Commit my guess" in page and 'id="w1-batch_size"' not in page  # the question still comes first
    assert ("w1.batch_size", "512") in Forms(page).find(w="1", predict=True)


def test_without_javascript_the_guess_leads_to_the_shared_inputs(lessons_client: TestClient) -> None:
    page = lessons_client.get(f"{FLAGSHIP}/16?w=1&batch_size=512").text
    r = guess(lessons_client, page, 1, "64")
    assert r.status_code == 303 and r.headers["location"] == f"{FLAGSHIP}/16?w1.batch_size=512#w1"
    shown = lessons_client.get(r.headers["location"]).text
    assert "<span data-guess>64 sequences</span>" in shown
    assert field_value(shown, "w1", "batch_size") == "512" and "Batch 512 " in shown


def test_with_htmx_the_revealed_widget_shows_the_shared_inputs(lessons_client: TestClient) -> None:
    page = lessons_client.get(f"{FLAGSHIP}/16?w1.batch_size=512").text
    r = guess(lessons_client, page, 1, "64", htmx=True)
    assert r.status_code == 200 and r.text.lstrip().startswith('<section class="widget" id="w1"')
    assert "<span data-guess>64 sequences</span>" in r.text
    assert field_value(r.text, "w1", "batch_size") == "512" and "Batch 512 " in r.text


def test_a_guess_on_a_two_widget_link_keeps_both_widgets_inputs(lessons_client: TestClient) -> None:
    page = lessons_client.get(f"{FLAGSHIP}/1?w1.bits=8&w2.gpus=4").text
    r = guess(lessons_client, page, 2, "20")
    assert r.headers["location"] == f"{FLAGSHIP}/1?w1.bits=8&w2.gpus=4#w2"
    shown = lessons_client.get(r.headers["location"]).text
    assert field_value(shown, "w1", "bits") == "8" and field_value(shown, "w2", "gpus") == "4"


def test_a_refused_guess_keeps_the_links_inputs_in_the_form(lessons_client: TestClient) -> None:
    page = lessons_client.get(f"{FLAGSHIP}/16?w1.batch_size=512").text
    for htmx in (True, False):
        r = guess(lessons_client, page, 1, "lots", htmx=htmx)
        assert r.status_code == 422 and "Enter a number" in r.text
        assert ("w1.batch_size", "512") in Forms(r.text).find(w="1", predict=True)


def test_a_guess_form_carries_only_well_formed_link_keys(lessons_client: TestClient) -> None:
    page = lessons_client.get(f"{FLAGSHIP}/16").text
    fields = [
        *Forms(page).find(w="1", predict=True),
        ("w1.batch_size", "512"),
        ("next", "https://example.com"),
        ("w1.bad key", "1"),
        ("w1.precision", "x" * 500),
    ]
    r = lessons_client.post(
        "/predictions",
        content=urlencode([*fields, ("guess", "64")]),
        headers={"Content-Type": "application/x-www-form-urlencoded"},
        follow_redirects=False,
    )
    assert r.status_code == 303 and r.headers["location"] == f"{FLAGSHIP}/16?w1.batch_size=512#w1"
