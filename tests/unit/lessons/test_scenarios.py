"""One set of numbers: every serving figure in prose says the context it assumes, and the same scenario gives the
same figure on every step that quotes it, widgets included (issue 14, item 3)."""

from __future__ import annotations

import ast
import html as markup
import re
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlencode

import pytest
from fastapi.testclient import TestClient

from app.engine.plan import PlanRequest, make_plan
from app.engine.text import num
from app.lessons.blocks import validate_lesson_block
from app.lessons.loader import load_lessons
from app.lessons.model import Lesson, Step
from app.main import create_app
from app.widgets.registry import get_widget
from tests.conftest import make_settings

LESSONS = Path(__file__).resolve().parents[3] / "lessons"
SERVE_FIGURE = re.compile(r"plan\(([^{}]*?)\)\.serve\.([a-z_]+)")
TRAIN_FIGURE = re.compile(r"plan\(([^{}]*?)\)\.train\.(?:seconds|tokens_per_second)")


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


# Training, cost and memory: each named scenario gives one figure in prose, in the widget's default result and on
# the dgx-1 panel. Prose is read from the loader (reveals included); widgets are rendered over HTTP with the
# step's own block settings (less the guess-first gate), as a learner sees them once they have guessed.


@pytest.fixture(scope="module")
def client(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TestClient]:
    settings = make_settings(tmp_path_factory.mktemp("scenarios"), LESSONS)
    with TestClient(create_app(settings)) as c:
        yield c


def _plain(html: str) -> str:
    return re.sub(r"\s+", " ", markup.unescape(_text(html)))


def _step(lessons: list[Lesson], slug: str, number: int) -> Step:
    return next(le for le in lessons if le.slug == slug).steps[number - 1]


def _prose(lessons: list[Lesson], slug: str, number: int) -> str:
    return _plain("".join(b.html for b in _step(lessons, slug, number).blocks if b.kind != "widget"))


def _widget(client: TestClient, lessons: list[Lesson], slug: str, number: int, name: str) -> str:
    """The step's widget of that name at its lesson defaults, result and panel."""
    block = next(b for b in _step(lessons, slug, number).blocks if b.kind == "widget" and b.name == name)
    params = {k: str(v).lower() if isinstance(v, bool) else str(v) for k, v in block.params.items() if k != "predict"}
    r = client.get(f"/widgets/{block.name}?{urlencode(params)}&lesson={slug}&step={number}",
                   headers={"HX-Request": "true"})  # fmt: skip
    assert r.status_code in (200, 286), (slug, number, r.status_code)  # 286: a live run not running
    return _plain(r.text)


FLAGSHIP = "what-ai-workloads-need"
# (scenario, [(step, where, pattern)]): every pattern's group must be the same figure. where: prose, or the name of
# the step's widget (its result and the dgx-1 panel beside it).
SCENARIOS: list[tuple[str, list[tuple[int, str, str]]]] = [
    ("8B bf16 training, 1e9 tokens, 8 H100s, ZeRO-3, 40 % MFU: tokens a second", [
        (5, "prose", r"done at ([\d,]+) tokens per second"),
        (5, "training-run", r"the GPUs take ([\d,]+) tokens a second"),
    ]),
    ("8B bf16 training, 1e9 tokens, 8 H100s, ZeRO-3, 40 % MFU: time", [
        (5, "prose", r"tokens per second, in ([\d.]+ hours)\b"),
        (5, "training-run", r"tokens a second: ([\d.]+ hours) of training"),
    ]),
    ("8B bf16 training, 8 H100s, ZeRO-3, selective checkpointing, one 8,192-token sequence a GPU: GB a GPU", [
        (5, "prose", r"selective checkpointing, ([\d.]+ GB) of its memory"),
        (5, "training-run", r"GPU 0: ([\d.]+ GB) of 80 GB\. training Llama 3\.1 8B on 8 GPUs"),
    ]),
    ("8B bf16 training, 8 H100s, ZeRO-3, full checkpointing, one 8,192-token sequence a GPU: GB a GPU", [
        (13, "compute-time", r"8,192 tokens a GPU with full activation checkpointing, which keeps the fewest "
                             r"activations\) puts ([\d.]+ GB) on each GPU"),
        (13, "compute-time", r"GPU 0: ([\d.]+ GB) of 80 GB\. training Llama 3\.1 8B on 8 GPUs"),
    ]),
    ("8B bf16 training, 15 trillion tokens, 8 H100s, 40 % MFU: time", [
        (5, "prose", r"dgx-1 would need ([\d.]+ years)"),
        (13, "prose", r"15 trillion tokens at 40 % MFU takes ([\d.]+ years)"),
        (13, "compute-time", r"([\d.]+ years) at 40 % MFU"),
    ]),
    ("405B training, 15.6 trillion tokens, 16,384 H100s, 41 % MFU: days", [
        (6, "prose", r"finish the maths in ([\d.]+ days)"),
        (6, "cluster-scale", r"([\d.]+ days) on 16,384 GPUs"),
    ]),
    ("405B training, 15.6 trillion tokens, one H100, 41 % MFU: years", [
        (6, "prose", r"it would still take ([\d,]+ years)"),
        (6, "cluster-scale", r"On one GPU at 41 % MFU ([\d,]+ years)"),
    ]),
    ("405B training, ZeRO-3, full checkpointing, one 8,192-token sequence a GPU: GPUs for memory", [
        (6, "prose", r"the activations, ([\d,]+) with ZeRO-3"),
        (6, "cluster-scale", r"GPUs for memory ([\d,]+)"),
    ]),
    ("8B bf16 serving on one H100, batch 1, 8,192 tokens of context: GB on GPU 0", [
        (1, "prose", r"The plan's answer is ([\d.]+ GB)"),
        (1, "plan", r"GPU 0: ([\d.]+ GB) of 80 GB"),
    ]),
    ("8B bf16 training on one H100, batch 1, 8,192-token sequence, no checkpointing: GB on GPU 0", [
        (4, "prose", r"In all ([\d.]+ GB), from a GPU"),
        (4, "plan", r"GPU 0 needs ([\d.]+ GB) of its 80 GB"),
    ]),
    ("dgx-1 bought or rented at the illustrative prices: break-even utilisation", [
        (18, "own-vs-rent", r"Owning pays above (\d+ %) utilisation"),
        (19, "five-questions",
         r"Owning a dgx-1 pays above (\d+ %) utilisation at the illustrative prices of the own-vs-rent widget"),
    ]),
]
COMPANION = "understanding-the-work"
COMPANION_SCENARIOS: list[tuple[str, list[tuple[int, str, str]]]] = [
    ("7 billion parameters at 16 bits: weight storage", [
        (4, "prose", r"Seven billion parameters at 16 bits come to ([\d.]+ GB)"),
        (4, "weight-storage", r"^ ?([\d.]+ GB) = "),
        (4, "weight-storage", r"GPU 0: ([\d.]+ GB) of 80 GB"),
    ]),
]


