"""One set of numbers: every serving figure in prose says the context it assumes, and the same scenario gives the
same figure on every step that quotes it, widgets included (issue 14, item 3)."""

from __future__ import annotations

import ast
import html as markup
import re
from collections.abc import Iterator
from decimal import ROUND_HALF_UP, Decimal
from pathlib import Path
from urllib.parse import parse_qsl, urlencode

import pytest
import yaml
from fastapi.testclient import TestClient

from app.engine.plan import PlanRequest, make_plan
from app.engine.text import num
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
