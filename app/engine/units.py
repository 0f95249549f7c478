"""Units, written one way everywhere: decimal GB for sizes a spec sheet quotes, binary GiB beside them."""

from __future__ import annotations

KB = 10**3
MB = 10**6
GB = 10**9
TB = 10**12
KiB = 2**10
MiB = 2**20
GiB = 2**30
TiB = 2**40

TFLOPS = 10**12
PFLOPS = 10**15

SECONDS_PER_HOUR = 3600
SECONDS_PER_DAY = 86_400
SECONDS_PER_YEAR = 365.25 * SECONDS_PER_DAY

# Bytes a number occupies in each storage precision the engine knows.
BITS_PER_PRECISION: dict[str, int] = {
    "fp32": 32,
    "bf16": 16,
    "fp16": 16,
    "fp8": 8,
    "int8": 8,
    "int4": 4,
}
PRECISIONS: tuple[str, ...] = tuple(BITS_PER_PRECISION)