def _same_figure(figures: list[str]) -> bool:
    """One figure, however many decimals each place shows: 14 GB and 14.00 GB agree, 185 GB and 186.0 GB do not."""
    values = [re.match(r"[\d,.]+", f) for f in figures]
    assert all(values), figures
    units = {f[m.end():].strip() for f, m in zip(figures, values, strict=True) if m}
    numbers = [m.group(0).replace(",", "") for m in values if m]
    places = min(len(n.split(".")[1]) if "." in n else 0 for n in numbers)
    return len(units) == 1 and len({round(float(n), places) for n in numbers}) == 1


ALL_SCENARIOS = [(FLAGSHIP, s, p) for s, p in SCENARIOS] + [(COMPANION, s, p) for s, p in COMPANION_SCENARIOS]


@pytest.mark.parametrize(("slug", "scenario", "places"), ALL_SCENARIOS, ids=[s for _, s, _ in ALL_SCENARIOS])
def test_a_named_scenario_gives_one_figure_in_prose_widget_and_panel(
    client: TestClient, lessons: list[Lesson], slug: str, scenario: str, places: list[tuple[int, str, str]]
) -> None:
    seen: dict[str, str] = {}
    for i, (number, where, pattern) in enumerate(places):
        page = (_prose(lessons, slug, number) if where == "prose"
                else _widget(client, lessons, slug, number, where))  # fmt: skip
        found = re.search(pattern, page)
        assert found, f"step {number} {where}: no {pattern!r} for {scenario}"
        seen[f"{i}: step {number} {where}"] = found.group(1)
    assert _same_figure(list(seen.values())), f"{scenario}: {seen}"


def test_every_training_figure_states_its_gpus_and_mfu(lessons: list[Lesson]) -> None:
    """A training time or rate depends on the GPUs and the MFU: the step quoting it says both."""
    checked = 0
    for lesson in lessons:
        for step in lesson.steps:
            source = step.file.read_text(encoding="utf-8")
            page = _plain("".join(b.html for b in step.blocks))
            for args in TRAIN_FIGURE.findall(source):
                request = PlanRequest(**_kwargs(args))  # type: ignore[arg-type]
                gpus = "one GPU" if request.gpus == 1 else num(request.gpus)
                assert gpus in page or (request.gpus == 8 and "dgx-1" in page), (
                    f"{step.file.name}: a training figure assumes {gpus} GPUs but the step never says so")
                assert f"{round(request.mfu * 100)} %" in page, (
                    f"{step.file.name}: a training figure assumes {request.mfu:.0%} MFU but the step never says so")
                checked += 1
    assert checked >= 8  # steps 5, 6 and 13 time training runs
