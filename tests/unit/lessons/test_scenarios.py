"""One set of numbers: every serving figure in prose says the context it assumes, and the same scenario gives the
same figure on every step that quotes it, widgets included (issue 14, item 3)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from app.engine.plan import PlanRequest, make_plan
from app.engine.text import num
from app.lessons.blocks import validate_lesson_block
from app.lessons.loader import load_lessons
from app.lessons.model import Lesson
from app.widgets.registry import get_widget

LESSONS = Path(__file__).resolve().parents[3] / "lessons"
SERVE_FIGURE = re.compile(r"plan\(([^{}]*?)\)\.serve\.([a-z_]+)")


@pytest.fixture(scope="module")
def lessons() -> list[Lesson]:
    return load_lessons(LESSONS, validate_lesson_block)[0]


def _kwargs(args: str) -> dict[str, object]:
    call = ast.parse(f"f({args})", mode="eval").body
    assert isinstance(call, ast.Call)
    return {k.arg: ast.literal_eval(k.value) for k in call.keywords if k.arg}


def _text(html: str) -> str:
    return re.sub(r"<[^>]+>", " ", html)


def test_every_serving_figure_states_the_context_it_assumes(lessons: list[Lesson]) -> None:
    """A serving figure depends on how many tokens of KV cache each sequence reads: the step that quotes it must say
    that number (so 1,500 and 8,192 cannot pass for the same request)."""
    checked = 0
    for lesson in lessons:
        for step in lesson.steps:
            source = step.file.read_text(encoding="utf-8")
            page = _text("".join(b.html for b in step.blocks))
            for args, _figure in SERVE_FIGURE.findall(source):
                request = PlanRequest(**_kwargs(args))  # type: ignore[arg-type]
                assert num(request.context_tokens) in page, (
                    f"{step.file.name}: a serving figure assumes {num(request.context_tokens)} tokens of context "
                    "but the step never says so")
                checked += 1
    assert checked >= 10  # steps 8, 9, 15 and 16 quote serving figures


def test_batch_32_decode_is_one_figure_in_step_8_step_16_and_the_roofline_below_it(lessons: list[Lesson]) -> None:
    flagship = next(le for le in lessons if le.slug == "what-ai-workloads-need")
    chat = {"model": "llama-3.1-8b", "batch_size": 32, "prompt_tokens": 1000, "output_tokens": 500,
            "context_tokens": 1500}
    figure = num(make_plan(PlanRequest(**chat)).serve.throughput_tokens_per_second)  # type: ignore[arg-type]
    step8, step16 = flagship.steps[7], flagship.steps[15]
    assert figure in _text("".join(b.html for b in step8.blocks))
    assert figure in _text("".join(b.html for b in step16.blocks))
    roofline = next(b for b in step16.blocks if b.kind == "widget" and b.name == "roofline")
    widget = get_widget("roofline")
    assert widget is not None
    params = widget.params.model_validate({**roofline.params, "batch_size": 32, "predict": ""})
    shown = widget.compute(params)
    assert num(shown.r.with_kv.throughput) == figure  # type: ignore[attr-defined]  # the batch-32 row, KV read
