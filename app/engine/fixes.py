"""The smallest change that makes a plan fit: more GPUs, fewer bits, less batch or context, ZeRO..."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Literal

from pydantic import BaseModel, Field

from app.engine.memory import Knobs, min_gpus, parts, total
from app.engine.models import Architecture
from app.engine.text import gb, num
from app.engine.units import BITS_PER_PRECISION
from app.engine.workload import CHECKPOINTING_MODES, PlanRequest

# Context lengths a fix proposes are whole multiples of this many tokens (when at least this long).
CONTEXT_STEP = 1024
_STAGES = ("none", "zero1", "zero2", "zero3")
_STAGE_NAMES = {"zero1": "ZeRO-1", "zero2": "ZeRO-2", "zero3": "ZeRO-3"}


class Fix(BaseModel):
    """One change to a plan's fields that makes it fit, and what each GPU then holds."""

    changes: dict[str, int | str | bool] = Field(description="Plan fields to change, with their new values")
    total: int = Field(description="Bytes per GPU after the change")
    sentence: str = Field(description="The change in a sentence a learner reads")


class _Search:
    """What-if evaluations of one plan's memory."""

    def __init__(self, req: PlanRequest, fewest: int | None | Literal["unknown"] = "unknown") -> None:
        self.arch: Architecture = req.architecture
        self.knobs = Knobs.of(req)
        self.capacity = req.hardware.memory_bytes
        self._fewest = fewest

    def fewest_gpus(self) -> int | None:
        """The plan's min_gpus, computed once (or given by the caller, who has it already)."""
        if self._fewest == "unknown":
            self._fewest = min_gpus(self.arch, self.knobs, self.capacity)
        return self._fewest

    def total(self, **changes: int | str | bool) -> int:
        """Per-GPU bytes with some knobs changed."""
        # _replace takes each field with its own type; the changes come from the fields themselves.
        return total(self.arch, self.knobs._replace(**changes))  # type: ignore[arg-type]

    def fits(self, **changes: int | str | bool) -> bool:
        """Whether the plan fits with some knobs changed."""
        return self.total(**changes) <= self.capacity

    def fix(self, sentence: str, **changes: int | str | bool) -> Fix | None:
        """A Fix if the change fits, else None."""
        per_gpu = self.total(**changes)
        if per_gpu > self.capacity:
            return None
        return Fix(changes=dict(changes), total=per_gpu, sentence=f"{sentence}: {gb(per_gpu)} a GPU.")


def _largest(lo: int, hi: int, ok: Callable[[int], bool]) -> int | None:
    """The largest n in [lo, hi] with ok(n), for ok true below some edge and false above it."""
    if hi < lo or not ok(lo):
        return None
    while lo < hi:
        mid = (lo + hi + 1) // 2
        lo, hi = (mid, hi) if ok(mid) else (lo, mid - 1)
    return lo


_CHECKPOINTING_WORDS = {
    "selective": "selective activation checkpointing (keep the matrix multiplies' outputs)",
    "full": "full activation checkpointing (keep each layer's input only)",
}


def _recompute(s: _Search) -> Iterator[Fix | None]:
    """Training: the lightest stronger activation checkpointing that fits (selective, then full)."""
    if s.knobs.mode != "train":
        return
    now = s.knobs.activation_checkpointing
    before = parts(s.arch, s.knobs)[2]
    for mode in CHECKPOINTING_MODES[CHECKPOINTING_MODES.index(now) + 1 :]:
        if s.fits(activation_checkpointing=mode):
            after = parts(s.arch, s.knobs._replace(activation_checkpointing=mode))[2]
            yield s.fix(
                f"Use {_CHECKPOINTING_WORDS[mode]} (activations {gb(before)} → {gb(after)})",
                activation_checkpointing=mode,
            )
            return


