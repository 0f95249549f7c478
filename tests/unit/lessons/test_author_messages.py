"""The instructor walk's 14 deliberate errors (shared/reviews/instructor-walk-2026-12-04.md, Part 2), row by row,
on the walk's own lesson ("How big is a KV cache?"): each is one problem, at the line of the key that is wrong,
in an author's words: the names there are, the closest one to a misspelt name, how to quote, and never a pydantic
link, an internal class name or a learner's example."""

from __future__ import annotations

import shutil
from functools import partial
from pathlib import Path

import pytest

from app.lessons.blocks import validate_lesson_block
from app.lessons.loader import load_lessons
from app.lessons.model import Problem

AUTHORING = Path(__file__).resolve().parents[2] / "fixtures" / "authoring"
NOT_FOR_AUTHORS = ("pydantic", "https://", "app.", "PlanRequest", "Architecture", "such as 7e9", "has no attribute",
                   "Input should be", "Field required", "Extra inputs", "validation error", "[type=")
STEP1, STEP2, STEP3 = "01-what-the-cache-holds.md", "02-watch-it-grow.md", "03-drill-size-the-cache.md"
ANSWER = "answer: plan(model=llm, batch_size=batch, context_tokens=context, gpus=1).per_gpu.kv_cache"
ALL_HEADS = "2 * model(llm).layers * model(llm).heads * model(llm).head_dim * 2 * held * batch"


def saved(tmp_path: Path, file: str, old: str, new: str) -> tuple[list[Problem], Path, list[str]]:
    """The walk's lesson with one edit saved: its problems (warnings aside), the edited file and its lines."""
    root = tmp_path / "my-lessons"
    shutil.copytree(AUTHORING, root)
    path = root / "kv-cache-size" / file
    text = path.read_text()
    assert old in text, old
    path.write_text(text.replace(old, new, 1))
    _, problems = load_lessons([root], partial(validate_lesson_block, seeds=20), strict=False)
    return [p for p in problems if not p.warning], path, path.read_text().splitlines()


def line_of(lines: list[str], needle: str) -> int:
    return next(n for n, text in enumerate(lines, 1) if needle in text)


def only(problems: list[Problem]) -> Problem:
    assert len(problems) == 1, [str(p) for p in problems]
    for word in NOT_FOR_AUTHORS:
        assert word not in problems[0].message, (word, problems[0].message)
    return problems[0]


def test_the_walks_lesson_passes_check_as_written(tmp_path: Path) -> None:
    _, problems = load_lessons([AUTHORING], partial(validate_lesson_block, seeds=50), strict=False)
    assert problems == []


def test_a_list_left_open_is_one_problem_at_its_line(tmp_path: Path) -> None:
    problems, path, lines = saved(tmp_path, STEP2, "knobs: batch_size,context_tokens,model",
                                  "knobs: [batch_size, context_tokens")
    p = only(problems)
    assert (p.file, p.line) == (str(path), line_of(lines, "knobs:"))
    assert p.message.startswith("bad YAML in widget block: while parsing a flow sequence")


def test_an_unknown_widget_lists_the_widgets_there_are(tmp_path: Path) -> None:
    problems, _, lines = saved(tmp_path, STEP2, "```widget plan", "```widget kv-meter")
    p = only(problems)
    assert p.line == line_of(lines, "```widget kv-meter")
    assert p.message.startswith("unknown widget 'kv-meter'; the widgets: ") and ", plan, " in p.message


def test_a_bad_widget_input_is_at_its_own_line_in_an_authors_words(tmp_path: Path) -> None:
    problems, _, lines = saved(tmp_path, STEP2, "batch_size: 8", "batch_size: eight")
    p = only(problems)
    assert p.line == line_of(lines, "batch_size: eight")  # the key's own line, not the fence
    assert p.message == "widget plan: batch_size: 'eight' is not a whole number"


def test_a_misspelt_field_of_a_model_names_the_field_it_looks_like(tmp_path: Path) -> None:
    problems, _, lines = saved(tmp_path, STEP1, 'model("llama-3.1-8b").kv_heads }}', 'model("llama-3.1-8b").kv_head }}')
    p = only(problems)
    assert p.line == line_of(lines, ".kv_head }}")
    assert "model(…) has no field 'kv_head' (did you mean kv_heads?); its fields: id, name, layers" in p.message
    assert "sliding_window" in p.message


def test_a_value_the_engine_refuses_names_the_call_and_the_argument(tmp_path: Path) -> None:
    problems, _, _ = saved(tmp_path, STEP1, "context_tokens=8192, gpus=1)", "context_tokens=8192, gpus=3)")
    p = only(problems)
    assert "plan() gpus=3: Serving gives each GPU an equal share of every layer (tensor parallel)" in p.message


def test_a_missing_step_file_is_at_its_line_of_lesson_yaml(tmp_path: Path) -> None:
    problems, path, lines = saved(tmp_path, "lesson.yaml", "02-watch-it-grow.md", "02-watch-it-grows.md")
    p = only(problems)
    assert (p.file, p.line, p.message) == (str(path), line_of(lines, "02-watch-it-grows.md"),
                                           "step file '02-watch-it-grows.md' is missing")


