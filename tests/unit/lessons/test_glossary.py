"""The glossary and the rules `gpu-classroom check` applies with it: a term used before the step that teaches it
needs its marker, a marker must name a term, and minutes must be near what the words and widgets take."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from app.cli import main
from app.lessons.blocks import validate_lesson_block
from app.lessons.glossary import load_glossary
from app.lessons.loader import load_lessons
from app.lessons.rules import WORDS_PER_MINUTE, computed_minutes

FIXTURE = Path(__file__).resolve().parents[2] / "fixtures" / "glossary"
LESSONS = Path(__file__).resolve().parents[3] / "lessons"


@pytest.fixture
def root(tmp_path: Path) -> Path:
    target = tmp_path / "lessons"
    shutil.copytree(FIXTURE, target)
    return target


def check(path: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, list[str]]:
    code = main(["check", str(path), "--seeds", "2"])
    return code, [line for line in capsys.readouterr().out.splitlines() if line]


def edit(file: Path, old: str, new: str) -> None:
    text = file.read_text()
    assert old in text
    file.write_text(text.replace(old, new))


def test_the_crafted_lesson_passes_with_its_marker(root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, lines = check(root, capsys)
    assert code == 0, lines


def test_a_term_used_before_its_step_without_a_marker_is_reported_at_its_line(
        root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    edit(root / "words" / "01-use.md", "[[KV cache|cache of keys and values]]", "cache of keys and values")
    code, lines = check(root, capsys)
    assert code == 1
    assert lines == [f"{root}/words/01-use.md:7: 'KV cache' is used before step 2 teaches it: "
                     "mark its first use on this page [[KV cache]]"]


def test_a_marker_after_the_first_use_does_not_count(root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    edit(root / "words" / "01-use.md", "[[KV cache|cache of keys and values]] per user. The KV cache",
         "KV cache per user. The [[KV cache]]")
    code, lines = check(root, capsys)
    assert code == 1 and lines[0].startswith(f"{root}/words/01-use.md:7: 'KV cache' is used before step 2")


def test_a_rate_is_not_a_count_flops_matches_by_case(root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    edit(root / "words" / "01-use.md", "grows with the conversation.", "grows with the conversation; FLOPs are many.")
    assert check(root, capsys)[0] == 0  # FLOPs (a count) is not FLOPS (the rate the glossary teaches in step 2)
    edit(root / "words" / "01-use.md", "FLOPs are many.", "the GPU's FLOPS are many.")
    code, lines = check(root, capsys)
    assert code == 1 and "'FLOPS' is used before step 2" in lines[0]


def test_a_marker_naming_no_term_is_reported_at_its_line(root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    edit(root / "words" / "02-teach.md", "FLOPS is a rate.", "FLOPS is a rate, unlike [[bogus thing]].")
    code, lines = check(root, capsys)
    assert code == 1
    assert lines == [f"{root}/words/02-teach.md:7: marker [[bogus thing]] names no glossary term "
                     "(add it to glossary.yaml or fix the spelling)"]


def test_a_glossary_entry_must_name_a_real_step(root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    edit(root / "glossary.yaml", "taught_in: words/02-teach.md\n- term: FLOPS",
         "taught_in: words/09-gone.md\n- term: FLOPS")
    code, lines = check(root, capsys)
    assert code == 1 and lines[0].startswith(f"{root}/glossary.yaml:1: 'KV cache' is taught in 'words/09-gone.md'")


def test_a_step_whose_minutes_are_far_from_its_words_is_refused(
        root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    words = " ".join(["word"] * (WORDS_PER_MINUTE * 4))  # four minutes of reading, one stated
    edit(root / "words" / "02-teach.md", "FLOPS is a rate.", f"FLOPS is a rate. {words}")
    code, lines = check(root, capsys)
    assert code == 1
    assert lines[0].startswith(f"{root}/words/02-teach.md:4: minutes: 1 is far from the 4.1 computed")
    assert lines[0].endswith("write minutes: 4")


def test_a_widget_and_a_drill_add_their_stated_minutes(root: Path) -> None:
    edit(root / "words" / "02-teach.md", "FLOPS is a rate.", "FLOPS is a rate.\n\n```widget matmul\n```\n")
    lessons, problems = load_lessons(root, validate_lesson_block)
    assert problems == []
    step = lessons[0].steps[1]
    assert computed_minutes(step) == pytest.approx(step.words / WORDS_PER_MINUTE + 1.5, abs=1e-9)  # exact sum


def test_a_lesson_whose_minutes_are_far_from_its_steps_is_refused(
        root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    edit(root / "words" / "lesson.yaml", "minutes: 2", "minutes: 30")
    code, lines = check(root, capsys)
    assert code == 1
    assert lines == [f"{root}/words/lesson.yaml:4: minutes: 30 is far from the 2 its steps' minutes add up to; "
                     "write minutes: 2"]


def test_a_marker_renders_a_link_to_the_glossary_with_its_definition_and_step(root: Path) -> None:
    lessons, _ = load_lessons(root, validate_lesson_block)
    html = lessons[0].steps[0].blocks[0].html
    assert ('<a class="term-name" href="/glossary#term-kv-cache" data-def="def-kv-cache-1">'
            "cache of keys and values</a>") in html
    assert ('<span class="term-def" id="def-kv-cache-1" role="note" hidden><dfn>KV cache</dfn>: '
            "What a model keeps") in html
    assert '<a href="/lessons/words/2">Terms in order · step 2: The term taught</a>' in html


def test_the_real_glossary_names_real_steps_and_every_issue_term() -> None:
    glossary, problems = load_glossary(LESSONS)
    assert problems == []
    for name in ("token", "FLOPs", "FLOPS", "CUDA", "PCIe", "tensor parallel", "KV heads", "head dimension",
                 "kernel", "NVLink", "prefill", "decode", "KV cache", "arithmetic intensity", "ridge point",
                 "memory-bound", "MFU", "memory bandwidth", "memory capacity"):
        assert glossary.find(name) is not None, name
    assert glossary.find("FLOPs").term == "FLOPs" and glossary.find("FLOPS").term == "FLOPS"  # type: ignore[union-attr]
