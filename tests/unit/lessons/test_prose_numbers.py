"""Figures the engine holds are computed in the flagship's prose, never typed: the expressions that give them."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from app.engine.hardware import node
from app.engine.training_run import RUN_SEQUENCE_TOKENS
from app.lessons.expressions import EXPRESSION, Evaluator

STEPS = Path(__file__).resolve().parents[3] / "lessons" / "what-ai-workloads-need"


def prose(prefix: str) -> str:
    """A step's Markdown with its expressions and fenced blocks taken out: only what the author typed."""
    text = next(STEPS.glob(f"{prefix}-*.md")).read_text().split("---", 2)[2]
    return EXPRESSION.sub("«expr»", re.sub(r"```.*?```", "", text, flags=re.S))


def test_the_training_runs_sequence_length_reaches_the_prose_from_the_engine() -> None:
    assert Evaluator().evaluate("training_sequence_tokens | num") == f"{RUN_SEQUENCE_TOKENS:,}"


@pytest.mark.parametrize(
    ("step", "typed"),
    [
        ("05", r"2,?048"),  # the training run's sequence length
        ("11", r"\btwo\b"),  # the CPU sockets
        ("12", r"\beight\b|\b8 GPUs"),  # dgx-1's GPU count
        ("15", r"8,?192"),  # the plan's default context
        ("18", r"400 Gb/s|\beight GPUs"),  # the network port, the GPU count
    ],
)
def test_figures_the_engine_holds_are_not_typed_in_the_prose(step: str, typed: str) -> None:
    assert not re.search(typed, prose(step)), f"step {step} types a figure the engine holds: {typed}"


def test_the_new_expression_names_give_the_engines_figures() -> None:
    ev = Evaluator()
    link = node().network.link
    assert ev.evaluate("(node().network.link.bandwidth * 8 / 1e9) | num") == f"{link.bandwidth * 8 / 1e9:,.0f}" == "400"
    assert ev.evaluate("node().cpu.sockets | num") == "2"
    weights = 'plan(model="llama-3.1-8b").per_gpu.weights'
    # NCCL's 15 µs + 2 × 7/8 × 16.06 GB ÷ the 370 GB/s a ring reaches (62.5 ms at the 450 GB/s line rate)
    assert ev.evaluate(f'all_reduce({weights}, 8, "nvlink") | seconds') == "76 ms"
    assert ev.evaluate("collective_bandwidth(8) | gb_s") == "370 GB/s"
    # 2·N·T (33.3 ms, case 12) plus the causal attention matmuls, 3.3 % more
    assert ev.evaluate('workload_timing("llama-3.1-8b", "prefill", 2048).gpu.seconds | seconds') == "34.4 ms"
