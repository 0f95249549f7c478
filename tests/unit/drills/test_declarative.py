"""Drills declared in a lesson file: drawn, graded and self-checked by the same machinery as the Python drills.

The worked example (tests/fixtures/declared) is the bytes-per-parameter drill's simplest form; it is graded
here against the Python drill itself."""

from __future__ import annotations

import math
import random
import textwrap
from functools import cache
from pathlib import Path

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from app.drills import declarative, declared_check
from app.drills.base import AnswerErrors, Drill, Question, typed_form
from app.drills.seeds import MAX_SEED
from app.lessons.blocks import validate_lesson_block
from app.lessons.expressions import Evaluator
from app.lessons.loader import load_lessons
from app.pages.lesson_drills import lesson_drills
from tests.unit.drills.drill_helpers import drill, find, right_answers

ROOT = Path(__file__).resolve().parents[3]
DECLARED = ROOT / "tests" / "fixtures" / "declared"
EXAMPLE = "training-state/bytes-per-parameter"
EVALUATOR = Evaluator()


@cache
def example() -> Drill:
    lessons, problems = load_lessons(DECLARED, validate_lesson_block)
    assert [p for p in problems if not p.warning] == []  # a warning only: it draws from three catalog models
    return lesson_drills(lessons)[EXAMPLE]


def check(body: str, seeds: int = 20) -> list[declared_check.Located]:
    """The self-check's problems with a drill block's YAML body (its warnings left out)."""
    source = textwrap.dedent(body)
    return [p for p in declared_check.check(yaml.safe_load(source), source, EVALUATOR, seeds=seeds) if not p.warning]


GOOD = """\
kind: numeric
title: Weights
parameters:
  llm:
    choices: [llama-3.1-8b, llama-3.1-70b]
  precision:
    choices: [bf16, fp8]
prompt: Serve {{ model(llm).name }} in {{ precision }}.
parts:
  - id: weights
    prompt: Memory for the weights
    unit: GB
    tolerance: 0.02
    answer: model(llm).parameters * bytes_per_parameter(precision)
    mistakes:
      - id: bits-for-bytes
        answer: model(llm).parameters * bytes_per_parameter(precision) * 8
        message: That counts bits, not bytes.
solution:
  - "{{ (model(llm).parameters * bytes_per_parameter(precision)) | gb }}"
hints:
  - Multiply the parameters by the bytes of the precision.
"""


def test_a_sound_block_passes_its_self_check() -> None:
    assert check(GOOD) == []


def test_the_worked_example_passes_its_self_check_over_many_seeds() -> None:
    lessons, _ = load_lessons(DECLARED)
    block = next(b for s in lessons[0].steps for b in s.blocks if b.declared)
    found = declared_check.check(block.params, block.source, EVALUATOR, seeds=300)
    assert [p for p in found if not p.warning] == []


def test_require_keeps_only_models_whose_gpu_count_is_clear_of_the_tolerance() -> None:
    d = example()
    drawn = {d.question(seed).parameters["llm"] for seed in range(300)}
    # 70B: 1,129 GB is 14.1 GPUs' worth and 2 % less is 13.8: 14 or 15 GPUs within the tolerance
    assert drawn == {"llama-3.1-8b", "mistral-7b", "mixtral-8x7b"}


@pytest.mark.parametrize("model", ["llama-3.1-8b", "mistral-7b", "mixtral-8x7b"])
def test_the_example_expects_what_the_python_drill_expects_and_names_the_same_mistakes(model: str) -> None:
    ported, python = example(), drill("bytes-per-parameter")
    theirs = find(python, lambda q: q.parameters["optimizer"] == "adam" and q.parameters["model"] == model, 5000)
    mine = next(q for q in (ported.question(s) for s in range(200)) if q.parameters["llm"] == model)
    want, got = python.solve(theirs), ported.solve(mine)
    assert got.expected["bytes_per_parameter"] == want.expected["bytes_per_parameter"]
    assert got.expected["total"] == pytest.approx(want.expected["total"], rel=1e-12)  # float sums in another order
    assert got.expected["gpus"] == want.expected["gpus"]
    ported_ids = {(v.part, v.id) for v in got.variants}
    shared = [v for v in want.variants if (v.part, v.id) in ported_ids]
    assert len(shared) >= 5
    for v in shared:  # the same wrong value, typed, is the same named mistake in both
        typed = {**right_answers(ported, mine), v.part: typed_form(mine.part(v.part), v.value)}
        result = next(r for r in ported.grade(mine, typed).parts if r.id == v.part)
        assert (result.correct, result.mistake) == (False, v.id)


