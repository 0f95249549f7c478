"""Spot the mistake keeps all 22 mistakes in view: slide 23 lists them with their slides, and the drill counts which
ones a learner has met and got right at the first try."""

from __future__ import annotations

import re
from pathlib import Path

from app.drills.seeds import learner_seed
from app.drills.spot_the_mistake import DRILL, SPREAD, catalogue, topic

SLIDE = Path(__file__).resolve().parents[3] / "lessons" / "what-is-gpu-infrastructure" / "23-spot-the-mistake.md"


def test_slide_23_lists_all_22_mistakes_in_order_each_linked_to_the_slide_that_teaches_it() -> None:
    listed = re.findall(r"^\d+\. (.+) \(\[slide (\d+): [^\]]+\]\((/lessons/[^)]+)\)\)$", SLIDE.read_text(), re.M)
    assert [(title, link) for title, _, link in listed] == [(m.title, m.link) for m in catalogue().mistakes]
    assert len(listed) == 22 and all(link.endswith("/" + n) for _, n, link in listed)


def test_coverage_counts_a_mistake_as_met_when_answered_and_right_only_at_a_first_try() -> None:
    seeds = [learner_seed("learner", DRILL.name, n) for n in range(40)]
    mistakes = [topic(DRILL.question(s)) for s in seeds]
    first_tries = [(s, n % 2 == 0) for n, s in enumerate(seeds)]
    cov = DRILL.coverage(first_tries)
    assert cov.met == set(mistakes)
    assert cov.right == {m for n, m in enumerate(mistakes) if n % 2 == 0}
    assert len(cov.topics) == 22 and cov.needed == SPREAD == 8


def test_the_spread_is_met_only_by_the_answer_that_makes_eight_different_mistakes_right() -> None:
    seven = []
    seen: set[str] = set()
    n = 0
    while len(seen) < SPREAD - 1:
        seed = learner_seed("spread", DRILL.name, n)
        n += 1
        if topic(DRILL.question(seed)) not in seen:
            seen.add(topic(DRILL.question(seed)))
            seven.append((seed, True))
    cov = DRILL.coverage(seven * 3)  # the same seven mistakes again and again are still seven
    assert len(cov.right) == SPREAD - 1
    assert not cov.spread_met_with(next(iter(seen)))
    other = next(m.id for m in catalogue().mistakes if m.id not in seen)
    assert cov.spread_met_with(other)
