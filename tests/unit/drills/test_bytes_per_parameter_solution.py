"""The worked solution of the bytes-per-parameter drill names each byte's format (issue 13, item 5): 8-bit Adam's
6 bytes of optimizer state are a 4-byte fp32 master copy and two 1-byte moments, not '6 (fp32 master copy and
moments)', which reads as fp32 moments."""

from __future__ import annotations

from app.drills.base import Question
from tests.unit.drills.drill_helpers import drill, find

D = drill("bytes-per-parameter")


def solution_of(optimizer: str) -> str:
    q: Question = find(D, lambda q: q.parameters["optimizer"] == optimizer)
    return " ".join(D.grade(q, {"bytes_per_parameter": "1", "total": "1 GB", "gpus": "1"}).solution)


def test_8_bit_adam_is_worked_out_byte_by_byte() -> None:
    said = solution_of("adam-8bit")
    assert "fp32 master copy and moments" not in said
    assert ("2 (bf16 weights) + 2 (bf16 gradients) + 4 (fp32 master copy) + 1 (Adam first moment, 8-bit) + "
            "1 (Adam second moment, 8-bit) = 10 bytes") in said


def test_adam_in_mixed_precision_still_adds_to_16() -> None:
    assert ("2 (bf16 weights) + 2 (bf16 gradients) + 4 (fp32 master copy) + 4 (Adam first moment, fp32) + "
            "4 (Adam second moment, fp32) = 16 bytes") in solution_of("adam")
