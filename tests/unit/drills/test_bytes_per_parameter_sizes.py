"""The size a bytes-per-parameter question shows is the size it grades (the walk: "a 0.7 B-parameter model"
graded as 0.67 B, 6 % of questions off by more than the 2 % tolerance, the worst by 9 %)."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from app.drills.bytes_per_parameter import TOTAL_TOLERANCE, size_digits
from tests.unit.drills.drill_helpers import drill

D = drill("bytes-per-parameter")
SHOWN = re.compile(r"train a ([\d,.]+) B-parameter model")


def shown_parameters(prompt: str) -> float:
    found = SHOWN.search(prompt)
    assert found, prompt
    return float(found.group(1).replace(",", "")) * 1e9


@settings(max_examples=3000, deadline=None)
@given(st.integers(min_value=0, max_value=2**63 - 1))
def test_a_custom_size_shown_in_the_question_is_the_size_graded(seed: int) -> None:
    """Over 3,000 seeds: the count a learner reads is the count the answer uses, well within the tolerance (to
    float rounding), so a learner who multiplies what they read is graded right."""
    q = D.question(seed)
    if q.parameters["model"] != "custom":
        return
    graded = float(q.parameters["parameters"])
    assert abs(shown_parameters(q.prompt) - graded) <= 1e-9 * graded
    answers = {"bytes_per_parameter": "16", "total": f"{shown_parameters(q.prompt) * 16 / 1e9:.4f} GB", "gpus": "1"}
    result = next(r for r in D.grade(q, answers).parts if r.id == "total")
    assert result.correct == (q.parameters["optimizer"] in ("adam", "adam-fp32"))  # 16 bytes for these two
    assert TOTAL_TOLERANCE == 0.02


def test_the_walks_question_now_reads_0_67_b() -> None:
    assert size_digits(0.67e9) == 2 and size_digits(5.5e9) == 1 and size_digits(55e9) == 0
    q = next(D.question(s) for s in range(10_000) if D.question(s).parameters["parameters"] == 0.67e9)
    assert "a 0.67 B-parameter model" in q.prompt
