"""Inputs as people type them (issue 27, W4, W5, W6, U1): every number field of every widget reads a number in
the format the page suggests, says the field's range when the number is out of it (not "Enter a number"), asks
for a number with the range and an example that suits the field when the text is none, and no message beside a
field or a predict box is written in machine notation (1e-06, 1e+30)."""

from __future__ import annotations

import html
import re

import pytest
from fastapi.testclient import TestClient

from app.widgets.base import FieldSpec, field_specs, plain
from app.widgets.registry import all_widgets

HX = {"HX-Request": "true"}
MACHINE = re.compile(r"\d(?:\.\d+)?e[+-]?\d", re.IGNORECASE)  # 1e-06, 1e+30, 2.5E9
NUMBER_FIELDS = [(name, field, spec) for name, widget in sorted(all_widgets().items())
                 for field, spec in field_specs(widget.params).items()]


def _message(client: TestClient, name: str, field: str, typed: str) -> tuple[int, str]:
    r = client.get(f"/widgets/{name}", params={field: typed}, headers=HX)
    found = re.search(rf'id="w1-{field}-error"[^>]*>([^<]*)<', r.text)
    assert found, (name, field, typed, r.status_code, r.text[:300])
    return r.status_code, html.unescape(found.group(1))


def _beyond(spec: FieldSpec) -> list[str]:
    """Values past each bound, typed in the format the fields suggest (7e9)."""
    typed = []
    if spec.high is not None:
        typed += [f"{spec.high * 10 + 10:g}".replace("+", ""), "1e400"]
    if spec.low is not None and spec.low > -1e300:
        typed.append("-1e20" if spec.low > -1e20 else "-1e400")
    return typed


@pytest.mark.parametrize(("name", "field", "spec"), NUMBER_FIELDS, ids=[f"{n}.{f}" for n, f, _ in NUMBER_FIELDS])
def test_every_number_field_says_its_range_in_plain_digits(client: TestClient, name: str, field: str,
                                                           spec: FieldSpec) -> None:
    for typed in _beyond(spec):
        status, message = _message(client, name, field, typed)
        assert status == 422, (name, field, typed)
        if message.startswith("Choose one of"):
            continue  # a field of a few values lists them
        assert message.startswith(("Must be at least", "Must be at most")), (name, field, typed, message)
        assert spec.span() and spec.span() in message, (name, field, typed, message)
        assert not MACHINE.search(message), (name, field, typed, message)
    status, message = _message(client, name, field, "lots")
    assert status == 422 and message.startswith(("Enter a whole number", "Enter a number", "Choose one of"))
    assert not MACHINE.search(message), (name, field, message)
    if message.startswith("Enter"):
        assert spec.span().split(" ", 3)[-1] in message, message  # "from 1 to 1,024"
        example = spec.example if spec.example is not None else spec.low
        assert example is None or f"such as {plain(example)}" in message, message


@pytest.mark.parametrize("value", [1e-6, 1e-9, 0.05, 2.5, 1e6, 1e16, 2_147_483_647, 0])
def test_a_bound_reads_in_digits(value: float) -> None:
    assert not MACHINE.search(plain(value)) and float(plain(value).replace(",", "")) == value


def _storage(client: TestClient, typed: str) -> str:
    r = client.get("/widgets/weight-storage", params={"parameters": typed, "bits": "16"}, headers=HX)
    assert r.status_code == 200, (typed, r.text[:300])
    return re.sub(r'value="[^"]*"', "", r.text)  # the result, without the echo of what was typed


@pytest.mark.parametrize(("typed", "same_as"), [
    ("70B", "70e9"), ("70b", "70e9"), ("8b", "8e9"), ("8 B", "8e9"), ("1.5T", "1.5e12"), ("405 billion", "405e9"),
    ("405 Billion", "405e9"), ("7,000,000,000", "7e9"), ("7 000 000 000", "7e9"), ("12,000k", "1.2e7"),
    ("20 million", "2e7"), ("3bn", "3e9"),
])
def test_a_parameter_count_reads_as_people_write_it(client: TestClient, typed: str, same_as: str) -> None:
    assert _storage(client, typed) == _storage(client, same_as)


@pytest.mark.parametrize("typed", ["70 GB", "70x", "B70", "seventy", "7e9e9"])
def test_text_that_is_no_count_is_asked_for_again_with_an_example(client: TestClient, typed: str) -> None:
    status, message = _message(client, "weight-storage", "parameters", typed)
    assert status == 422 and message.startswith("Enter a number from 1,000,000 to"), message
    assert "such as 7,000,000,000 or 7B" in message


def test_a_gpu_count_in_the_suggested_format_gets_its_range_not_enter_a_number(client: TestClient) -> None:
    status, message = _message(client, "plan", "gpus", "1e6")
    assert status == 422 and message.startswith("Must be at most") and "any whole number from 1 to" in message
    status, message = _message(client, "plan", "gpus", "2.5")
    assert message.startswith("Enter a whole number from 1 to") and "such as 1." in message
    assert client.get("/widgets/plan", params={"gpus": "1e0"}, headers=HX).status_code == 200  # 1e0 is one GPU


def test_a_minute_field_does_not_read_a_magnitude(client: TestClient) -> None:
    status, message = _message(client, "data-path", "checkpoint_every_minutes", "30m")
    assert status == 422 and message.startswith("Enter a number")


def _csrf(page: str) -> str:
    match = re.search(r'name="csrf_token" value="([^"]+)"', page)
    assert match
    return match.group(1)


@pytest.mark.parametrize(("typed", "says"), [
    ("1e30", "more than any plan here"),
    ("1e6", "1,000,000 GB is far more than any plan here"),
    ("lots", "Enter a number, such as 19 or 19.5 GB."),
])
def test_the_predict_box_answers_in_english(lessons_client: TestClient, typed: str, says: str) -> None:
    page = lessons_client.get("/lessons/what-ai-workloads-need/1").text
    data = {"csrf_token": _csrf(page), "lesson": "what-ai-workloads-need", "step": "1", "w": "2", "guess": typed,
            "choice": "yes"}
    r = lessons_client.post("/predictions", data=data, headers=HX)
    assert r.status_code == 422
    assert says in html.unescape(r.text)
    text = re.sub(r"<[^>]*>", " ", html.unescape(r.text))
    assert not re.search(r"would mean|Add the unit", text)
    assert not MACHINE.search(text.replace(typed, "")), re.findall(r".{40}\de[+-]?\d.{40}", text)
