"""Bytes per parameter to train: right, wrong, at the tolerance edge, and the classic slips named."""

from __future__ import annotations

import math

import pytest

from app.drills.base import AnswerErrors, Question
from tests.unit.drills.drill_helpers import drill, find, right_answers

D = drill("bytes-per-parameter")
GB = 1e9


def llama_8b_with_adam() -> Question:
    return find(D, lambda q: q.parameters["model"] == "llama-3.1-8b" and q.parameters["optimizer"] == "adam")


def test_llama_8b_with_adam_is_16_bytes_128_gb_and_2_gpus() -> None:
    q = llama_8b_with_adam()
    fb = D.grade(q, {"bytes_per_parameter": "16", "total": "128.5 GB", "gpus": "2"})
    assert fb.correct and fb.score == 1
    # the expected value is shown to three decimals
    assert [r.expected for r in fb.parts] == [16, pytest.approx(128.484, abs=1e-3), 2]
    assert "8.03 B parameters × 16 bytes = 128.48 GB" in " ".join(fb.solution)
    assert "128.48 GB ÷ 80 GB = 1.61, so at least 2 GPUs" in " ".join(fb.solution)


@pytest.mark.parametrize(
    ("part", "typed", "mistake", "says"),
    [
        ("bytes_per_parameter", "2", "weights-only", "weights alone"),
        ("bytes_per_parameter", "12", "forgot-bf16-copies", "bf16 weights and bf16 gradients add"),
        ("bytes_per_parameter", "20", "fp32-instead-of-bf16", "fp32"),
        ("total", "16.06 GB", "weights-only", "weights alone"),
        ("total", "119.66", "gib-for-gb", "GiB"),
        ("total", "96.4 GB", "forgot-bf16-copies", "bf16"),
        ("gpus", "1", "rounded-down", "round up"),
    ],
)
def test_a_classic_slip_gets_its_own_message(part: str, typed: str, mistake: str, says: str) -> None:
    q = llama_8b_with_adam()
    answers = {**right_answers(D, q), part: typed}
    result = next(r for r in D.grade(q, answers).parts if r.id == part)
    assert not result.correct
    assert result.mistake == mistake
    assert says in result.message


def test_per_gpu_share_over_dgx1_given_for_the_total_is_named() -> None:
    q = find(D, lambda q: q.parameters["optimizer"] == "sgd-momentum" and q.parameters["parameters"] > 2e10)
    total = D.solve(q).expected["total"]
    assert isinstance(total, float)
    fb = D.grade(q, {**right_answers(D, q), "total": f"{total / 8 / GB} GB"})
    assert fb.parts[1].mistake == "per-gpu-for-total"


def test_the_total_is_right_within_2_percent_and_wrong_just_beyond() -> None:
    q = llama_8b_with_adam()
    total = D.solve(q).expected["total"]
    assert isinstance(total, float)
    inside = D.grade(q, {**right_answers(D, q), "total": f"{total * 1.0199 / GB} GB"})
    outside = D.grade(q, {**right_answers(D, q), "total": f"{total * 1.0201 / GB} GB"})
    assert inside.parts[1].correct and "within 2 %" in inside.parts[1].message
    assert not outside.parts[1].correct and "within 2 %" in outside.parts[1].message


def test_partial_credit_shows_per_part() -> None:
    q = llama_8b_with_adam()
    fb = D.grade(q, {"bytes_per_parameter": "16", "total": "128.5 GB", "gpus": "3"})
    assert [r.correct for r in fb.parts] == [True, True, False]
    assert fb.score == pytest.approx(2 / 3, rel=1e-9) and not fb.correct  # two parts of three: float rounding only


def test_a_mixture_of_experts_sized_by_active_parameters_is_named() -> None:
    q = find(D, lambda q: q.parameters["model"] == "mixtral-8x7b" and q.parameters["optimizer"] == "adam")
    fb = D.grade(q, {**right_answers(D, q), "total": "206.08 GB", "gpus": "3"})
    assert [r.mistake for r in fb.parts[1:]] == ["active-parameters", "active-parameters"]
    assert "every expert" in fb.parts[1].message


def test_unreadable_answers_are_refused_not_graded() -> None:
    q = llama_8b_with_adam()
    with pytest.raises(AnswerErrors) as caught:
        D.grade(q, {"bytes_per_parameter": "16", "total": "128 GB/s", "gpus": ""})
    assert set(caught.value.errors) == {"total", "gpus"}


@pytest.mark.parametrize("seed", range(40))
def test_the_fewest_gpus_never_hang_on_rounding_within_the_tolerance(seed: int) -> None:
    q = D.question(seed)
    total = D.solve(q).expected["total"]
    assert isinstance(total, float)
    assert math.ceil(total * 0.98 / 80e9) == math.ceil(total * 1.02 / 80e9)


def test_model_sizes_and_optimizers_cover_the_range() -> None:
    questions = [D.question(s) for s in range(300)]
    sizes = [q.parameters["parameters"] for q in questions]
    assert min(sizes) >= 0.5e9 and max(sizes) <= 410e9
    assert {q.parameters["optimizer"] for q in questions} == {"adam", "adam-fp32", "sgd-momentum", "adam-8bit"}
    assert {q.parameters["model"] == "custom" for q in questions} == {True, False}
