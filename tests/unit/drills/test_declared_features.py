"""What an author can now express in a declared drill, and what the self-check makes of it: named values (`let`,
and `answer` in a solution), free-text parts nobody grades, per-part weights, a description, an expression over
its budget (reported once, quickly), and a warning when too few different questions would reach a class."""

from __future__ import annotations

import random
import textwrap
import time

import pytest
import yaml

from app.drills import declarative, declared_check
from app.drills.base import AnswerErrors, typed_form
from app.lessons.expressions import Evaluator

EVALUATOR = Evaluator()

KV = """\
kind: numeric
title: Size the KV cache
description: The KV cache of a catalog model for a batch of conversations.
parameters:
  llm:
    choices: [llama-3.1-8b, llama-3.1-70b]
  batch:
    range: [1, 32]
let:
  per_token: 2 * model(llm).layers * model(llm).kv_heads * model(llm).head_dim * 2
  kv: per_token * 8192 * batch
prompt: "{{ model(llm).name }}: {{ batch | plural('conversation') }} of 8,192 tokens in bf16."
parts:
  - id: kv
    prompt: KV cache
    unit: GB
    tolerance: 0.02
    weight: 3
    answer: kv
  - id: fits
    prompt: Does it fit in one H100 beside the weights?
    kind: yes_no
    answer: kv + model(llm).parameters * 2 <= gpu("h100").memory_bytes
  - id: why
    prompt: Why does the cache grow with the batch?
    kind: text
solution:
  - "{{ per_token | num }} bytes a token × 8,192 tokens × {{ batch | plural('conversation') }} = {{ answer.kv | gb }}."
hints:
  - Every token of every conversation keeps its keys and values.
"""


def drill(body: str = KV) -> declarative.Declared:
    return declarative.Declared(name="t/kv", spec=declarative.parse(yaml.safe_load(body)), ex=EVALUATOR)


def check(body: str, seeds: int = 20) -> list[declared_check.Located]:
    source = textwrap.dedent(body)
    return declared_check.check(yaml.safe_load(source), source, EVALUATOR, seeds=seeds, name="t/kv")


def test_a_drill_with_lets_a_text_part_and_weights_passes_its_self_check() -> None:
    assert check(KV) == []


def test_lets_and_the_answer_are_names_the_solution_can_use() -> None:
    d = drill()
    q = d.question({"llm": "llama-3.1-8b", "batch": 2})
    solution = d.solve(q)
    assert solution.expected["kv"] == 2 * 32 * 8 * 128 * 2 * 8192 * 2
    assert solution.solution == ["131,072 bytes a token × 8,192 tokens × 2 conversations = 2.15 GB."]


def test_a_text_part_is_kept_as_typed_and_never_graded_and_weights_shape_the_score() -> None:
    built = declarative.build("t/kv", drill().spec, EVALUATOR)
    q = built.question(7)
    right = {p.id: typed_form(p, built.solve(q).expected[p.id]) for p in q.parts}
    feedback = built.grade(q, {**right, "fits": "no" if right["fits"] == "yes" else "yes", "why": "More tokens."})
    why = next(r for r in feedback.parts if r.id == "why")
    assert (why.graded, why.typed, why.message) == (False, "More tokens.", "Not graded: your instructor reads it.")
    assert feedback.score == pytest.approx(3 / 4) and not feedback.correct  # kv weighs 3, fits 1; why nothing
    assert (feedback.right_parts, feedback.graded_parts) == (1, 2)
    assert built.grade(q, {**right, "why": ""}).correct  # an empty explanation is allowed
    with pytest.raises(AnswerErrors):
        built.grade(q, {**right, "why": "x" * 2001})


def test_the_description_is_the_drills_own_and_none_is_left_empty() -> None:
    assert declarative.build("t/kv", drill().spec, EVALUATOR).description.startswith("The KV cache of a catalog")
    bare = KV.replace("description: The KV cache of a catalog model for a batch of conversations.\n", "")
    assert declarative.build("t/kv", drill(bare).spec, EVALUATOR).description == ""


@pytest.mark.parametrize(("old", "new", "says"), [
    ("    kind: text\n", "    kind: text\n    answer: kv\n", "a text part is not graded"),
    ("  - id: kv\n    prompt: KV cache\n    unit: GB\n    tolerance: 0.02\n    weight: 3\n    answer: kv\n",
     "  - id: kv\n    prompt: KV cache\n    unit: GB\n    tolerance: 0.02\n    weight: 3\n", "'answer' is missing"),
    ("  kv: per_token", "  batch: per_token", "let.batch: 'batch' is already a parameter"),
    ("  kv: per_token", "  answer: per_token", "'answer' is a name expressions already have"),
])
def test_the_new_keys_refuse_what_makes_no_sense(old: str, new: str, says: str) -> None:
    assert old in KV
    assert any(says in p for p in check(KV.replace(old, new))), check(KV.replace(old, new))


def test_a_solution_worked_from_the_answer_always_agrees_and_one_worked_apart_is_compared() -> None:
    one_conversation = KV.replace("    answer: kv\n", "    answer: per_token * 8192\n")
    assert check(one_conversation) == []  # `answer.kv` is the answer itself: nothing to compare
    found = check(one_conversation.replace("answer.kv | gb", "kv | gb"))
    assert len(found) == 1 and "parts.0.answer" in found[0] and "the worked solution's result is" in found[0]


def test_a_solution_without_the_answers_figure_is_told_what_to_show() -> None:
    line = next(x for x in KV.splitlines() if "bytes a token" in x)
    found = check(KV.replace(line, "  - Multiply it out."))
    assert len(found) == 1 and "never shows the graded answer" in found[0] and "{{ answer.kv | gb }}" in found[0]


def test_an_expression_over_budget_is_reported_once_and_the_check_stops_quickly() -> None:
    body = KV.replace("  kv: per_token * 8192 * batch", "  kv: per_token * 8192 * batch + 9 ** (9 ** 9)")
    start = time.process_time()
    found = check(body, seeds=200)
    assert time.process_time() - start < 2.0
    assert len(found) == 1 and "let.kv" in found[0] and "stopped:" in found[0], found


def test_a_question_whose_expression_overruns_is_not_drawn_again_and_again() -> None:
    d = drill(KV.replace("  kv: per_token * 8192 * batch",
                         "  kv: per_token * 8192 * batch + (9 ** (9 ** 9) if batch > 1 else 0)"))
    start = time.process_time()
    with pytest.raises(declarative.DeclaredDrillError) as caught:
        for seed in range(50):
            d.generate(random.Random(seed))
    assert caught.value.overrun and time.process_time() - start < 2.0


def test_too_few_different_questions_is_a_warning_at_the_parameters() -> None:
    small = KV.replace("    range: [1, 32]", "    choices: [1, 4, 16]")  # 2 models × 3 batches
    found = check(small)
    assert len(found) == 1 and found[0].warning
    assert "only 6 different questions: in a class of 30 some learners share one" in found[0]
    assert found[0].offset == small.splitlines().index("parameters:") + 1
