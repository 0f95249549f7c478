"""The glossary as a learner meets it: a marked term in a step, the /glossary page, the footer link."""

from __future__ import annotations

import html
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from app.lessons.glossary import load_glossary, taught_later
from app.main import create_app
from tests.conftest import LESSONS, make_settings

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
              "what-is-gpu-infrastructure": "What is GPU infrastructure?"}
    assert len(links) >= 30 and {slug for slug, _, _ in links} <= set(titles)
    for slug, number, label in links:
        assert html.unescape(label).startswith(f"{titles[slug]} · step {number}: "), label
    page = lessons_client.get("/lessons/what-ai-workloads-need/1").text  # quantization: taught in the companion
    inline = re.search(r'<dfn>quantization</dfn>:[^<]*<a href="/lessons/what-is-gpu-infrastructure/14">([^<]*)</a>',
                       page)
    assert inline and inline.group(1) == "What is GPU infrastructure? · step 14: Quantization support"


# What a learner reads in a widget as prose: controls, links, headings, charts and the bare figures (data-value) are
# left out (a term there is not marked, as in app.lessons.glossary.TermLinker), and a marked term becomes a token
# naming its glossary entry.
_NOT_READ = re.compile(r"<(svg|a|button|label|select|textarea|h[1-6]|output|noscript|script|style|summary)\b.*?</\1>",
                       re.S)
_MARKED = re.compile(r'<span class="term"><a class="term-name" href="/glossary#([a-z0-9-]+)"[^>]*>[^<]*</a>'
                     r'<span class="term-def".*?</span></span>', re.S)


def _reading_text(markup: str) -> str:
    text = _MARKED.sub(lambda m: f" ⟦{m.group(1)}⟧ ", markup)
    text = re.sub(r"<(\w+)[^>]*\shidden[\s>][^<]*(?:<input[^>]*>[^<]*)*</\1>", " ", text)
    text = re.sub(r"<(\w+)[^>]*\sdata-value=.*?</\1>", " ", text, flags=re.S)
    return html.unescape(re.sub(r"<[^>]+>", " ", _NOT_READ.sub(" ", text)))


def _widget_outputs(client: TestClient, slug: str, number: int) -> list[tuple[str, str]]:
    """Each widget of the step as the page shows it and as an htmx update answers it (its result even while a
    guess-first widget waits for the guess), at the lesson's inputs."""
    page = client.get(f"/lessons/{slug}/{number}").text
    section = re.compile(r'<section class="widget[^"]*" id="(w\d+)".*?data-widget="([a-z-]+)".*?</section>', re.S)
    out = [(f"step {number}, {m.group(2)}", m.group(0)) for m in section.finditer(page)]
    for wid, name in re.findall(r'<section class="widget[^"]*" id="w(\d+)"[^>]*data-widget="([a-z-]+)"', page):
        update = client.get(f"/widgets/{name}?w={wid}&lesson={slug}&step={number}", headers={"HX-Request": "true"})
        out.append((f"step {number}, {name} update", update.text.split('<aside id="dgx-panel"')[0]))  # less the panel
    return out


def test_a_term_a_widget_shows_before_its_step_teaches_it_is_explained_at_its_first_use(
    lessons_client: TestClient,
) -> None:
    """Issue 27 (W2): widget output at the lesson's inputs uses terms (prefill, decode, MFU, TFLOPS, memory
    bandwidth, ...) long before the step that teaches them; each such term is marked, with its definition, at or
    before its first use in that widget, as prose marks it."""
    glossary = load_glossary(LESSONS)[0]
    lessons = sorted(lessons_client.app.state.lessons, key=lambda le: (le.order, le.title))  # type: ignore[attr-defined]
    order = {le.slug: i for i, le in enumerate(lessons)}
    checked = marked = 0
    for lesson in lessons:
        for step in lesson.steps:
            untaught = [t for t in glossary.terms if taught_later(t, lesson.slug, step.number, order)]
            for where, markup in _widget_outputs(lessons_client, lesson.slug, step.number):
                text = _reading_text(markup)
                checked += 1
                for term in untaught:
                    use = term.pattern().search(text)
                    if use is None:
                        continue
                    token = text.find(f"⟦{term.anchor}⟧")
                    assert 0 <= token < use.start(), f"{lesson.slug} {where}: '{use.group(0)}' unexplained"
                    marked += 1
    assert checked > 50 and marked > 40  # the sweep saw the widgets, and many of their terms come early


def test_an_opened_term_in_a_widget_names_the_step_that_teaches_it(lessons_client: TestClient) -> None:
    """The flagship's first plan (step 1) speaks of decode long before step 9 teaches it: the definition is there,
    with a link to the teaching step; and the glossary holds ZeRO, which the sharding choices name."""
    update = lessons_client.get("/widgets/plan?w=1&lesson=what-ai-workloads-need&step=1",
                                headers={"HX-Request": "true"}).text
    found = re.search(r'<dfn>decode</dfn>: ([^<]*)<a href="/lessons/what-ai-workloads-need/(\d+)">', update)
    assert found and "one token at a time" in found.group(1) and found.group(2) == "9"
    glossary = load_glossary(LESSONS)[0]
    for name in ("ZeRO-1", "ZeRO-3", "TTFT", "TFLOPS", "tensor parallel", "attention heads", "compute-bound"):
        assert glossary.find(name) is not None, name


# Abbreviations a widget may show without a glossary entry: units, products, organisations and software by name,
# which a definition would not teach (every other one, MFU, TTFT, ZeRO-3, PUE, ..., is jargon the glossary explains).
NAMES = {"AI", "CPU", "GPU", "GB", "GiB", "MB", "MiB", "TB", "GB/s", "MB/s", "TB/s", "GHz", "DDR5", "DGX", "HGX",
         "NVIDIA", "SXM", "SXM4", "SXM5", "JSON", "JavaScript", "US", "EIA", "SemiAnalysis", "vLLM", "TensorRT-LLM",
         "FlashAttention", "GPT-3", "KV", "ETA"}


def test_every_abbreviation_a_widget_shows_is_in_the_glossary(lessons_client: TestClient) -> None:
    """Issue 27: the glossary holds every term the widgets use (ZeRO was missing). Every word with two capitals in
    any widget's output at the lesson's inputs, guesses or not, is a glossary name (HBM3 is HBM) or a name above."""
    glossary = load_glossary(LESSONS)[0]
    missing: dict[str, str] = {}
    for lesson in lessons_client.app.state.lessons:  # type: ignore[attr-defined]
        for step in lesson.steps:
            for where, markup in _widget_outputs(lessons_client, lesson.slug, step.number):
                text = html.unescape(re.sub(r"<[^>]+>", " ", re.sub(r"<svg\b.*?</svg>", " ", markup, flags=re.S)))
                for word in re.findall(r"\b[A-Za-z]*[A-Z][A-Za-z0-9]*[A-Z][A-Za-z0-9/-]*\b", text):
                    named = word in NAMES or word.removesuffix("s") in NAMES
                    if named or glossary.find(word) or glossary.find(re.sub(r"\d+$", "", word)):
                        continue
                    missing.setdefault(word, f"{lesson.slug} {where}")
    assert missing == {}, missing
    assert glossary.find("ZeRO-3") is not None and glossary.find("ZeRO-3") == glossary.find("ZeRO")
