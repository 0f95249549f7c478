"""One set of numbers: every serving figure in prose says the context it assumes, and the same scenario gives the
same figure on every step that quotes it, widgets included (issue 14, item 3)."""

from __future__ import annotations

import ast
import html as markup
import re
from collections.abc import Iterator
from decimal import ROUND_HALF_UP, Decimal
from itertools import combinations
from pathlib import Path
from urllib.parse import parse_qsl, urlencode

import pytest
import yaml
from fastapi.testclient import TestClient

from app.engine.hardware import node
from app.engine.plan import PlanRequest, make_plan
from app.engine.text import gb, num
from app.lessons.blocks import validate_lesson_block
from app.lessons.expressions import EXPRESSION, Evaluator
from app.lessons.loader import load_lessons
from app.lessons.model import Block, Lesson, Step
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
    """The text a learner reads, a glossary term's hidden definition left out (it opens only when asked)."""
    shown = re.sub(r'<span class="term-def"[^>]*>.*?</span>', "", html, flags=re.S)
    shown = re.sub(r'<span class="term"><a class="term-name"[^>]*>(.*?)</a></span>', r"\1", shown, flags=re.S)
    return re.sub(r"\s+", " ", markup.unescape(_text(shown)))


def _step(lessons: list[Lesson], slug: str, number: int) -> Step:
    return next(le for le in lessons if le.slug == slug).steps[number - 1]


def _prose(lessons: list[Lesson], slug: str, number: int) -> str:
    return _plain("".join(b.html for b in _step(lessons, slug, number).blocks if b.kind != "widget"))


def _widget(client: TestClient, lessons: list[Lesson], slug: str, number: int, name: str) -> str:
    """The step's widget of that name at its lesson defaults, result and panel. `name?knob=value&...` changes those
    knobs first, as the learner does when the prose says "try it in the widget"."""
    name, _, changed = name.partition("?")
    block = next(b for b in _step(lessons, slug, number).blocks if b.kind == "widget" and b.name == name)
    return _render(client, slug, number, block, dict(parse_qsl(changed)))


def _render(client: TestClient, slug: str, number: int, block: Block, changed: dict[str, str]) -> str:
    """One widget block at the settings the lesson gives it (less the guess-first gate), with `changed` on top."""
    params = {k: str(v).lower() if isinstance(v, bool) else str(v) for k, v in block.params.items() if k != "predict"}
    r = client.get(f"/widgets/{block.name}?{urlencode(params | changed)}&lesson={slug}&step={number}",
                   headers={"HX-Request": "true"})
    assert r.status_code in (200, 286), (slug, number, r.status_code)  # 286: a live run not running
    return _plain(r.text)


