"""A plan that cannot run shows no time or speed as if it ran: every widget that reports one says first that the
plan cannot run, and any time or speed it still shows comes after that, labelled arithmetic only. A plan that can
run is not refused. Swept over every model and over GPU counts, precisions and workloads, including models that
fit nowhere; whether a plan runs is the engine's verdict, asked here directly."""

from __future__ import annotations

import html
import re
from collections.abc import Callable, Iterator
from itertools import product
from urllib.parse import urlencode

import pytest
from fastapi.testclient import TestClient

from app.engine.chips import chip_specs
from app.engine.decode import decode_comparison
from app.engine.errors import DoesNotFit
from app.engine.memory import weight_bytes
from app.engine.models import CATALOG, get_model
from app.engine.plan import PlanRequest, make_plan
from app.engine.sizing import SEQUENCE_TOKENS, cluster_scale
from app.engine.training_run import RUN_CHECKPOINTING, RUN_SEQUENCE_TOKENS, TrainingRun, simulate_training
from app.engine.workload import MAX_GPUS

MODELS = list(CATALOG)
NUMBER = r"(?<![\w.])\d[\d,]*(?:\.\d+)?"  # a number, not the end of a name such as H100s
TIME_OR_SPEED = re.compile(
    rf"{NUMBER}\s?(?:µs|ms|s|seconds?|minutes?|hours?|days?|years?)\b"
    rf"|{NUMBER}\s?tokens(?:/s| a second| per second)|{NUMBER}×\s(?:sooner|faster)"
)
ARITHMETIC = "arithmetic only"


def _cluster_scale_runs(q: dict[str, object]) -> bool:
    arch = get_model(str(q["model"]))
    return cluster_scale(arch, float(str(q["tokens"])), 0.41, int(str(q["gpus"])), 90).holds_state


def _compute_time_runs(q: dict[str, object]) -> bool:
    request = PlanRequest(
        model=str(q["model"]), mode="train", gpus=min(int(str(q["gpus"])), MAX_GPUS), sharding="zero3",
        context_tokens=SEQUENCE_TOKENS, activation_checkpointing="full",
    )
    return make_plan(request).fits


def _decode_speed_runs(q: dict[str, object]) -> bool:
    d = decode_comparison(get_model(str(q["model"])), str(q["precision"]), str(q["gpu"]), int(str(q["context_tokens"])))
    return d.chosen.fits


def _cpu_vs_gpu_runs(q: dict[str, object]) -> bool:
    """The headline is one H100's time: it runs only if the weights fit in one H100."""
    return weight_bytes(get_model(str(q["model"])), "bf16") <= chip_specs().gpu_memory_bytes


def _training_run_runs(q: dict[str, object]) -> bool:
    run = TrainingRun(
        model=str(q["model"]), gpus=int(str(q["gpus"])), sharding="zero3", batch_size=1,
        context_tokens=RUN_SEQUENCE_TOKENS, activation_checkpointing=RUN_CHECKPOINTING,
    )
    try:
        simulate_training(run, 0, 0)
    except DoesNotFit:
        return False
    return True


SWEEPS: dict[str, tuple[dict[str, list[object]], Callable[[dict[str, object]], bool]]] = {
    "cluster-scale": ({"model": MODELS, "gpus": [1, 8, 100, 229, 16_384], "tokens": ["1e9", "15.6e12"]},
                      _cluster_scale_runs),
    "compute-time": ({"model": MODELS, "gpus": [1, 8, 64, 1024]}, _compute_time_runs),
    "decode-speed": ({"model": MODELS, "precision": ["bf16", "fp8", "int4"], "gpu": ["a100", "h100", "h200"],
                      "context_tokens": [8192, 131_072]}, _decode_speed_runs),
    "cpu-vs-gpu": ({"view": ["timing"], "model": MODELS, "workload": ["prefill", "decode", "train-step"]},
                   _cpu_vs_gpu_runs),
    "training-run": ({"model": MODELS, "gpus": [1, 8, 64]}, _training_run_runs),
}


