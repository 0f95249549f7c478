"""The glossary as a learner meets it: a marked term in a step, the /glossary page, the footer link."""

from __future__ import annotations

import html
import re
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
    assert "A rate of arithmetic." in html
    assert '<a href="/lessons/words/2">Terms in order · step 2: The term taught</a>' in html
    assert html.index("term-flops") < html.index("term-kv-cache")  # alphabetical


def test_a_marked_term_links_to_its_glossary_entry_and_every_page_links_the_glossary(words: TestClient) -> None:
    html = words.get("/lessons/words/1").text
    assert 'href="/glossary#term-kv-cache"' in html and "What a model keeps of the tokens it has read." in html
    assert '<a href="/glossary">Glossary</a>' in html
    assert '<a href="/glossary">Glossary</a>' in words.get("/").text


def test_every_step_link_names_its_lesson_since_each_lesson_has_a_step_3(lessons_client: TestClient) -> None:
    """'Step 3: Interconnect' on a flagship page would send a learner to the flagship's step 3; the link says
    which lesson's step 3 it is, on /glossary and in a definition opened in place."""
    glossary = lessons_client.get("/glossary").text
    links = re.findall(r'<a href="/lessons/([a-z0-9-]+)/(\d+)">([^<]*)</a>', glossary)
    titles = {"what-ai-workloads-need": "What AI Workloads Need", "understanding-the-work": "Understanding the work",
              "what-is-gpu-infrastructure": "What is GPU infrastructure?"}  # fmt: skip
    assert len(links) >= 30 and {slug for slug, _, _ in links} <= set(titles)
    for slug, number, label in links:
        assert html.unescape(label).startswith(f"{titles[slug]} · step {number}: "), label
    page = lessons_client.get("/lessons/what-ai-workloads-need/1").text  # quantization: taught in the companion
    inline = re.search(r'<dfn>quantization</dfn>:[^<]*<a href="/lessons/what-is-gpu-infrastructure/14">([^<]*)</a>',
                       page)  # fmt: skip
    assert inline and inline.group(1) == "What is GPU infrastructure? · step 14: Quantization support"
