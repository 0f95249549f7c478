"""The flagship lesson as LESSON-OUTLINE.md fixes it: titles in order, the widgets of each row, prose length,
and prose in our own words."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from app.lessons.blocks import validate_lesson_block
from app.lessons.loader import load_lessons

ROOT = Path(__file__).resolve().parents[3]
SEEDS = ROOT.parent / "shared" / "seeds"

# Step title and the widgets or drills its row of the outline asks for.
OUTLINE = [
    ("A model is a pile of numbers", {"weight-storage", "plan"}),
    ("AI, machine learning, deep learning", {"matmul"}),
    ("Training needs far more memory", {"training-state"}),
    ("Break it: train it anyway", {"plan"}),
    ("A training run you can watch", {"training-run"}),
    ("Training at real scale", {"cluster-scale"}),
    ("Drill: bytes per parameter to train", {"bytes-per-parameter"}),
    ("Serve the model", {"serving-run"}),
    ("Follow one request", {"request-timeline"}),
    ("Training and inference side by side", {"train-vs-serve"}),
    ("A CPU and a GPU, compared", {"cpu-vs-gpu"}),
    ("The same prompt on the CPUs", {"cpu-vs-gpu"}),
    ("Number one: compute", {"compute-time"}),
    ("Break it: number two, capacity", {"plan"}),
    ("Number three: memory bandwidth", {"decode-speed"}),
    ("Maths or memory, never both", {"roofline"}),
    ("Drill: will it fit?", {"will-it-fit"}),
    ("Where AI runs", {"own-vs-rent"}),
    ("Who runs it, and what comes next", {"five-questions"}),
    ("Cheat sheet", set()),
    ("Playground", {"plan"}),
]


@pytest.fixture(scope="module")
def flagship():  # type: ignore[no-untyped-def]
    lessons, _ = load_lessons(ROOT / "lessons", validate_lesson_block)
    return next(le for le in lessons if le.slug == "what-ai-workloads-need")


def test_the_21_steps_carry_the_outlines_titles_in_order(flagship) -> None:  # type: ignore[no-untyped-def]
    assert [s.title for s in flagship.steps] == [title for title, _ in OUTLINE]
    # the lesson's minutes are rounded, each step's too
    assert flagship.minutes == pytest.approx(sum(s.meta.minutes for s in flagship.steps), abs=2)


@pytest.mark.parametrize("number", range(1, 22))
def test_each_step_has_the_widgets_of_its_row(flagship, number: int) -> None:  # type: ignore[no-untyped-def]
    step = flagship.steps[number - 1]
    names = {b.name for b in step.blocks if b.kind in ("widget", "drill")}
    assert OUTLINE[number - 1][1] <= names


@pytest.mark.parametrize("number", [n for n in range(1, 22) if n != 20])
def test_each_step_has_120_to_350_words_of_prose(flagship, number: int) -> None:  # type: ignore[no-untyped-def]
    assert 120 <= flagship.steps[number - 1].words <= 350


def test_the_cheat_sheet_collects_every_summary(flagship) -> None:  # type: ignore[no-untyped-def]
    assert any(b.kind == "cheatsheet" for b in flagship.steps[19].blocks)
    assert all(s.meta.summary for s in flagship.steps)


def _shingles(text: str) -> set[tuple[str, ...]]:
    words = re.findall(r"[a-z0-9']+", text.lower())
    return {tuple(words[i : i + 10]) for i in range(len(words) - 9)}


@pytest.mark.skipif(not SEEDS.is_dir(), reason="the source texts live in ../shared/seeds, beside the checkout")
def test_no_lesson_repeats_ten_words_of_the_source_texts() -> None:
    seen: set[tuple[str, ...]] = set()
    for seed in SEEDS.glob("*.txt"):
        seen |= _shingles(seed.read_text(errors="ignore"))
    files = (ROOT / "lessons").rglob("*.md")
    copied = {str(md.relative_to(ROOT)): len(_shingles(md.read_text()) & seen) for md in files}
    assert {k: v for k, v in copied.items() if v} == {}


def test_step_5_says_its_run_trains_from_scratch(flagship) -> None:  # type: ignore[no-untyped-def]
    """W16 of the 2026-12-04 walk: the widget's loss starts at ln(vocab), a model with random weights, so the prose
    says the 8B is trained from scratch, not fine-tuned from Meta's weights (whose loss would start near 2)."""
    step = flagship.steps[4]
    prose = re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", "".join(b.html for b in step.blocks if b.kind != "widget")))
    assert re.search(r"Llama 3\.1 8B trained from scratch on a billion tokens", prose), prose[:600]
    assert not re.search(r"fine-?tun", prose, flags=re.I)
    assert any(b.kind == "widget" and b.name == "training-run" and b.params["model"] == "llama-3.1-8b"
               for b in step.blocks)
