"""Will it fit? grades only what the question gives and the lessons teach (issue 27, W32).

For every generated question (a sweep over seeds), a careful learner who reads the prompt and the givens and
applies the step's own formulas (weights: parameters × bytes, the kept-bf16 parts and the int4 scales as the
givens state them; KV cache: 2 × layers × KV heads × head dimension × 2 bytes × tokens × sequences; training state:
16 bytes a parameter, split as the sharding given says; the activations, loss head and runtime as given) arrives
at a per-GPU total the drill marks right, and at the drill's yes/no. Nothing the grading uses is missing from the
question: a sliding window, which no step teaches, never decides an answer."""

from __future__ import annotations

import re

import pytest

from app.drills.base import Question
from app.engine.models import CATALOG
from tests.unit.drills.drill_helpers import drill

D = drill("will-it-fit")
SEEDS = range(400)
GB = 1e9
CAPACITY = 80 * GB


def _given(q: Question, label: str) -> str:
    return next(g.text for g in q.givens if g.label == label)


def _numbers(text: str) -> list[float]:
    return [float(n.replace(",", "")) for n in re.findall(r"\d[\d,]*(?:\.\d+)?", text)]


def _gb(text: str) -> float:
    found = re.search(r"([\d,.]+) GB", text)
    assert found, text
    return float(found.group(1).replace(",", "")) * GB


def _model(q: Question) -> tuple[float, int, int, int]:
    """Parameters, layers, KV heads and head dimension, read from the Model given."""
    text = _given(q, "Model")
    params = _numbers(text.split(":", 1)[1])[0]
    shape = text.rsplit(";", 1)[1]
    layers = int(re.search(r"(\d+) layers", shape).group(1))  # type: ignore[union-attr]
    kv_heads = int(re.search(r"(\d+) KV heads", shape).group(1))  # type: ignore[union-attr]
    head_dim = int(re.search(r"head dimension (\d+)", shape).group(1))  # type: ignore[union-attr]
    return params, layers, kv_heads, head_dim


def _serve_total(q: Question) -> float:
    params, layers, kv_heads, head_dim = _model(q)
    prompt = q.prompt
    gpus = int(re.search(r"on (\d+) H100", prompt).group(1))  # type: ignore[union-attr]
    many = re.search(r"([\d,]+) sequences at once, each keeping ([\d,]+) tokens", prompt)
    one = re.search(r"one sequence at a time, keeping ([\d,]+) tokens", prompt)
    batch, tokens = (_numbers(many.group(0)) if many else (1, _numbers(one.group(1))[0]))  # type: ignore[union-attr]
    weights_text = _given(q, "Weights")
    per = float(re.search(r": ([\d.]+) bytes? a parameter", weights_text).group(1))  # type: ignore[union-attr]
    kept = re.search(r"for the ([\d,]+) in the layers' matrices; the other ([\d,]+)", weights_text)
    if kept:
        matrices, other = _numbers(kept.group(0))
        weights = matrices * per + other * 2
        group = re.search(r"one fp16 scale and one 4-bit zero point per (\d+) weights", weights_text)
        if group:
            weights += matrices / int(group.group(1)) * (2 + 0.5)
    else:
        weights = params * per
    kv = 2 * layers * kv_heads * head_dim * 2 * tokens * batch
    return (weights + kv) / gpus + _gb(_given(q, "Prefill workspace (activations)")) + _gb(_given(q, "Runtime"))


def _train_total(q: Question) -> float:
    params = _model(q)[0]
    gpus = int(re.search(r"on (\d+) H100", q.prompt).group(1))  # type: ignore[union-attr]
    weights, gradients, optimizer = _numbers(_given(q, "Training state").split(":", 1)[1])[:3]
    sharding = _given(q, "Sharding")
    split = {"weights": "weights" in sharding.split(":")[1] if "ZeRO" in sharding else False,
             "gradients": "gradients" in sharding.split(":")[1] if "ZeRO" in sharding else False,
             "optimizer": "ZeRO" in sharding}
    state = sum(b * params / (gpus if split[part] else 1)
                for part, b in (("weights", weights), ("gradients", gradients), ("optimizer", optimizer)))
    return state + sum(_gb(_given(q, label)) for label in ("Activations", "Loss head", "Runtime"))


def _from_givens(q: Question) -> float:
    return _serve_total(q) if q.parameters["mode"] == "serve" else _train_total(q)


@pytest.mark.parametrize("seed", SEEDS)
def test_the_givens_and_the_taught_formulas_reach_the_drills_answer(seed: int) -> None:
    q = D.question(seed)
    expected = D.solve(q).expected
    total = _from_givens(q)
    mine = {"fits": "yes" if total <= CAPACITY else "no", "per_gpu": f"{total / GB:.2f} GB",
            "largest": expected["largest"]}
    feedback = D.grade(q, mine)
    assert feedback.parts[0].correct, (q.prompt, total / GB, expected)
    assert feedback.parts[1].correct, (q.prompt, total / GB, expected["per_gpu"])


def test_windowed_models_are_asked_about_but_never_past_their_window() -> None:
    windowed = {m for m, arch in CATALOG.items() if arch.sliding_window is not None}
    assert windowed, "the catalog has a model with a sliding window (Mistral 7B)"
    asked = [q for q in (D.question(s) for s in range(2000)) if q.parameters["model"] in windowed]
    assert asked, "a windowed model still appears in the drill"
    for q in asked:
        window = CATALOG[q.parameters["model"]].sliding_window
        assert q.parameters["mode"] == "train" or q.parameters["context_tokens"] <= (window or 0), q.prompt
        shown = " ".join([q.prompt, *(g.text for g in q.givens), *D.solve(q).solution, *D.solve(q).hints])
        assert "window" not in shown.lower(), shown
