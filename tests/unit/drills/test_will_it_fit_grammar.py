"""The will-it-fit drill's message for a wrong 'largest part' agrees in number (issue 13, item 5): 'the KV cache
takes', not 'the KV cache take'; 'the weights take'."""

from __future__ import annotations

from app.drills.base import Question
from tests.unit.drills.drill_helpers import drill

D = drill("will-it-fit")


def message_for_wrong_largest(q: Question) -> str:
    right = D.solve(q).expected["largest"]
    wrong = "weights" if right != "weights" else "runtime"
    fb = D.grade(q, {"fits": "yes", "per_gpu": "1 GB", "largest": wrong})
    return " ".join(p.message for p in fb.parts if p.id == "largest")


def test_a_singular_largest_part_takes_and_a_plural_one_take() -> None:
    seen = {"kv_cache": False, "weights": False}
    for seed in range(300):
        q = D.question(seed)
        right = D.solve(q).expected["largest"]
        if right in seen and not seen[right]:
            said = message_for_wrong_largest(q)
            if right == "kv_cache":
                assert "the KV cache takes" in said and "the KV cache take " not in said, said
            else:
                assert "the weights take " in said, said
            seen[right] = True
    assert all(seen.values()), seen
