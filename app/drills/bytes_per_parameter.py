"""Drill: bytes per parameter to train, the total training state, and the fewest GPUs that hold it."""

from __future__ import annotations

import math
import random
from collections.abc import Mapping

from app.drills.base import SIZE_EXAMPLE, Drill, Feedback, Given, Part, Question, Solution, Variant, distinct
from app.engine.hardware import DGX_H100, get_gpu
from app.engine.models import CATALOG
from app.engine.text import billions, gb, gib, num
from app.engine.training_memory import state_lines
from app.engine.training_state import TrainingState, training_precision, training_state

NAME = "bytes-per-parameter"
GPU = "h100"
TOTAL_TOLERANCE = 0.02
OPTIMIZERS = {
    "adam": "Adam in mixed precision (bf16 weights and gradients)",
    "adam-fp32": "Adam in full fp32",
    "sgd-momentum": "SGD with momentum in mixed precision (bf16 weights and gradients)",
    "adam-8bit": "8-bit Adam in mixed precision (bf16 weights and gradients)",
}
# Weights of the draw: the flagship case most often, 8-bit Adam as the stretch.
OPTIMIZER_WEIGHTS = {"adam": 4, "adam-fp32": 2, "sgd-momentum": 2, "adam-8bit": 1}
SMALLEST, LARGEST = 0.5e9, 400e9


def _model(rng: random.Random) -> tuple[str, str, float]:
    """A catalog model, or a custom size between 0.5 B and 400 B (two significant digits), written with every
    digit it has: the size the question shows is the size it grades ("0.67 B", never "0.7 B" for 0.67 B)."""
    if rng.random() < 0.5:
        arch = CATALOG[rng.choice(sorted(CATALOG))]
        return arch.id, arch.name, float(arch.parameters)
    size = float(f"{10 ** rng.uniform(math.log10(SMALLEST), math.log10(LARGEST)):.2g}")
    return "custom", f"a {billions(size, size_digits(size))}-parameter model", size


def size_digits(size: float) -> int:
    """Decimals of a count in billions that show all of its two significant digits: 0.67 B, 5.5 B, 55 B, 160 B."""
    return max(0, 1 - math.floor(math.log10(size / 1e9)))


def _clear_gpu_count(total: float, capacity: float) -> bool:
    """True when every total within the tolerance needs the same number of GPUs."""
    return math.ceil(total * (1 - TOTAL_TOLERANCE) / capacity) == math.ceil(
        total * (1 + TOTAL_TOLERANCE) / capacity
    )


PARTS = [
    Part(id="bytes_per_parameter", prompt="Bytes of training state per parameter", kind="per_parameter",
         unit="bytes per parameter", example="a number of bytes"),
    Part(id="total", prompt="Total training state before activations", kind="size", unit="GB",
         tolerance=TOTAL_TOLERANCE, example=SIZE_EXAMPLE),
    Part(id="gpus", prompt="Fewest 80 GB GPUs that hold it, fully sharded", kind="count", unit="GPUs",
         example="a whole number of GPUs"),
]


def generate(rng: random.Random) -> Question:
    """A model and an optimizer; parts: bytes a parameter, total state in GB, fewest 80 GB GPUs."""
    capacity = get_gpu(GPU).memory_bytes
    while True:
        model, name, params = _model(rng)
        optimizer = rng.choices(list(OPTIMIZER_WEIGHTS), weights=list(OPTIMIZER_WEIGHTS.values()))[0]
        if _clear_gpu_count(params * training_state(optimizer).total, capacity):
            break
    precision = training_precision(optimizer, "bf16")
    who = name if model == "custom" else f"{name} ({num(params)} parameters)"
    return Question(
        drill=NAME,
        title=f"Train {name} with {OPTIMIZERS[optimizer].split(' (')[0]}",
        prompt=f"Your team wants to train {who} with {OPTIMIZERS[optimizer]}. Size its training state before "
        "activations.",
        givens=[
            Given(label="GPU", text=f"H100 with {gb(capacity, 0)} of memory; dgx-1 has {DGX_H100.gpus} of them"),
            Given(label="Units", text="1 GB = 10⁹ bytes"),
        ],
        parameters={"model": model, "name": name, "parameters": params, "optimizer": optimizer,
                    "precision": precision, "gpu": GPU},
        parts=PARTS,
    )


