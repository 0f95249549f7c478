"""Lesson expressions have a budget: every reproduction of the reliability probe is refused in well under a second,
before it computes or allocates, with a reason an author can act on; the expressions lessons use still work."""

from __future__ import annotations

import time

import pytest

from app.lessons.expressions import Evaluator, ExpressionError, ExpressionOverrun
from app.lessons.sandbox import MAX_SECONDS
from tests.budget_probes import LOOPS, LOOPS_WITHIN_RANGE, PROSE

QUICK = 1.0  # CPU seconds: a refusal comes before the work, not after MAX_SECONDS of it


def refused(run: object) -> tuple[str, float]:
    """(the error's message, CPU seconds this thread took) of a call that must raise ExpressionError: the budget
    is the evaluating thread's CPU time (app.lessons.sandbox), which other threads of the process do not spend."""
    start = time.thread_time()
    with pytest.raises(ExpressionError) as caught:
        run()  # type: ignore[operator]
    return str(caught.value), time.thread_time() - start


@pytest.mark.parametrize(("expression", "says"), PROSE)
def test_each_probe_in_prose_is_refused_quickly_saying_why(expression: str, says: str) -> None:
    message, seconds = refused(lambda: Evaluator().substitute(f"Probe: {expression}"))
    assert seconds < QUICK, seconds
    assert says in message and message.startswith("cannot evaluate {{"), message


def test_nested_loops_in_a_drill_text_stop_at_the_range_or_the_step_budget() -> None:
    ev = Evaluator()
    message, seconds = refused(lambda: ev.text(LOOPS, {}))
    assert seconds < QUICK and "range(100000) has 100,000 numbers; at most 10,000" in message, message
    message, seconds = refused(lambda: ev.text(LOOPS_WITHIN_RANGE, {}))
    assert seconds < MAX_SECONDS + 0.5 and "more than 200,000 steps" in message, (message, seconds)


@pytest.mark.parametrize("template", [
    "{% set ns = namespace(s='ab') %}{% for i in range(60) %}{% set ns.s = ns.s ~ ns.s %}{% endfor %}{{ ns.s }}",
    "{% set ns = namespace(l=[1]) %}{% for i in range(200) %}{% set ns.l = [ns.l, ns.l] %}{% endfor %}{{ ns.l }}",
    "{{ 'a' | replace('a', 'b' * 100000) | replace('b', 'c' * 100) }}",
    "{{ ([['x' * 100000] * 9] * 9) | join }}",
    "{{ '%s' % ([['x' * 100000] * 9] * 9) }}",
    "{{ 1 | num(10**9) }}",
    "{{ (2 ** 5000) * (2 ** 5000) * (2 ** 5000) }}",
    "{{ ([[1] * 100] * 100) | sum(start=[]) }}",
])
def test_doubling_joining_and_padding_tricks_are_refused_too(template: str) -> None:
    message, seconds = refused(lambda: Evaluator().text(template, {}))
    assert seconds < MAX_SECONDS + 0.5 and "stopped:" in message, (message, seconds)


@pytest.mark.parametrize(("template", "says"), [
    ("{% macro f(n) %}{{ f(n) }}{% endmacro %}{{ f(1) }}", "{% macro %} is not available"),
    ("{% set x %}{{ 'a' }}{% endset %}{{ x }}", "{% set … endset %} is not available"),
    ("{{ 'x'.ljust(10**9) }}", "str.ljust() is not available"),
    ("{{ '{:>999999999}'.format(1) }}", "str.format() is not available"),
    ("{{ cycler(1, 2).next() }}", "'cycler' is not a name"),
    ("{{ ''.__class__.__mro__ }}", "cannot evaluate"),
    ("{{ serving(seconds=10**9).queue }}", "seconds=1e+09; give 0 to 3,600"),
])
def test_what_lessons_have_no_use_for_is_not_there(template: str, says: str) -> None:
    message, _ = refused(lambda: Evaluator().text(template, {}))
    assert says in message, message


def test_an_overrun_is_told_apart_from_a_plain_mistake() -> None:
    ev = Evaluator()
    with pytest.raises(ExpressionOverrun):
        ev.value("9 ** (9 ** 9)")
    with pytest.raises(ExpressionError) as plain:
        ev.value("model('llama-3.1-8b').kv_head")
    assert not isinstance(plain.value, ExpressionOverrun)


@pytest.mark.parametrize(("expression", "value"), [
    ('plan(model="llama-3.1-8b").per_gpu.weights | gb', "16.06 GB"),
    ("2 ** 30 * 10", "10737418240"),
    ("10 ** 3000 > 1", "True"),
    ('"%.2f" | format(1.5)', "1.50"),
    ('"a sliding window of " ~ model("mistral-7b").sliding_window if model("mistral-7b").sliding_window else "none"',
     "a sliding window of 4096"),
    ("[8192, model('mistral-7b').sliding_window or 8192] | min | num", "4,096"),
    ('1 | plural("conversation") ~ ", " ~ 8192 | plural("token")', "1 conversation, 8,192 tokens"),
    ('3 | plural("query", "queries")', "3 queries"),
    ("(range(10) | list | sum)", "45"),
    ("(16 * 8.03e9 / 80e9) | round(0, 'ceil') | int", "2"),
    ("['a', 'b'] | join(', ')", "a, b"),
])
def test_the_expressions_lessons_use_still_work(expression: str, value: str) -> None:
    assert Evaluator().evaluate(expression) == value


def test_a_loop_within_the_budget_runs() -> None:
    text = "{% for n in range(3) %}{{ n }}{% if not loop.last %}, {% endif %}{% endfor %}"
    assert Evaluator().text(text, {}) == "0, 1, 2"
