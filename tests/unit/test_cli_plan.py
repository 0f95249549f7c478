"""`gpu-classroom plan` with a bad argument: one line naming the argument and what it takes, exit status 2."""

from __future__ import annotations

import pytest

from app.cli import main


def bad(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    """The one line a bad plan argument prints, after checking the exit status and that nothing else printed."""
    assert main(["plan", *argv]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1, err
    assert "pydantic" not in err and "validation error" not in err and "http" not in err
    return err.strip()


def test_an_unknown_model_is_named_with_the_models_there_are(capsys: pytest.CaptureFixture[str]) -> None:
    line = bad(capsys, "--model", "foo")
    assert line.startswith("gpu-classroom plan: --model 'foo': ")
    assert "llama-3.1-8b" in line and "llama-3.1-70b" in line


def test_a_precision_outside_the_list_names_the_allowed_ones(capsys: pytest.CaptureFixture[str]) -> None:
    line = bad(capsys, "--precision", "fp7")
    assert line == "gpu-classroom plan: --precision 'fp7': choose from 'fp32', 'bf16', 'fp16', 'fp8', 'int8' or 'int4'"


def test_a_number_out_of_range_says_its_bound(capsys: pytest.CaptureFixture[str]) -> None:
    assert bad(capsys, "--gpus", "0") == "gpu-classroom plan: --gpus 0: must be greater than or equal to 1"


def test_two_bad_arguments_are_both_named_on_the_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    line = bad(capsys, "--optimizer", "x", "--kv-precision", "fp7")
    assert "--optimizer 'x': choose from 'adam'" in line and "--kv-precision 'fp7': choose from" in line


def test_serving_on_a_count_that_does_not_split_the_heads_names_gpus_and_the_counts_that_work(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert bad(capsys, "--model", "llama-3.1-70b", "--gpus", "3") == (
        "gpu-classroom plan: --gpus 3: Serving gives each GPU an equal share of every layer (tensor parallel); a layer "
        "of Llama 3.1 70B is 64 attention heads that cannot be cut: use 1, 2, 4, 8, 16, 32 or 64 GPUs"
    )
    assert main(["plan", "--model", "llama-3.1-70b", "--gpus", "3", "--mode", "train"]) == 0


def test_good_arguments_still_print_the_plan(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["plan", "--model", "llama-3.1-8b", "--precision", "bf16"]) == 0
    assert "llama" in capsys.readouterr().out.lower()