def _pieces(optimizer: str, precision: str) -> str:
    """The bytes of one parameter, line by line, each with its own format (8-bit Adam's moments are 1 byte)."""
    word = training_precision(optimizer, precision)
    short = {"weights": f"{word} weights", "gradients": f"{word} gradients", "master": "fp32 master copy"}
    return " + ".join(f"{b:g} ({short.get(key) or label.replace(' (', ', ').rstrip(')')})"
                      for key, label, _, b in state_lines(optimizer, precision))


def _per_parameter_variants(st: TrainingState, optimizer: str) -> list[tuple[str, float, str]]:
    """Classic wrong bytes-per-parameter figures for this optimizer: (mistake, value, why)."""
    out = [
        ("weights-only", st.weights, "that is the weights alone, the figure for serving; training also keeps "
         "gradients and the optimizer state"),
        ("no-optimizer-state", st.weights + st.gradients,
         "that counts weights and gradients but leaves out the optimizer state"),
    ]
    if training_precision(optimizer, "bf16") != "fp32":
        out += _mixed_precision_variants(st)
    else:
        out.append(("extra-master-copy", st.total + 4,
                    "in full fp32 the weights are already fp32: there is no separate master copy"))
    if optimizer == "adam-8bit":
        out.append(("moments-in-fp32", training_state("adam").total,
                    "that is ordinary Adam; 8-bit Adam keeps each of its two moments in 1 byte"))
    if optimizer == "sgd-momentum":
        out.append(("two-moments", training_state("adam").total,
                    "that is Adam's figure; SGD with momentum keeps one moment, not two"))
    return out


def _mixed_precision_variants(st: TrainingState) -> list[tuple[str, float, str]]:
    """The 16-bit copies forgotten, or kept in fp32 as well as the master copy."""
    return [
        ("forgot-bf16-copies", st.optimizer, "that is the fp32 master copy and the optimizer's moments; the bf16 "
         f"weights and bf16 gradients add {st.weights:g} + {st.gradients:g} bytes"),
        ("fp32-instead-of-bf16", 4 + 4 + st.optimizer, "that keeps the working weights and gradients in fp32; "
         "mixed precision keeps them in bf16 (2 bytes) beside one fp32 master copy"),
    ]


def _active_parameter_variants(model: str, per_parameter: float, capacity: int) -> list[Variant]:
    """A mixture of experts sized by the parameters a token uses instead of all it keeps."""
    arch = CATALOG.get(model)
    if arch is None or arch.experts == 1:
        return []
    active = arch.active_parameters
    why = (
        f"that sizes {arch.name} by the {billions(active)} parameters a token uses; training keeps state for "
        f"every expert, all {billions(arch.parameters)} parameters"
    )
    return [
        Variant(part="total", id="active-parameters", value=active * per_parameter,
                message=f"{gb(active * per_parameter)}: {why}."),
        Variant(part="gpus", id="active-parameters", value=float(math.ceil(active * per_parameter / capacity)),
                message=f"That many GPUs would hold {billions(active)} parameters: {why}."),
    ]


def solve(q: Question) -> Solution:
    """The engine's training state for this model and optimizer, the wrong figures, the worked steps."""
    p = q.parameters
    params, optimizer, precision = float(p["parameters"]), str(p["optimizer"]), str(p["precision"])
    st = training_state(optimizer)
    capacity = get_gpu(GPU).memory_bytes
    total = params * st.total
    gpus = math.ceil(total / capacity)
    variants = [
        *_misread_variants(params, st, optimizer),
        *_active_parameter_variants(str(p["model"]), st.total, capacity),
        *_total_and_count_variants(params, st, capacity),
    ]
    expected = {"bytes_per_parameter": st.total, "total": total, "gpus": float(gpus)}
    return Solution(
        expected=expected,
        variants=distinct(q, expected, variants),
        solution=[
            f"{st.note} keeps, for every parameter, {_pieces(optimizer, precision)} = {st.total:g} bytes.",
            f"{billions(params)} parameters × {st.total:g} bytes = {gb(total)} of training state "
            f"({gib(total)}), before activations.",
            f"{gb(total)} ÷ {gb(capacity, 0)} = {total / capacity:.2f}, so at least {gpus} "
            f"GPU{'s' if gpus > 1 else ''} with full sharding (ZeRO-3), before activations and each GPU's "
            "runtime.",
        ],
        hints=_hints(params, optimizer, capacity),
    )