def cases() -> Iterator[tuple[str, dict[str, object]]]:
    for name, (grid, _) in SWEEPS.items():
        for values in product(*grid.values()):
            yield name, dict(zip(grid, values, strict=True))


def text_of(fragment: str) -> str:
    """What a learner reads, tags gone, entities decoded, white space collapsed."""
    return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", fragment)).split())


def result_text(page: str) -> tuple[str, str]:
    """The widget's result as read (controls, hidden fields and screen-reader-only copies left out), and the
    text of the element that refuses, if any."""
    start = page.index('class="widget-result')
    end = re.search(r"</section>|<[^>]*hx-swap-oob", page[start:])  # the page's section, or a fragment's oob parts
    block = page[start : start + end.start() if end else len(page)]
    controls = r'<div class="live-controls".*?</div>|<(button|label|select|noscript)\b.*?</\1>'
    block = re.sub(controls, " ", block, flags=re.S)
    block = re.sub(r'<p class="visually-hidden"[^>]*>.*?</p>', " ", block, flags=re.S)
    refusal = re.search(r"<(\w+)[^>]*\bdata-refusal\b[^>]*>(.*?)</\1>", block, re.S)
    return text_of(block[block.index(">") + 1 :]), text_of(refusal[2]) if refusal else ""


def announced(page: str) -> str:
    """What the widget's live region says."""
    found = re.search(r'<p[^>]*id="w\d+-announce"[^>]*>(.*?)</p>', page, re.S)
    return text_of(found[1]) if found else ""


@pytest.fixture(scope="module")
def rendered(tmp_path_factory: pytest.TempPathFactory) -> list[tuple[str, dict[str, object], bool, str, str]]:
    """Every case of the sweep: the widget, its inputs, the engine's verdict, the result text and the refusal."""
    from app.main import create_app
    from tests.conftest import make_settings

    out = []
    with TestClient(create_app(make_settings(tmp_path_factory.mktemp("cannot-run")))) as client:
        for name, query in cases():
            r = client.get(f"/widgets/{name}?{urlencode(query)}", headers={"HX-Request": "true"})
            assert r.status_code in (200, 286), (name, query, r.status_code)  # 286: a live run not polling
            text, refusal = result_text(r.text)
            out.append((name, query, SWEEPS[name][1](query), text, refusal + " | " + announced(r.text)))
    return out


def test_the_sweep_meets_plans_that_run_and_plans_that_cannot(
    rendered: list[tuple[str, dict[str, object], bool, str, str]],
) -> None:
    for name in SWEEPS:
        verdicts = {runs for widget, _, runs, _, _ in rendered if widget == name}
        assert verdicts == {True, False}, name


def test_a_plan_that_cannot_run_says_so_first(rendered: list[tuple[str, dict[str, object], bool, str, str]]) -> None:
    for name, query, runs, text, said in rendered:
        refusal = said.split(" | ")[0]
        if runs:
            assert not refusal, (name, query, refusal)
            continue
        assert refusal and text.startswith(refusal), (name, query, text[:300])


def test_any_time_or_speed_after_a_refusal_is_labelled_arithmetic_only(
    rendered: list[tuple[str, dict[str, object], bool, str, str]],
) -> None:
    for name, query, runs, text, _ in rendered:
        first = TIME_OR_SPEED.search(text)
        if runs or first is None:
            continue
        assert ARITHMETIC in text[: first.start()].lower(), (name, query, text[: first.end()])


def test_what_a_screen_reader_hears_of_a_plan_that_cannot_run_is_no_speed(
    rendered: list[tuple[str, dict[str, object], bool, str, str]],
) -> None:
    for name, query, runs, _, said in rendered:
        heard = said.split(" | ")[1]
        if not runs:
            assert not TIME_OR_SPEED.search(heard), (name, query, heard)
