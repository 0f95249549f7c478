"""Generated sentences read as English: one plural rule ('1 GPU', '8 GPUs'), never 'each of 1 GPU', never '0×
faster'. Swept over every widget, each numeric input at 1 and at its lowest allowed value, and all of them at
once, so a count of one or a run shorter than real time shows up wherever a sentence is generated."""

from __future__ import annotations

import html
import re
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlencode

import pytest
from fastapi.testclient import TestClient
from pydantic import BaseModel, ValidationError

from app.engine.text import plural
from app.widgets.registry import all_widgets

# Words after a number that end in "s" but are not plurals of a counted noun (units; "batch 1 does").
UNITS = {"ms", "µs", "s", "FLOPS", "TFLOPS", "PFLOPS", "GFLOPS", "EFLOPS", "nats", "does"}
ONE_PLURAL = re.compile(r"(?<![\w.,×/-])1 ([A-Za-z][\w-]*s)\b(?!/)")
# Sentences of widgets whose files other helpers of issue 27 are changing now (figures: request-timeline,
# roofline, utilisation; serving: plan): each breaks the rule at a count of one and is left to them, named here so
# that nothing else can slip past the sweep.
ELSEWHERE: set[tuple[str, str]] = set()  # widgets known to break the rule: none
BROKEN = [
    re.compile(r"\beach of (?:the )?1 [A-Za-z]"),  # 'each of 1 GPU'
    re.compile(r"\bover the 1 [A-Za-z]"),  # 'ZeRO-3 over the 1 GPU'
    re.compile(r"(?<![\d.,])0(?:\.0+)?× (?:faster|sooner|slower)"),  # '0× faster'
    re.compile(r"[a-z]\(s\)"),  # 'GPU(s)'
]


def visible(page: str) -> str:
    page = re.sub(r"<(script|style)\b.*?</\1>", " ", page, flags=re.S)
    # the form's own words (labels, option lists, a slider's value) are not generated sentences
    page = re.sub(r"<(select|label|output)\b.*?</\1>", " ", page, flags=re.S)
    return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", page)).split())


def _valid(params: type[BaseModel], query: dict[str, Any]) -> bool:
    try:
        params.model_validate(query)
    except ValidationError:
        return False
    return True


def queries(params: type[BaseModel]) -> Iterator[dict[str, Any]]:
    """Defaults; each int or float field at 1 and at its lowest allowed value; every such field at 1 together."""
    yield {}
    ones: dict[str, Any] = {}
    for name, field in params.model_fields.items():
        if field.annotation not in (int, float):
            continue
        lowest = next((m.ge for m in field.metadata if hasattr(m, "ge")), None)
        for value in {1, lowest} - {None}:
            if _valid(params, {name: value}):
                yield {name: value}
                if value == 1:
                    ones[name] = 1
    if ones and _valid(params, ones):
        yield ones


@pytest.fixture(scope="module")
def rendered(tmp_path_factory: pytest.TempPathFactory) -> list[tuple[str, str]]:
    from app.main import create_app
    from tests.conftest import make_settings

    out = []
    with TestClient(create_app(make_settings(tmp_path_factory.mktemp("english")))) as client:
        for name, widget in all_widgets().items():
            for query in queries(widget.params):
                url = f"/widgets/{name}?{urlencode(query)}"
                r = client.get(url)
                assert r.status_code in (200, 286), (url, r.status_code)
                out.append((url, visible(r.text)))
    return out


def test_the_sweep_covers_every_widget_with_counts_of_one(rendered: list[tuple[str, str]]) -> None:
    names = {url.split("?")[0] for url, _ in rendered}
    assert names == {f"/widgets/{n}" for n in all_widgets()}
    assert any("gpus=1" in url for url, _ in rendered)


def test_a_count_of_one_takes_the_singular(rendered: list[tuple[str, str]]) -> None:
    found = {(url, m[0]) for url, text in rendered for m in ONE_PLURAL.finditer(text) if m[1] not in UNITS}
    assert not {(url, said) for url, said in found if (url.split("?")[0], said) not in ELSEWHERE}, sorted(found)[:20]


def test_no_generated_sentence_is_broken_english(rendered: list[tuple[str, str]]) -> None:
    found = {(url, m[0]) for url, text in rendered for rule in BROKEN for m in rule.finditer(text)}
    assert not {(url, said) for url, said in found if (url.split("?")[0], said) not in ELSEWHERE}, sorted(found)[:20]


@pytest.mark.parametrize(("count", "said"), [(1, "1 GPU"), (8, "8 GPUs"), (0, "0 GPUs"), (16_384, "16,384 GPUs")])
def test_the_one_plural_rule(count: int, said: str) -> None:
    assert plural(count, "GPU") == said
    assert plural(1, "multiply", "multiplies") == "1 multiply" and plural(2, "multiply", "multiplies") == "2 multiplies"
