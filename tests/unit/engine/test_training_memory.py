"""Training state line by line: 2 + 2 + 4 + 4 + 4 = 16 bytes a parameter for Adam in mixed precision."""

from __future__ import annotations

import pytest

from app.engine.models import get_model
from app.engine.training_memory import state_breakdown, state_lines
from app.engine.training_state import training_bytes_per_parameter

LLAMA_8B = get_model("llama-3.1-8b")


def test_adam_in_mixed_precision_is_two_two_four_four_four() -> None:
    lines = state_breakdown(LLAMA_8B, "adam").lines
    assert [(x.key, x.bytes_per_parameter) for x in lines] == [
        ("weights", 2),
        ("gradients", 2),
        ("master", 4),
        ("moment1", 4),
        ("moment2", 4),
    ]


def test_llama_8b_training_state_is_128_5_gb_eight_times_its_weights() -> None:
    s = state_breakdown(LLAMA_8B, "adam")
    assert s.bytes_per_parameter == 16
    assert s.bytes / 1e9 == pytest.approx(128.5, rel=0.005)  # engine-cases case 7
    assert s.serve_bytes / 1e9 == pytest.approx(16.06, rel=0.005)
    assert s.ratio == 8
    assert s.bytes > s.capacity and s.gpus_to_hold == 2


@pytest.mark.parametrize("optimizer", ["adam", "adam-fp32", "sgd-momentum", "adam-8bit"])
def test_the_lines_add_up_to_the_engines_bytes_per_parameter(optimizer: str) -> None:
    total = sum(b for *_, b in state_lines(optimizer))
    assert total == training_bytes_per_parameter(optimizer)
    # each line's bytes are rounded to whole bytes
    assert state_breakdown(LLAMA_8B, optimizer).bytes == pytest.approx(LLAMA_8B.parameters * total, abs=8)


def test_adam_in_fp32_has_no_master_copy_and_sgd_keeps_one_moment() -> None:
    assert "master" not in [k for k, *_ in state_lines("adam-fp32")]
    assert [k for k, *_ in state_lines("sgd-momentum")] == ["weights", "gradients", "master", "momentum"]
