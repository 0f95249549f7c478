"""Will it fit?: the verdict, memory per GPU and the largest part, graded against the engine's plan."""

from __future__ import annotations

import pytest

from app.drills.base import Question
from app.engine.plan import PlanRequest, make_plan
from tests.unit.drills.drill_helpers import drill, find, right_answers

D = drill("will-it-fit")
GB = 1e9


def serving(model: str, **more: object) -> Question:
    def wanted(q: Question) -> bool:
        p = q.parameters
        return p["mode"] == "serve" and p["model"] == model and all(p.get(k) == v for k, v in more.items())

    return find(D, wanted)


def plan_of(q: Question):  # type: ignore[no-untyped-def]
    fields = {k: v for k, v in q.parameters.items() if k in PlanRequest.model_fields}
    return make_plan(PlanRequest(**fields))


def test_the_engines_answer_scores_full_marks() -> None:
    q = D.question(7)
    fb = D.grade(q, right_answers(D, q))
    assert fb.correct and fb.score == 1


def test_expected_values_are_the_engines_plan() -> None:
    q = D.question(11)
    plan = plan_of(q)
    expected = D.solve(q).expected
    assert expected["fits"] == ("yes" if plan.fits else "no")
    assert expected["per_gpu"] == plan.per_gpu.total
    parts = {c: getattr(plan.per_gpu, c) for c in ("weights", "kv_cache", "activations", "gradients", "optimizer")}
    assert expected["largest"] == max(parts, key=lambda c: parts[c])


def test_memory_per_gpu_is_right_within_3_percent_and_wrong_just_beyond() -> None:
    q = D.question(3)
    total = D.solve(q).expected["per_gpu"]
    assert isinstance(total, float)
    inside = D.grade(q, {**right_answers(D, q), "per_gpu": f"{total * 0.9701 / GB} GB"})
    outside = D.grade(q, {**right_answers(D, q), "per_gpu": f"{total * 0.9699 / GB} GB"})
    assert inside.parts[1].correct
    assert not outside.parts[1].correct


def test_kv_cache_from_all_heads_is_named() -> None:
    q = serving("llama-3.1-8b")
    wrong = next(v for v in D.solve(q).variants if v.id == "all-heads")
    assert isinstance(wrong.value, float)
    fb = D.grade(q, {**right_answers(D, q), "per_gpu": f"{wrong.value / GB} GB"})
    assert fb.parts[1].mistake == "all-heads"
    assert "all 32 attention heads" in fb.parts[1].message and "8" in fb.parts[1].message


def test_a_mixture_of_experts_sized_by_active_parameters_is_named() -> None:
    q = serving("mixtral-8x7b")
    wrong = next(v for v in D.solve(q).variants if v.id == "active-parameters")
    assert isinstance(wrong.value, float) and wrong.value < D.solve(q).expected["per_gpu"]  # type: ignore[operator]
    fb = D.grade(q, {**right_answers(D, q), "per_gpu": f"{wrong.value / GB} GB"})
    assert fb.parts[1].mistake == "active-parameters"
    assert "every expert" in fb.parts[1].message


def test_gib_given_where_gb_was_asked_is_named() -> None:
    q = find(D, lambda q: any(v.id == "gib-for-gb" for v in D.solve(q).variants))
    total = D.solve(q).expected["per_gpu"]
    assert isinstance(total, float)
    fb = D.grade(q, {**right_answers(D, q), "per_gpu": f"{total / 2**30:.2f}"})
    assert fb.parts[1].mistake == "gib-for-gb"
    right_in_gib = D.grade(q, {**right_answers(D, q), "per_gpu": f"{total / 2**30:.3f} GiB"})
    assert right_in_gib.parts[1].correct


def test_the_wrong_verdict_and_the_wrong_part_say_why() -> None:
    q = D.question(2)
    expected = D.solve(q).expected
    other = next(c.value for c in q.part("largest").choices if c.value != expected["largest"])
    fb = D.grade(q, {**right_answers(D, q), "fits": "no" if expected["fits"] == "yes" else "yes", "largest": other})
    assert not fb.parts[0].correct and "of its 80 GB" in fb.parts[0].message
    assert not fb.parts[2].correct and fb.parts[2].mistake == f"not-{other}"


def test_a_plan_that_does_not_fit_shows_the_smallest_change_that_fits() -> None:
    q = find(D, lambda q: D.solve(q).expected["fits"] == "no")
    solution = D.solve(q)
    assert solution.fixes and solution.fixes[0] == plan_of(q).explanation[
        next(i for i, s in enumerate(plan_of(q).explanation) if s.startswith("Smallest change"))
    ].removeprefix("Smallest change that fits: ")
    assert [r.component for r in solution.rows][0] == "weights" and solution.total == plan_of(q).per_gpu.total


def test_about_half_the_questions_fit_and_none_sits_on_the_edge() -> None:
    questions = [D.question(s) for s in range(200)]
    fits = [D.solve(q).expected["fits"] == "yes" for q in questions]
    assert 0.35 < sum(fits) / len(fits) < 0.65
    for q in questions:
        total = D.solve(q).expected["per_gpu"]
        assert isinstance(total, float)
        assert abs(total - 80e9) > 0.06 * 80e9
    assert {q.parameters["mode"] for q in questions} == {"serve", "train"}


@pytest.mark.parametrize("seed", range(30))
def test_hints_never_give_the_answer_away(seed: int) -> None:
    q = D.question(seed)
    total = D.solve(q).expected["per_gpu"]
    assert isinstance(total, float)
    text = " ".join(D.solve(q).hints)
    assert f"{total / GB:.2f}" not in text and f"{total / GB:.1f} GB" not in text