FLAGSHIP = "what-ai-workloads-need"
COMPANION = "understanding-the-work"
INFRASTRUCTURE = "what-is-gpu-infrastructure"
StepRef = int | tuple[str, int]  # a step of the scenario's own lesson, or (slug, step) of another lesson
# (scenario, [(step, where, pattern)]): every pattern's group must be the same figure. where: prose, or the name of
# the step's widget (its result and the dgx-1 panel beside it), with `?knob=value` for knobs the prose asks the
# learner to change.
SCENARIOS: list[tuple[str, list[tuple[StepRef, str, str]]]] = [
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
        (4, "prose", r"At one sequence a GPU they need ([\d.]+ GB) and"),
        (4, "plan?gpus=8&sharding=zero3&activation_checkpointing=selective", r"GPU 0: ([\d.]+ GB) of 80 GB"),
    ]),
    ("8B bf16 training, 8 H100s, ZeRO-3, no checkpointing, one 8,192-token sequence a GPU: GB a GPU", [
        (4, "prose", r"an eighth each: ([\d.]+ GB) a GPU"),
        (5, "prose", r"less than step 4's ([\d.]+ GB) for the same sequence without checkpointing"),
        (4, "plan?gpus=8&sharding=zero3", r"GPU 0: ([\d.]+ GB) of 80 GB"),
    ]),
    ("8B bf16 training, 8 H100s, ZeRO-3, two 8,192-token sequences a GPU: GB a GPU, by checkpointing", [
        (4, "prose", r"Two sequences a GPU need ([\d.]+ GB)"),
        (4, "plan?gpus=8&sharding=zero3&batch_size=2", r"GPU 0 needs ([\d.]+ GB) of its 80 GB"),
    ]),
    ("8B bf16 training, 8 H100s, ZeRO-3, selective checkpointing, two sequences a GPU: GB a GPU", [
        (4, "prose", r"At two sequences a GPU, selective checkpointing \(.*?\) needs ([\d.]+ GB), still over"),
        (4, "plan?gpus=8&sharding=zero3&batch_size=2&activation_checkpointing=selective",
         r"GPU 0 needs ([\d.]+ GB) of its 80 GB"),
    ]),
    ("8B bf16 training, 8 H100s, ZeRO-3, full checkpointing, two sequences a GPU: GB a GPU", [
        (4, "prose", r"full checkpointing \(keep each layer's input, rerun the layer\) needs ([\d.]+ GB)"),
        (4, "plan?gpus=8&sharding=zero3&batch_size=2&activation_checkpointing=full", r"GPU 0: ([\d.]+ GB) of 80 GB"),
    ]),
    ("8B bf16 training, 8 H100s, ZeRO-3, full checkpointing, one 8,192-token sequence a GPU: GB a GPU", [
        (13, "compute-time", r"8,192 tokens a GPU with full activation checkpointing, which keeps the fewest "
                             r"activations\) puts ([\d.]+ GB) on each GPU"),
        (13, "compute-time", r"GPU 0: ([\d.]+ GB) of 80 GB\. training Llama 3\.1 8B on 8 GPUs"),
        (4, "prose", r"At one sequence a GPU they need [\d.]+ GB and ([\d.]+ GB)"),
        (10, "train-vs-serve", r"([\d.]+ GB) on each of 8 GPUs with ZeRO-3 and full activation checkpointing, "
                               r"one 8,192-token sequence a GPU"),
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
    ("405B with Adam: GPUs whose memory the training state alone fills, rounded up to a whole GPU", [
        (6, "prose", r"the state alone needs the memory of ([\d,]+) GPUs"),
        (6, "prose", r"not the ([\d,]+) the state alone fills"),
        (6, "cluster-scale", r"Memory: state only ([\d,]+)"),
        (6, "cluster-scale", r"the memory of ([\d,]+) GPUs of 80 GB"),
        (3, "training-state?model=llama-3.1-405b", r"the memory of ([\d,]+) GPUs"),
    ]),
    ("405B training, ZeRO-3, full checkpointing, one 8,192-token sequence a GPU: GPUs for memory", [
        (6, "prose", r"the activations, ([\d,]+) with ZeRO-3"),
        (6, "cluster-scale", r"GPUs for memory ([\d,]+)"),
    ]),
    ("8B bf16 serving on one H100, batch 1, 8,192 tokens of context: GB on GPU 0", [
        (1, "prose", r"The plan's answer is ([\d.]+ GB)"),
        (1, "plan", r"GPU 0: ([\d.]+ GB) of 80 GB"),
        (1, "plan", r"Fits: ([\d.]+ GB) of 80 GB on GPU 0"),
        (10, "prose", r"8,192 tokens takes ([\d.]+ GB) on one GPU"),
        (10, "train-vs-serve", r"([\d.]+ GB) on one GPU: [\d.]+ GB of weights in all, a KV cache of 8,192 tokens"),
        (19, "five-questions", r"Serving: ([\d.]+ GB) of 80 GB"),
    ]),
    ("8B bf16 serving on one H100, one user, 8,192 tokens of KV cache: tokens a second that user sees", [
        (1, "plan", r"One sequence ([\d.]+) tokens/s"),
        (10, "train-vs-serve", r"([\d.]+) tokens/s for one user"),
        (15, "prose", r"a user sees about ([\d,]+) tokens per second"),
        (15, "decode-speed", r"About ([\d,]+) tokens/s for one user"),
        (19, "five-questions", r"memory bandwidth, ([\d,]+) tokens a second on one H100"),
    ]),
    ("8B bf16 decode, one sequence: the weight bytes a step reads (all but other tokens' embedding rows)", [
        (15, "prose", r"([\d.]+ GB) in all\. At"),
        (15, "decode-speed", r"Each token reads ([\d.]+ GB) of weights"),
        (16, "roofline", r"FLOPs against ([\d.]+ GB)\."),
    ]),
    ("8B bf16 decode, one sequence: reading those weights once at the H100's datasheet bandwidth", [
        (12, "prose", r"at least [\d.]+ ms from the CPUs' memory against ([\d.]+ ms) from one H100's"),
        (15, "prose", r"that read takes ([\d.]+ ms)"),
    ]),
    ("The H100's memory bandwidth that decode kernels really reach: share of the datasheet", [
        (1, "plan", r"real decode kernels sustain about (\d+ %) of it"),
        (15, "prose", r"Real serving software reads at about (\d+ %) of that bandwidth"),
    ]),
    ("The H100's memory bandwidth that decode kernels really reach", [
        (1, "plan", r"real decode kernels sustain about \d+ % of it \(([\d.]+ TB/s)\)"),
        (15, "prose", r"of that bandwidth, ([\d.]+ TB/s)"),
        (15, "decode-speed", r"Decode kernels achieve about [\d.]+ % of the peak, ([\d.]+ TB/s)"),
        (16, "roofline", r"What real kernels reach: [\d,]+ TFLOPS and ([\d.]+ TB/s)"),
    ]),
    ("8B bf16 request of 1,000 prompt and 500 answer tokens, 8,192 tokens of KV cache: its prefill", [
        (9, "prose", r"the phase is short: ([\d.]+ ms) for the whole prompt"),
        (9, "request-timeline", r"s for this request: ([\d.]+ ms) of prefill"),
        (1, "plan", r"Time to first token \(prefill\) ([\d.]+ ms)"),
    ]),
    ("8B bf16 request of 1,000 prompt and 500 answer tokens, 8,192 tokens of KV cache: a decode step", [
        (9, "prose", r"the KV cache, to produce a single token: ([\d.]+ ms) per step"),
        (9, "request-timeline", r"decode steps of ([\d.]+ ms)"),
        (1, "plan", r"Time per output token ([\d.]+ ms)"),
    ]),
    ("8B bf16 request of 1,000 prompt and 500 answer tokens, 8,192 tokens of KV cache: the whole request", [
        (9, "prose", r"most of the ([\d.]+ s) the request takes"),
        (9, "request-timeline", r"^ ?([\d.]+ s) for this request"),
        (1, "plan", r"One request ([\d.]+ s)"),
    ]),
    ("8B bf16 request of 2,000 prompt and 500 answer tokens, 8,192 tokens of KV cache: the whole request", [
        (9, "prose", r"Double the prompt and the request takes ([\d.]+ s)"),
        (9, "request-timeline", r"Prompt × 2: 2,000 in, 500 out, ([\d.]+ s)"),
    ]),
    ("8B bf16 request of 1,000 prompt and 1,000 answer tokens, 8,192 tokens of KV cache: the whole request", [
        (9, "prose", r"Double the answer instead and it takes ([\d.]+ s)"),
        (9, "request-timeline", r"Answer × 2: 1,000 in, 1,000 out, ([\d.]+ s)"),
    ]),
    ("The KV cache the server keeps for one request in step 9", [
        (9, "prose", r"keeps a KV cache of ([\d,]+) tokens for the request"),
        (9, "request-timeline", r"the server keeps ([\d,]+) tokens of cache for a request"),
        (9, "request-timeline", r"This request 1,000 tokens in [\d.]+ ms 500 × [\d.]+ ms = [\d.]+ s ([\d,]+) tokens"),
    ]),
    ("8B bf16 decode on one H100, the weights alone read: batch at the ridge", [
        (16, "prose", r"the answer is close to the ridge itself: ([\d,]+) requests"),
        (16, "roofline", r"decode reaches the ridge at a batch of ([\d,]+)"),
    ]),
    ("8B bf16 decode on one H100, 1,500 tokens of KV cache a sequence: the most sequences that fit", [
        (16, "prose", r"at most ([\d,]+) caches fit on one H100"),
        (16, "roofline", r"at most ([\d,]+) sequences fit on one H100"),
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
    ("dgx-1 bought at the illustrative price: one price for the purchase and the support on it", [
        (18, "own-vs-rent", r"Price of one dgx-1: (\$[\d,]+)"),
        (18, "own-vs-rent", r"Support and maintenance a year\. Illustrative: .*? here of the same (\$[\d,]+)"),
    ]),
    ("The course's one illustrative electricity price", [
        (18, "own-vs-rent", r"Electricity: (\$[\d.]+) a kWh"),
        ((INFRASTRUCTURE, 21), "power-energy", r"Electricity: \$[\d,]+ at (\$[\d.]+) a kWh"),
    ]),
]
COMPANION_SCENARIOS: list[tuple[str, list[tuple[StepRef, str, str]]]] = [
    ("7 billion parameters at 16 bits: weight storage", [
        (4, "prose", r"Seven billion parameters at 16 bits come to ([\d.]+ GB)"),
        (4, "weight-storage", r"^ ?([\d.]+ GB) = "),
    ]),
]


def _same_figure(figures: list[str]) -> bool:
    """One figure by one rounding rule: the most precise figure shown, rounded half up to the fewest decimals any
    place shows (the rule app.engine.text.gb writes by). 14 GB and 14.00 GB agree, 12.05 GB and 12.1 GB agree, 12.05 GB
    and 12.0 GB do not, nor do 185 GB and 186.0 GB."""
    values = [re.search(r"\d[\d,]*(?:\.\d+)?", f) for f in figures]
    assert all(values), figures
    units = {(f[: m.start()] + "#" + f[m.end() :]).strip() for f, m in zip(figures, values, strict=True) if m}
    numbers = [Decimal(m.group(0).replace(",", "")) for m in values if m]
    places = min(-n.as_tuple().exponent for n in numbers)  # type: ignore[operator]
    step = Decimal(1).scaleb(-places)
    return len(units) == 1 and len({n.quantize(step, rounding=ROUND_HALF_UP) for n in numbers}) == 1


def test_one_rounding_rule_compares_figures_as_a_learner_reads_them() -> None:
    assert _same_figure(["12.05 GB", "12.1 GB"]) and not _same_figure(["12.05 GB", "12.0 GB"])
    assert _same_figure(["116.2", "116"]) and _same_figure(["$270,000", "$270,000"])
    assert not _same_figure(["185 GB", "186.0 GB"]) and not _same_figure(["81", "82"])
    assert not _same_figure(["0.13", "0.15"]) and not _same_figure(["19.0 GB", "19.0 GiB"])


ALL_SCENARIOS = [(FLAGSHIP, s, p) for s, p in SCENARIOS] + [(COMPANION, s, p) for s, p in COMPANION_SCENARIOS]


@pytest.mark.parametrize(("slug", "scenario", "places"), ALL_SCENARIOS, ids=[s for _, s, _ in ALL_SCENARIOS])
def test_a_named_scenario_gives_one_figure_in_prose_widget_and_panel(
    client: TestClient, lessons: list[Lesson], slug: str, scenario: str, places: list[tuple[StepRef, str, str]]
) -> None:
    seen: dict[str, str] = {}
    for i, (where_step, where, pattern) in enumerate(places):
        lesson, number = where_step if isinstance(where_step, tuple) else (slug, where_step)
        page = (_prose(lessons, lesson, number) if where == "prose"
                else _widget(client, lessons, lesson, number, where))
        found = re.search(pattern, page)
        assert found, f"{lesson} step {number} {where}: no {pattern!r} for {scenario}"
        seen[f"{i}: {lesson} step {number} {where}"] = found.group(1)
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


# Every step of the three lessons, rendered at its defaults: prose and each widget at the settings the lesson gives
# it. A figure typed into prose cannot follow the engine, so each one is declared below with what it is (a given of
# the scenario, a published figure, a label) and, where the engine holds it, the expression it must equal; anything
# else must be an engine expression, which the scenarios above compare with the widgets.

FIGURE_UNITS = (r"GB|GiB|TB/s|GB/s|Gb/s|TB|ms|µs|tokens?/s|tokens? (?:per|a) second|kWh|kW|W|TFLOPS|PFLOPS|FLOPs|"
                r"GPUs?|H100s?|%|years?|days?|hours?|minutes?|seconds?|s|tokens?|bytes?")
TYPED_FIGURE = re.compile(rf"(?<![\w.,$])\$?\d[\d,]*(?:\.\d+)?[\s-]?(?:{FIGURE_UNITS})(?![\w/])"
                          r"|(?<![\w.])\$\d[\d,.]*\d")
# (lesson, step) -> {typed figure: what it is, or the engine expression (with its filter) it must equal}
TYPED_FIGURES: dict[tuple[str, int], dict[str, str]] = {
    (FLAGSHIP, 1): {"80GB": "the label on the box", "80 GiB": "= gpu('h100').physical_memory_bytes | gib(0)",
                    "8,192-token": "the plan's context, a given of the scenario"},
    (FLAGSHIP, 2): {"64 tokens": "an m for the learner to type"},
    (FLAGSHIP, 3): {"16 bytes": "= training_bytes_per_parameter('adam') | num ~ ' bytes'"},
    (FLAGSHIP, 4): {"8,192-token": "the sequence of the step's plan widget, a given"},
    (FLAGSHIP, 5): {"40 %": "the run's MFU, a given (every training figure states it)"},
    (FLAGSHIP, 6): {"41 %": "Meta's reported MFU, a given", "16,384 H100s": "Meta's published GPU count",
                    "43 %": "Meta's published MFU range"},
    (FLAGSHIP, 8): {"1,500 tokens": "the chat request's KV cache, a given (every serving figure states it)",
                    "2 GPUs": "the fewest of dgx-1's GPUs that hold the 70B: compared with the widget's by "
                              "tests/web/test_widget_serving_run_one_plan.py"},
    (FLAGSHIP, 9): {"1,000-token": "the request's prompt, a given", "500-token": "the request's answer, a given",
                    "1,500 tokens": "the chat request's KV cache of steps 8 and 16, a given"},
    (FLAGSHIP, 11): {"2 TB": "NVIDIA's label for dgx-1's system memory, beside the engine's TiB"},
    (FLAGSHIP, 12): {"2,048-token": "the prompt of the comparison, a given", "2,048 tokens": "the same prompt",
                     "256 tokens": "tokens each weight read serves in the step's example, a given"},
    (FLAGSHIP, 13): {"45 %": "the published MFU range of large runs", "43 %": "Meta's published MFU range",
                     "40 %": "the MFU of the scenario, a given", "20 %": "an MFU given for comparison",
                     "100 %": "MFU at the peak, a given", "2,048-token": "the prompt of step 12, a given",
                     "50 %": "an MFU given for comparison"},
    (FLAGSHIP, 16): {"1,500 tokens": "the chat request's KV cache, a given", "1,000-token": "step 8's prompt",
                     "500-token": "step 8's answer"},
    (INFRASTRUCTURE, 2): {"80GB": "the label on the box", "80 GiB": "= gpu('h100').physical_memory_bytes | gib(0)"},
    (INFRASTRUCTURE, 21): {"30-day": "the month the slide's energy is counted over, a given"},
}


def _typed_figures(step: Step) -> list[str]:
    """Figures the author typed in a step: its summary, formula, prose and reveals, less expressions and blocks."""
    source = step.file.read_text(encoding="utf-8")
    head, body = source.split("---", 2)[1:]
    typed = " ".join(str(v) for k, v in yaml.safe_load(head).items() if k in ("summary", "formula"))
    typed += "\n" + re.sub(r"```(?!reveal).*?```", "", body, flags=re.S)
    return TYPED_FIGURE.findall(EXPRESSION.sub("«expression»", typed))


def test_every_figure_typed_in_prose_is_a_declared_given_or_equals_the_engine(lessons: list[Lesson]) -> None:
    evaluate = Evaluator().evaluate
    seen: set[tuple[str, int]] = set()
    for lesson in lessons:
        for number, step in enumerate(lesson.steps, 1):
            typed = set(_typed_figures(step))
            declared = TYPED_FIGURES.get((lesson.slug, number), {})
            assert typed == set(declared), (
                f"{lesson.slug} step {number} types {sorted(typed - set(declared))} (compute it with an expression, "
                f"or declare it in TYPED_FIGURES with what it is); declared but gone: {sorted(set(declared) - typed)}")
            for figure, what in declared.items():
                if what.startswith("= "):
                    assert evaluate(what[2:].replace("'", '"')) == figure, (lesson.slug, number, figure)
            seen.add((lesson.slug, number))
    assert set(TYPED_FIGURES) <= seen and len(seen) == 51  # the three lessons, every step


def test_every_step_renders_and_every_widget_computes_at_the_lessons_settings(
    client: TestClient, lessons: list[Lesson]
) -> None:
    rendered = 0
    for lesson in lessons:
        for number, step in enumerate(lesson.steps, 1):
            assert client.get(f"/lessons/{lesson.slug}/{number}").status_code == 200, (lesson.slug, number)
            for block in (b for b in step.blocks if b.kind == "widget"):
                page = _render(client, lesson.slug, number, block, {})
                assert "Not updated" not in page and "Must be" not in page, (lesson.slug, number, block.name)
                rendered += 1
    assert rendered >= 29  # every widget block of the three lessons


# Near misses, with no list of scenarios: every figure with a unit that a step shows, in its prose, its widgets at
# the lesson's settings and the dgx-1 panel beside them. Two figures of one unit within 12 % of each other that read
# differently ("12.0 GB" and "12.1 GB", "81 GPUs" and "82 GPUs", "4.79 ms" and "4.48 ms") are the signature of one
# fact computed two ways. Not counted as one: figures one sentence of prose sets side by side ("9.08 GB rather than
# the 8.03 GB"); two figures of one widget (its rows are scenarios side by side, from one engine result); a pair
# that a place shows both halves of (the widget that names 4.48 ms for decode and 4.49 ms for the prefill tells the
# learner which is which, so the prose's 4.48 ms beside it is accounted for); the GPU's memory budget, a given; two
# figures the author typed as givens (TYPED_FIGURES). An excess ("65.8 GB too much") is another quantity than a
# size. What is left is a contradiction to fix in the prose's expression or the widget, or two quantities a
# learner can tell apart, listed here with why.

NEAR_MISS = 0.12
SHOWN_UNITS = {  # how a unit is written -> the unit
    "GB": "GB", "GiB": "GiB", "TB": "TB", "TiB": "TiB", "MB": "MB", "TB/s": "TB/s", "GB/s": "GB/s", "Gb/s": "Gb/s",
    "ms": "ms", "µs": "µs", "s": "s", "seconds?": "s", "minutes?": "minutes", "hours?": "hours", "days?": "days",
    "years?": "years", "tokens?/s": "tokens/s", "tokens? (?:a|per) second": "tokens/s", "tokens?": "tokens",
    "GPUs?": "GPUs", "H100s?": "GPUs", "nodes?": "nodes", "kWh": "kWh", "MWh": "MWh", "kW": "kW", "MW": "MW",
    "W": "W", "%": "%", "TFLOPS": "TFLOPS", "PFLOPS": "PFLOPS", "FLOPs": "FLOPs", "sequences?": "sequences",
    "requests?": "requests", "bytes?": "bytes",
}
_UNIT = "|".join(sorted(SHOWN_UNITS, key=len, reverse=True))
SHOWN_FIGURE = re.compile(
    rf"(?<![\w.,\-/$])(?:\$(?P<dollars>\d[\d,]*(?:\.\d+)?)"
    rf"|(?P<number>\d[\d,]*(?:\.\d+)?)(?: × 10(?P<power>[⁰¹²³⁴⁵⁶⁷⁸⁹⁻]+))?(?:(?P<times>×)|[\s-]?(?P<unit>{_UNIT})))"
    r"(?![\w/])(?P<excess> too much| more than fits)?")
SENTENCE_END = re.compile(r"[.!?](?=\s|$)|¶")
# (lesson, step, figure, figure, why): two quantities a learner can tell apart. Keep it short.
NEAR_MISSES_ALLOWED: list[tuple[str, int, str, str, str]] = [
    # step 4 walks one 8B training job through its fixes, each sentence naming its GPUs, batch and checkpointing
    (FLAGSHIP, 4, "128.5 GB", "127.3 GB", "the training state alone; two sequences a GPU with ZeRO-3 over 8 GPUs"),
    (FLAGSHIP, 4, "44 GB", "46.1 GB", "one sequence's activations; two sequences with full checkpointing, in all"),
    (FLAGSHIP, 4, "46.1 GB", "51.7 GB", "two sequences a GPU, full checkpointing; one sequence, selective"),
    (FLAGSHIP, 4, "72.6 GB", "77.91 GB", "ZeRO-3 over all 8 GPUs; the plan's smallest fix, ZeRO-3 over 6"),
    (FLAGSHIP, 4, "85.6 GB", "77.91 GB", "two sequences with selective checkpointing; ZeRO-3 over 6 GPUs"),
    (FLAGSHIP, 4, "85.6 GB", "96.36 GB", "two sequences with selective checkpointing; the optimizer state, a part"),
    (FLAGSHIP, 8, "92 tokens per second", "96 tokens per second",
     "a user's speed at batch 32 with every cache full (the plan, step 16); in the run, caches still filling"),
    (FLAGSHIP, 12, "69×", "64×", "a prefill's lead over the CPUs; 256 decodes at once, the sentence after"),
    (FLAGSHIP, 13, "53 %", "50 %", "HFU at 40 % MFU; an MFU given to halve the peak's time"),
    (FLAGSHIP, 14, "73.8 GB", "72.7 GB", "the 70B tensor-parallel over 2 GPUs; its weights alone in fp8"),
    (FLAGSHIP, 18, "450 GB/s", "400 GB/s", "one H100's NVLink; all 8 of a node's network ports"),
    (FLAGSHIP, 18, "370 GB/s", "400 GB/s", "what a ring reaches of one H100's NVLink; a node's 8 network ports"),
    (INFRASTRUCTURE, 2, "141 GB", "128 GB", "the 70B's weights; the 8B's training state with Adam"),
]


class Shown:
    """A figure as a learner reads it: its words, unit, value and the sentence of its place it stands in."""

    def __init__(self, match: re.Match[str], sentence: int) -> None:
        self.words = match.group(0).strip()
        if match["dollars"]:
            self.unit, digits, power = "$", match["dollars"], 0
        else:
            self.unit = "×" if match["times"] else next(
                name for written, name in SHOWN_UNITS.items() if re.fullmatch(written, match["unit"]))
            digits, power = match["number"], int((match["power"] or "0").translate(str.maketrans(
                "⁰¹²³⁴⁵⁶⁷⁸⁹⁻", "0123456789-")))
        self.unit += " over" if match["excess"] else ""
        self.digits, self.power, self.sentence = Decimal(digits.replace(",", "")), power, sentence
        self.amount = float(self.digits.scaleb(power))

    def reads_as(self, other: Shown) -> bool:
        """The same figure by one rounding rule: the more precise one rounded half up to the other's decimals."""
        if self.unit != other.unit:
            return False
        if self.power != other.power:
            return self.amount == other.amount
        places = min(-self.digits.as_tuple().exponent, -other.digits.as_tuple().exponent)  # type: ignore[operator]
        step = Decimal(1).scaleb(-places)
        return self.digits.quantize(step, ROUND_HALF_UP) == other.digits.quantize(step, ROUND_HALF_UP)

    def near(self, other: Shown) -> bool:
        """Same unit, within 12 % of each other, and reading differently."""
        if self.unit != other.unit or self.amount <= 0 or other.amount <= 0 or self.reads_as(other):
            return False
        return abs(self.amount - other.amount) <= NEAR_MISS * max(self.amount, other.amount)


def _shown(html: str) -> list[Shown]:
    """Every figure with a unit in a place's text: charts' axes and a select's choices left out (scale and
    options, not facts); a paragraph, list item or table row ends a sentence."""
    html = re.sub(r"<(svg|select|script|template)\b.*?</\1>", " ", html, flags=re.S)
    text = _plain(re.sub(r"</(?:p|li|tr|td|th|dt|dd|h\d|caption|figcaption|div)>|<br\s*/?>", "¶ ", html))
    return [Shown(m, len(SENTENCE_END.findall(text, 0, m.start()))) for m in SHOWN_FIGURE.finditer(text)]


def _places(client: TestClient, slug: str, number: int, step: Step) -> dict[str, list[Shown]]:
    """A step's prose, each widget at the lesson's settings, and the dgx-1 panel beside them."""
    places = {"prose": _shown("".join(b.html for b in step.blocks if b.kind != "widget"))}
    for i, block in enumerate(b for b in step.blocks if b.kind == "widget"):
        params = {k: str(v).lower() if isinstance(v, bool) else str(v) for k, v in block.params.items()
                  if k != "predict"}
        r = client.get(f"/widgets/{block.name}?{urlencode(params)}&lesson={slug}&step={number}",
                       headers={"HX-Request": "true"})
        assert r.status_code in (200, 286), (slug, number, block.name)
        body, panel, rest = r.text.partition('<aside id="dgx-panel"')
        places[f"{block.name} #{i + 1}"] = _shown(body)
        if panel:
            places.setdefault("panel", _shown(panel + rest))
    return places


def _near_misses(places: dict[str, list[Shown]], givens: set[str]) -> list[tuple[str, Shown, str, Shown]]:
    budget = gb(node().gpu.memory_bytes, 0)  # the H100's 80 GB, and the box's "80GB"
    shown = {where: [f for f in figures if f.words not in (budget, budget.replace(" ", ""))]
             for where, figures in places.items()}

    def shows(where: str, figure: Shown) -> bool:
        return any(f.reads_as(figure) for f in shown[where])

    found = []
    for (wa, a), (wb, b) in combinations([(w, f) for w, figures in shown.items() for f in figures], 2):
        if not a.near(b) or (a.words in givens and b.words in givens):
            continue
        if wa == wb:
            if wa != "prose" or a.sentence == b.sentence:
                continue
            if any(shows(w, a) and shows(w, b) for w in shown if w != wa):
                continue
        elif shows(wa, b) or shows(wb, a):
            continue
        found.append((wa, a, wb, b))
    return found


def test_a_near_miss_is_two_readings_of_one_unit_within_12_percent() -> None:
    def one(text: str) -> Shown:
        figures = _shown(f"<p>{text}</p>")
        assert len(figures) == 1, text
        return figures[0]

    assert one("12.0 GB").near(one("12.1 GB")) and one("81 GPUs").near(one("82 GPUs"))
    assert one("4.79 ms").near(one("4.48 ms")) and one("3.4 × 10¹³ FLOPs").near(one("3.3 × 10¹³ FLOPs"))
    assert one("92 tokens per second").near(one("96 tokens/s")) and one("69×").near(one("64×"))
    assert not one("12.05 GB").near(one("12.1 GB")) and not one("116.2 tokens/s").near(one("116 tokens/s"))
    assert not one("40 %").near(one("50 %")) and not one("12.0 GB").near(one("12.1 GiB"))
    assert not one("145.8 GB").near(one("141.1 GB too much"))  # a size and an excess
    assert _shown("<p>dgx-1 nodes, H100, 8B, 2 × 8.03 B parameters, 500 × 8.61 ms</p>")[0].words == "8.61 ms"


def test_a_near_miss_counts_between_places_not_within_a_sentence_or_a_place_that_shows_both() -> None:
    def pairs(**places: str) -> list[tuple[str, str]]:
        shown = {where.replace("_", " "): _shown(html) for where, html in places.items()}
        return [(a.words, b.words) for _, a, _, b in _near_misses(shown, set())]

    # W17: the prose's 81 against the widget's 82, and 12.0 GB against 12.05 GB on the panel
    assert pairs(prose="<p>the memory of about 81 GPUs.</p>", cluster_scale="<p>the memory of 82 GPUs</p>") == [
        ("81 GPUs", "82 GPUs")]
    assert pairs(plan="<p>12.05 GB</p>", panel="<p>12.0 GB / 80 GB</p>") == [("12.05 GB", "12.0 GB")]
    assert pairs(prose="<p>It takes 4.79 ms.</p><p>Then 4.48 ms.</p>") == [("4.79 ms", "4.48 ms")]
    assert not pairs(prose="<p>9.08 GB rather than the 8.03 GB of every parameter.</p>")  # one sentence
    assert not pairs(prose="<p>It reads them in 4.48 ms.</p>",
                     cpu_vs_gpu="<p>The prefill: 4.49 ms.</p><p>A decode step: 4.48 ms.</p>")  # told apart there
    assert not pairs(prose="<p>It needs 79.9 GB.</p>", plan="<p>Fits in 80 GB</p>")  # the GPU's budget is a given


def test_no_step_shows_one_fact_as_two_figures_a_few_per_cent_apart(
    client: TestClient, lessons: list[Lesson]
) -> None:
    allowed = {(slug, number, *sorted((a, b))): why for slug, number, a, b, why in NEAR_MISSES_ALLOWED}
    met: set[tuple[str, ...]] = set()
    problems: dict[str, None] = {}
    figures = 0
    for lesson in lessons:
        for number, step in enumerate(lesson.steps, 1):
            places = _places(client, lesson.slug, number, step)
            figures += sum(len(f) for f in places.values())
            for wa, a, wb, b in _near_misses(places, set(TYPED_FIGURES.get((lesson.slug, number), {}))):
                key = (lesson.slug, number, *sorted((a.words, b.words)))
                if key in allowed:
                    met.add(key)
                else:
                    problems[f"{lesson.slug} step {number}: {wa} {a.words!r} against {wb} {b.words!r}"] = None
    assert not problems, "one fact computed two ways? fix the prose's expression or the widget:\n" + "\n".join(
        problems)
    assert set(allowed) == met, f"allowed near misses no longer met: {sorted(set(allowed) - met)}"
    assert figures > 1000  # the three lessons' prose, widgets and panels