def _misread_variants(params: float, st: TrainingState, optimizer: str) -> list[Variant]:
    """Each wrong bytes-per-parameter figure, as that answer and as the total it gives."""
    wrong = _per_parameter_variants(st, optimizer)
    return [
        *(Variant(part="bytes_per_parameter", id=m, value=v, message=f"{v:g} bytes: {why}.") for m, v, why in wrong),
        *(Variant(part="total", id=m, value=params * v,
                  message=f"{gb(params * v)} is {billions(params)} × {v:g} bytes: {why}.") for m, v, why in wrong),
    ]


def _total_and_count_variants(params: float, st: TrainingState, capacity: int) -> list[Variant]:
    """The total in GiB or as one GPU's share; the GPU count rounded down or for the weights alone."""
    total = params * st.total
    return [
        Variant(part="total", id="gib-for-gb", value=total / 2**30 * 1e9,
                message=f"That is the total in GiB ({gib(total)}); the question asks for GB, and 1 GB = 10⁹ bytes."),
        Variant(part="total", id="per-gpu-for-total", value=total / DGX_H100.gpus,
                message=f"That is one GPU's share over dgx-1's {DGX_H100.gpus} GPUs; the question asks for the "
                "total."),
        Variant(part="gpus", id="rounded-down", value=float(math.floor(total / capacity)),
                message=f"{total / capacity:.2f} GPUs' worth of state needs {math.ceil(total / capacity)} GPUs: "
                "round up, never down."),
        Variant(part="gpus", id="weights-only", value=float(math.ceil(params * st.weights / capacity)),
                message="That many GPUs hold the weights alone; the gradients and optimizer state need room too."),
    ]


def _hints(params: float, optimizer: str, capacity: int) -> list[str]:
    """Three things a parameter, times the parameters, over one GPU's memory."""
    return [
        "Training keeps three things for every parameter: the working weights, their gradients and the "
        "optimizer's state. " + _optimizer_hint(optimizer),
        f"Multiply the bytes of one parameter by {billions(params)} parameters; 10⁹ bytes make one GB "
        "(a GiB is 2³⁰ bytes, 7 % more).",
        f"Full sharding spreads the state evenly over the GPUs: divide by one GPU's {gb(capacity, 0)} "
        "and round up to a whole GPU.",
    ]


def _optimizer_hint(optimizer: str) -> str:
    return {
        "adam": "Adam keeps two moments a parameter in fp32, and mixed precision adds an fp32 master copy of "
        "the weights beside the bf16 ones.",
        "adam-fp32": "Adam keeps two moments a parameter; in full fp32 everything is 4 bytes and there is no "
        "separate master copy.",
        "sgd-momentum": "SGD with momentum keeps one moment a parameter in fp32, and mixed precision adds an "
        "fp32 master copy of the weights.",
        "adam-8bit": "8-bit Adam keeps its two moments in 1 byte each; mixed precision still keeps an fp32 "
        "master copy of the weights.",
    }[optimizer]


DRILL = Drill(
    name=NAME,
    title="Bytes per parameter to train",
    description="A model size and an optimizer: bytes a parameter, the total training state in GB, "
    "and the fewest 80 GB GPUs that hold it fully sharded.",
    generate=generate,
    solve=solve,
    malformed=(
        {"bytes_per_parameter": "", "total": "128 GB", "gpus": "2"},
        {"bytes_per_parameter": "16", "total": "128 GB/s", "gpus": "2"},
        {"bytes_per_parameter": "16", "total": "128,5", "gpus": "2"},
        {"bytes_per_parameter": "sixteen-ish", "total": "128 GB", "gpus": "2"},
        {"bytes_per_parameter": "16", "total": "128 GB", "gpus": "two cats"},
    ),
)


def grade(question: Question, answers: Mapping[str, str]) -> Feedback:
    """Grade answers as typed (see app.drills.base.grade)."""
    return DRILL.grade(question, answers)
