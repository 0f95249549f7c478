"""A widget never shows a result for inputs other than those in its form (issue 13, item 1): a refused field keeps
its last valid value, the other fields are used as typed, the result says it is stale and the panel keeps the last
valid plan, over HTTP as htmx sends it (the form's fields and its hidden `used.<field>` values)."""

from __future__ import annotations

import re
from html import unescape

from fastapi.testclient import TestClient

from app.pages.widgets import widget_update

HX = {"HX-Request": "true"}
FLAGSHIP = "/lessons/what-ai-workloads-need"
STALE = "Not updated: fix the "  # "field above" or "2 fields marked above"


class Page:
    """One widget's form as the browser holds it: the visible fields and the hidden `used.` ones from each answer.
    The hidden ones are those that differ from the lesson's (a missing one falls back to the lesson's value), so
    `used` reads them over the lesson's values: the value each field's result was computed from."""

    def __init__(self, client: TestClient, name: str, step: int, fields: dict[str, str]) -> None:
        self.client, self.name, self.step, self.fields = client, name, step, dict(fields)
        page = client.get(f"{FLAGSHIP}/{step}").text
        self.lesson = widget_update(client.app.state.lessons, name, self._where(), None).w.defaults  # type: ignore[attr-defined]
        self.hidden = self._hidden(page)
        self.panel = self._panel(page)

    def _where(self) -> dict[str, str]:
        return {"w": "1", "lesson": FLAGSHIP.rsplit("/", 1)[1], "step": str(self.step)}

    @property
    def used(self) -> dict[str, str]:
        return {**self.lesson, **self.hidden}

    @staticmethod
    def _hidden(html: str) -> dict[str, str]:
        span = re.search(r'<span id="w1-used"[^>]*>(.*?)</span>', html, re.S)
        assert span, "no used values"
        return {k: unescape(v) for k, v in re.findall(r'name="used\.([a-z_]+)" value="([^"]*)"', span.group(1))}

    @staticmethod
    def _panel(html: str) -> str:
        """The panel an answer carries, '' when it carries none (the page keeps the one it shows)."""
        match = re.search(r'<aside id="dgx-panel".*?</aside>', html, re.S)
        return re.sub(r' hx-swap-oob="true"', "", match.group(0)) if match else ""

    def type(self, **changes: str) -> tuple[int, str]:
        self.fields.update(changes)
        query = {**self.fields, **{f"used.{k}": v for k, v in self.hidden.items()}, **self._where()}
        r = self.client.get(f"/widgets/{self.name}", params=query, headers=HX)
        assert r.status_code in (200, 422) and "Traceback" not in r.text
        self.hidden = self._hidden(r.text)
        assert all(self.lesson.get(k) != v for k, v in self.hidden.items())  # only what differs travels
        self.panel = self._panel(r.text) or self.panel
        return r.status_code, r.text


def result(html: str) -> str:
    match = re.search(r'<div class="widget-result[^"]*" id="w1-result".*?(?=<p class="field-error"|<span id="w1-used")',
                      html, re.S)
    assert match, "no result"
    return match.group(0)


def test_step_21_a_refused_mode_keeps_the_last_valid_plan_and_the_later_changes_count(
    lessons_client: TestClient,
) -> None:
    page = Page(lessons_client, "plan", 21, {})
    page.type(model="llama-3.1-405b", gpus="8", precision="int4")
    status, last_valid = page.type(model="llama-3.1-8b")
    assert status == 200 and STALE not in last_valid
    panel = page.panel
    status, html = page.type(mode="train")
    assert status == 422 and re.search(r'id="w1-precision-error" hx-swap-oob="true">[^<]*int4', html)
    assert STALE in html and page.panel == panel  # the panel did not jump to the lesson's default
    assert "Not updated: fix the 2 fields marked above." in html  # mode and precision, each marked
    assert result(html) == result(last_valid)  # still the 8B serving plan, said to be stale
    assert page.used["mode"] == "serve" and page.used["model"] == "llama-3.1-8b"
    status, html = page.type(sharding="zero3", mfu="0.7")  # later changes are not ignored
    assert status == 422 and page.used["mfu"] == "0.7" and page.used["sharding"] == "zero3"
    status, html = page.type(precision="bf16")
    assert status == 200 and STALE not in html and "Train" in result(html)
    assert page.used["mode"] == "train" and page.used["mfu"] == "0.7"


def test_step_1_typing_on_the_way_to_70e9_keeps_the_result_and_the_panel_at_the_last_valid_count(
    lessons_client: TestClient,
) -> None:
    page = Page(lessons_client, "weight-storage", 1, {"parameters": "8.03e9", "bits": "16"})
    status, before = page.type(parameters="7")
    status, before = page.type(parameters="70e9")
    assert status == 200 and "140.00 GB" in result(before)
    panel = page.panel
    status, html = page.type(parameters="70")
    assert status == 422 and "Must be at least 1,000,000" in html
    assert STALE in html and result(html) == result(before) and page.panel == panel
    status, html = page.type(bits="4")  # another field still counts, from the last valid count
    assert status == 422 and "35.00 GB" in result(html) and page.used["parameters"] == "7e10"