def test_the_example_refuses_unreadable_answers_without_grading_them() -> None:
    d = example()
    q = d.question(3)
    right = right_answers(d, q)
    for bad in ({"total": "128 GB/s"}, {"total": "128,5"}, {"gpus": "two cats"}, {"bytes_per_parameter": "16 GB"}):
        with pytest.raises(AnswerErrors) as caught:
            d.grade(q, {**right, **bad})
        assert set(caught.value.errors) == set(bad)


def test_sizes_are_read_in_any_unit_a_learner_types() -> None:
    d = example()
    q = d.question(5)
    total = float(d.solve(q).expected["total"])
    for typed in (f"{total / 1e9:.3f} GB", f"{total:.6e} bytes", f"{total / 2**30:.3f} GiB", f"{total / 1e6:,.0f} MB"):
        result = next(r for r in d.grade(q, {**right_answers(d, q), "total": typed}).parts if r.id == "total")
        assert result.correct, typed


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(min_value=0, max_value=MAX_SEED))
def test_any_seed_draws_a_question_whose_every_expression_evaluates(seed: int) -> None:
    d = example()
    q = d.question(seed)
    solution = d.solve(q)  # every answer, mistake, solution line and hint evaluated for this draw
    assert q.parameters["llm"] in ("llama-3.1-8b", "mistral-7b", "mixtral-8x7b")
    assert all(isinstance(v, float) and math.isfinite(v) and v > 0 for v in solution.expected.values())
    assert len(solution.solution) == 3 and "{{" not in " ".join(solution.solution + solution.hints + [q.prompt])
    assert d.grade(q, right_answers(d, q)).correct
    assert d.question(seed) == q  # the same seed, the same question


@settings(max_examples=80, deadline=None)
@given(seed=st.integers(min_value=0, max_value=MAX_SEED))
def test_ranges_draw_within_their_ends_whole_or_to_the_digits_asked(seed: int) -> None:
    spec = declarative.parse(yaml.safe_load("""
kind: numeric
title: t
parameters:
  gpus: {range: [1, 8]}
  size: {range: [5.0e+8, 4.0e+11], log: true, digits: 2}
  mfu: {range: [0.3, 0.6]}
prompt: p
parts: [{id: a, prompt: a, unit: GPUs, answer: gpus}]
solution: [s]
hints: [h]
"""))
    values = declarative.Declared(name="t", spec=spec, ex=EVALUATOR).draw(random.Random(seed))
    assert isinstance(values["gpus"], int) and 1 <= values["gpus"] <= 8
    assert 4.9e8 <= values["size"] <= 4.0e11 and float(f"{values['size']:.2g}") == values["size"]
    assert 0.3 <= values["mfu"] <= 0.6


def problems_at(body: str) -> dict[int, str]:
    return {p.offset: str(p) for p in check(body)}


def test_an_expression_that_fails_for_some_draw_is_reported_at_its_line_with_those_parameters() -> None:
    body = GOOD.replace("  precision:\n    choices: [bf16, fp8]", "  precision:\n    choices: [bf16, fp9]")
    found = problems_at(body)
    assert list(found) == [14], found  # the answer's line
    assert "fp9" in found[14] and "parts.0.answer" in found[14]


def test_a_mistake_equal_to_the_answer_is_reported_at_the_mistake() -> None:
    body = GOOD.replace("* bytes_per_parameter(precision) * 8", "* bytes_per_parameter(precision) * 1.01")
    found = problems_at(body)
    assert list(found) == [17] and "equals the right answer" in found[17], found


def test_a_mistake_that_does_not_apply_gives_none_and_is_not_a_problem() -> None:
    body = GOOD.replace("* bytes_per_parameter(precision) * 8", "* 8 if precision == 'bf16' else none")
    assert check(body) == []


@pytest.mark.parametrize(("old", "new", "line", "says"), [
    ("answer: model(llm).parameters * bytes_per_parameter(precision)\n", "answer: model(llm).name\n", 14,
     "not a number"),
    ("kind: numeric\n", "kind: numeric\ncolour: blue\n", 2, "unknown key 'colour'"),
    ("  llm:\n", "  model:\n", 4, "'model' is a name expressions already have"),
    ("prompt: Serve", "require: llm == 'gpt-5'\nprompt: Serve", 8, "no draw in 100 meets require"),
    ("prompt: Serve {{ model(llm).name }}", "prompt: Serve {{ model(llm).name }} ({{ (model(llm).parameters * "
     "bytes_per_parameter(precision)) | gb }})", 14, "shows this part's answer"),
    ("hints:\n  - Multiply the parameters by the bytes of the precision.\n", "hints: []\n", 21, "hints"),
    ("    unit: GB\n", "    unit: GW\n    kind: size\n", 10, "a size needs a unit"),
    ("    tolerance: 0.02\n", "    tolerance: 2\n", 13, "2 is above the most allowed, 0.5"),
])
def test_each_kind_of_problem_is_reported_at_the_line_of_its_key(old: str, new: str, line: int, says: str) -> None:
    assert old in GOOD
    found = problems_at(GOOD.replace(old, new))
    assert line in found and says in found[line], found