def _zero(s: _Search) -> Iterator[Fix | None]:
    """Training: the lowest ZeRO stage above the current one that fits."""
    if s.knobs.mode != "train" or s.knobs.gpus == 1:
        return
    for stage in _STAGES[_STAGES.index(s.knobs.sharding) + 1 :]:
        if s.fits(sharding=stage):
            yield s.fix(
                f"Shard the training state with {_STAGE_NAMES[stage]} over the {s.knobs.gpus} GPUs",
                sharding=stage,
            )
            return


def _batch(s: _Search) -> Iterator[Fix | None]:
    """The largest smaller batch that fits."""
    best = _largest(1, s.knobs.batch_size - 1, lambda b: s.fits(batch_size=b))
    if best is not None:
        yield s.fix(f"Use a batch of {best} instead of {s.knobs.batch_size}", batch_size=best)


def _context(s: _Search) -> Iterator[Fix | None]:
    """The longest shorter context that fits, in whole steps of 1,024 tokens."""
    now = s.knobs.context_tokens
    steps = _largest(1, (now - 1) // CONTEXT_STEP, lambda k: s.fits(context_tokens=k * CONTEXT_STEP))
    # Fewer than 1,024 tokens of context is no service at all (and the exact largest count fills the GPU to the
    # last byte), so a shorter context is offered only in whole steps of 1,024.
    best = steps * CONTEXT_STEP if steps else None
    if best is not None:
        yield s.fix(f"Keep {num(best)} tokens of context instead of {num(now)}", context_tokens=best)


def _fewer_bits(s: _Search, field: str, what: str) -> Iterator[Fix | None]:
    """Serving: the widest narrower precision for the weights or the KV cache that fits."""
    if s.knobs.mode != "serve":
        return
    now = getattr(s.knobs, field)
    for precision in ("fp8", "int4"):
        if BITS_PER_PRECISION[precision] < BITS_PER_PRECISION[now] and s.fits(**{field: precision}):
            yield s.fix(f"Store {what} in {precision} instead of {now}", **{field: precision})
            return


def _more_gpus(s: _Search) -> Iterator[Fix | None]:
    """More GPUs, with the current sharding (serving splits the weights; training needs ZeRO)."""
    fewest = s.fewest_gpus()
    if fewest is not None and fewest > s.knobs.gpus:
        yield s.fix(f"Use {num(fewest)} GPUs instead of {num(s.knobs.gpus)}", gpus=fewest)


def _zero3_and_gpus(s: _Search) -> Iterator[Fix | None]:
    """Training: ZeRO-3 (and activation checkpointing if needed) over the fewest GPUs that fit."""
    if s.knobs.mode != "train" or s.knobs.sharding == "zero3":
        return
    for recompute in dict.fromkeys((s.knobs.activation_checkpointing, "full")):
        k = s.knobs._replace(sharding="zero3", activation_checkpointing=recompute)
        fewest = min_gpus(s.arch, k, s.capacity)
        if fewest is not None:
            gpus = max(fewest, s.knobs.gpus)
            changes: dict[str, int | str | bool] = {"sharding": "zero3", "gpus": gpus}
            words = f"Shard with ZeRO-3 over {num(gpus)} GPUs"
            if recompute != s.knobs.activation_checkpointing:
                changes["activation_checkpointing"] = "full"
                words += " with full activation checkpointing"
            yield s.fix(words, **changes)
            return


def fixes(req: PlanRequest, fewest: int | None | Literal["unknown"] = "unknown") -> list[Fix]:
    """Every single change that makes a plan fit, smallest first (none when it already fits).

    `fewest`, when the caller knows it, is the plan's min_gpus (saves searching for it again).
    """
    s = _Search(req, fewest)
    if s.fits():
        return []
    searches = (
        _recompute(s),
        _zero(s),
        _batch(s),
        _context(s),
        _fewer_bits(s, "kv_precision", "the KV cache"),
        _fewer_bits(s, "precision", "the weights"),
        _more_gpus(s),
        _zero3_and_gpus(s),
    )
    return [f for search in searches for f in search if f is not None]