def test_a_colon_in_an_unquoted_title_says_to_quote_it(tmp_path: Path) -> None:
    problems, _, _ = saved(tmp_path, STEP3, 'title: "Drill: size the cache"', "title: Drill: size the cache")
    p = only(problems)
    assert p.line == 2
    assert p.message == ("bad front matter: mapping values are not allowed here (a value that holds ': ' must be in "
                         'quotes: write title: "Drill: size the cache")')


def test_a_yaml_slip_in_a_drill_is_one_problem_not_a_cascade(tmp_path: Path) -> None:
    problems, _, _ = saved(tmp_path, STEP3, "choices: [1, 4, 16]", "choices: [1, 4, 16")
    p = only(problems)
    assert p.message.startswith("bad YAML in drill block") and "unknown drill" not in p.message


def test_a_misspelt_key_asks_did_you_mean(tmp_path: Path) -> None:
    problems, _, lines = saved(tmp_path, STEP3, "tolerance: 0.02", "tolerence: 0.02")
    p = only(problems)
    assert p.line == line_of(lines, "tolerence:")
    assert p.message.startswith("drill kv-size: parts.0: unknown key 'tolerence' (did you mean tolerance?); "
                                "the keys here: id, prompt, kind, unit, tolerance, weight")


def test_a_typo_in_a_mistakes_expression_is_at_that_mistake(tmp_path: Path) -> None:
    problems, _, lines = saved(tmp_path, STEP3, "model(llm).heads * model(llm).head_dim",
                               "model(llm).heads * model(llm).head_dims")
    p = only(problems)
    assert p.line == line_of(lines, "answer: >-")  # the mistake's answer key (the first folded answer)
    assert "parts.0.mistakes.0.answer" in p.message and "(did you mean head_dim?)" in p.message


def test_a_mistake_equal_to_the_answer_is_refused(tmp_path: Path) -> None:
    problems, _, _ = saved(tmp_path, STEP3, ANSWER, f"answer: {ALL_HEADS}")
    assert any("mistake 'all-heads' equals the right answer (within 2 %)" in p.message for p in problems), problems


def test_the_answer_shown_in_the_prompt_is_refused(tmp_path: Path) -> None:
    problems, _, _ = saved(tmp_path, STEP3, "How much memory does the KV cache take?",
                           "How much memory does the KV cache take ({{ (per_token * held * batch) | gb }})?")
    assert "the question or a hint shows this part's answer" in only(problems).message


def test_an_answer_without_the_factor_2_for_keys_and_values_fails_naming_the_difference(tmp_path: Path) -> None:
    half = "answer: model(llm).layers * model(llm).kv_heads * model(llm).head_dim * 2 * held * batch"
    problems, _, lines = saved(tmp_path, STEP3, ANSWER, half)
    p = only(problems)
    assert p.line == line_of(lines, "answer: model(llm).layers")
    assert "the worked solution's result is" in p.message and "half the solution's figure" in p.message, p.message


def test_an_answer_divided_by_10_to_the_9_once_too_often_fails_naming_the_difference(tmp_path: Path) -> None:
    problems, _, _ = saved(tmp_path, STEP3, ANSWER, ANSWER + " / 1e9")
    p = only(problems)
    assert "which a learner reads as '0.00 GB (0.00 GiB)'" in p.message
    assert "is it divided by 10⁹ once too often?" in p.message and "10⁻⁹ times the solution's figure" in p.message


@pytest.mark.parametrize(("file", "old", "new", "says"), [
    (STEP1, "title: What", "titel: What", "front matter: unknown key 'titel' (did you mean title?)"),
    (STEP1, "minutes: 1", "minutes: two", "front matter: minutes: 'two' is not a number"),
    ("lesson.yaml", "order: 60", "order: sixty", "order: 'sixty' is not a whole number"),
    (STEP2, "mode: serve", "mode: infer", "widget plan: mode: 'infer' is not one of 'serve' or 'train'"),
    (STEP2, "batch_size: 8", "batchsize: 8", "widget plan: unknown setting 'batchsize' (did you mean batch_size?)"),
    (STEP3, "```drill kv-size\nkind: numeric\n", "```drill bytes-per-paramter\n",
     "unknown drill 'bytes-per-paramter' (did you mean bytes-per-parameter?)"),
    (STEP3, "kind: numeric", "kind: numerical", "drill kv-size: kind: 'numerical' is not one of 'numeric' or 'choice'"),
    (STEP3, "  held:", "  model:", "let.model: 'model' is a name expressions already have"),
])
def test_other_slips_read_as_an_author_would_fix_them(tmp_path: Path, file: str, old: str, new: str, says: str) -> None:
    problems, _, _ = saved(tmp_path, file, old, new)
    assert says in only(problems).message or any(says in p.message for p in problems), [str(p) for p in problems]
