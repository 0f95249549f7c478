"""The glossary as a learner meets it: a marked term in a step, the /glossary page, the footer link."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from app.main import create_app
from tests.conftest import make_settings

GLOSSARY_FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "glossary"


@pytest.fixture
def words(tmp_path: Path) -> Iterator[TestClient]:
    with TestClient(create_app(make_settings(tmp_path, lessons=GLOSSARY_FIXTURE))) as c:
        yield c


def test_the_glossary_page_lists_every_term_with_its_definition_and_step(words: TestClient) -> None:
    html = words.get("/glossary").text
    assert '<dt id="term-flops"><dfn>FLOPS</dfn> <span class="aliases">(also FLOP/s)</span></dt>' in html
    assert "A rate of arithmetic." in html and '<a href="/lessons/words/2">Step 2: The term taught</a>' in html
    assert html.index("term-flops") < html.index("term-kv-cache")  # alphabetical


def test_a_marked_term_links_to_its_glossary_entry_and_every_page_links_the_glossary(words: TestClient) -> None:
    html = words.get("/lessons/words/1").text
    assert 'href="/glossary#term-kv-cache"' in html and "What a model keeps of the tokens it has read." in html
    assert '<a href="/glossary">Glossary</a>' in html
    assert '<a href="/glossary">Glossary</a>' in words.get("/").text