def test_the_loader_places_a_problem_at_its_line_in_the_step_file(tmp_path: Path) -> None:
    folder = tmp_path / "one"
    folder.mkdir()
    (folder / "lesson.yaml").write_text("slug: one\ntitle: One\nsummary: s.\nminutes: 1\nsections:\n"
                                        "  - title: A\n    steps: [01.md]\n")
    body = GOOD.replace("choices: [bf16, fp8]", "choices: [bf16, fp9]")
    (folder / "01.md").write_text(f"---\ntitle: T\nsummary: S.\n---\n\nProse.\n\n```drill weights\n{body}```\n")
    _, problems = load_lessons(tmp_path, validate_lesson_block, strict=False)
    lines = (folder / "01.md").read_text().splitlines()
    assert [p.line for p in problems] == [lines.index("    answer: model(llm).parameters * bytes_per_parameter("
                                                      "precision)") + 1]
    assert problems[0].file == str(folder / "01.md")


CHOICE = """\
kind: choice
title: Which is bigger?
parameters:
  batch:
    choices: [1, 32]
prompt: A batch of {{ batch }} conversations of 32,768 tokens on Llama 3.1 8B.
parts:
  - id: larger
    prompt: Which takes more memory on each GPU?
    choices:
      - {value: weights, label: The weights, message: The KV cache grows with the batch and here it is larger.}
      - {value: kv-cache, label: The KV cache, message: At this batch the weights still take more.}
    answer: >-
      "kv-cache" if plan(model="llama-3.1-8b", batch_size=batch, context_tokens=32768).per_gpu.kv_cache
      > plan(model="llama-3.1-8b", batch_size=batch, context_tokens=32768).per_gpu.weights else "weights"
solution: ["{{ plan(model='llama-3.1-8b', batch_size=batch, context_tokens=32768).per_gpu.kv_cache | gb }}"]
hints: [The KV cache grows with batch × context.]
"""


def test_a_choice_drill_names_the_principle_of_the_wrong_option_picked() -> None:
    assert check(CHOICE) == []
    d = declarative.build("x/which", declarative.parse(yaml.safe_load(CHOICE)), EVALUATOR)
    answers = {}
    for seed in range(40):
        q: Question = d.question(seed)
        right = d.solve(q).expected["larger"]
        wrong = "weights" if right == "kv-cache" else "kv-cache"
        result = d.grade(q, {"larger": wrong}).parts[0]
        answers[q.parameters["batch"]] = right
        assert not result.correct and result.mistake == wrong and result.message
        assert d.grade(q, {"larger": "The " + ("KV cache" if right == "kv-cache" else "weights")}).correct
    assert answers == {1: "weights", 32: "kv-cache"}


def test_a_choice_answer_that_is_not_listed_is_reported() -> None:
    found = problems_at(CHOICE.replace('else "weights"', 'else "activations"'))
    assert 13 in found and "not one of the choices" in found[13], found


def test_a_yes_no_part_offers_yes_and_no_and_takes_a_true_or_false_answer() -> None:
    body = GOOD.replace("solution:", """  - id: fits
    prompt: Do the weights alone fit in one H100?
    kind: yes_no
    answer: model(llm).parameters * bytes_per_parameter(precision) <= gpu("h100").memory_bytes
solution:""")
    assert check(body) == []
    d = declarative.build("x/fits", declarative.parse(yaml.safe_load(body)), EVALUATOR)
    verdicts = {}
    for seed in range(30):
        q = d.question(seed)
        assert [(c.value, c.label) for c in q.part("fits").choices] == [("yes", "Yes"), ("no", "No")]
        verdicts[(q.parameters["llm"], q.parameters["precision"])] = d.solve(q).expected["fits"]
    assert verdicts[("llama-3.1-70b", "bf16")] == "no" and verdicts[("llama-3.1-8b", "bf16")] == "yes"


def test_a_draw_whose_answer_cannot_be_computed_is_passed_over_not_served() -> None:
    """`check` reports such a draw; a learner who meets one anyway gets the next draw, never a server error."""
    body = GOOD.replace("choices: [bf16, fp8]", "choices: [bf16, fp8]\n  x:\n    choices: [0, 2]").replace(
        "answer: model(llm).parameters * bytes_per_parameter(precision)\n",
        "answer: model(llm).parameters * bytes_per_parameter(precision) * 2 / x\n", 1)
    d = declarative.build("t/weights", declarative.parse(yaml.safe_load(body)), EVALUATOR)
    drawn = [d.question(seed).parameters["x"] for seed in range(40)]
    assert set(drawn) == {2}  # x = 0 divides by zero in the answer: never asked
    assert check(body)  # and the self-check still names the failing draw
