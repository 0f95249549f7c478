"""Ideal weight storage: parameters x bits / 8, in GB and GiB, compared across precisions."""

from __future__ import annotations

from pydantic import BaseModel, Field

from app.engine.units import BITS_PER_PRECISION, GB, GiB

# Storage widths a learner can compare against 32-bit storage: each width some precision stores a number in.
COMPARED_BITS: tuple[int, ...] = tuple(sorted(set(BITS_PER_PRECISION.values()), reverse=True))


def precisions_at(bits: int) -> list[str]:
    """The storage precisions that keep a number in `bits` bits: 16 -> ['bf16', 'fp16']."""
    return [name for name, width in BITS_PER_PRECISION.items() if width == bits]


class PrecisionBar(BaseModel):
    """One bar of the comparison: the same parameters stored at another width."""

    bits: int = Field(description="Bits per parameter")
    bytes: int = Field(description="Ideal weight storage in bytes")
    fraction_of_fp32: float = Field(description="Length relative to 32-bit storage (1.0 = fp32)")
    selected: bool = Field(description="True for the width the learner chose")


class WeightStorage(BaseModel):
    """Ideal weight storage of a parameter count at a bit width."""

    parameters: float = Field(description="Number of parameters")
    bits: int = Field(description="Bits per parameter")
    bytes: int = Field(description="parameters x bits / 8")
    gb: float = Field(description="bytes / 10^9")
    gib: float = Field(description="bytes / 2^30")
    bars: list[PrecisionBar]


def weight_storage(parameters: float, bits: int) -> WeightStorage:
    """Ideal storage of the weights alone: no runtime, KV cache, activations or metadata."""
    nbytes = round(parameters * bits / 8)
    widths = sorted(set(COMPARED_BITS) | {bits}, reverse=True)
    fp32 = parameters * 32 / 8
    bars = [
        PrecisionBar(
            bits=w,
            bytes=round(parameters * w / 8),
            fraction_of_fp32=(parameters * w / 8) / fp32 if fp32 else 0.0,
            selected=w == bits,
        )
        for w in widths
    ]
    return WeightStorage(parameters=parameters, bits=bits, bytes=nbytes, gb=nbytes / GB, gib=nbytes / GiB, bars=bars)
