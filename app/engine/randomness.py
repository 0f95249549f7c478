"""Seeded randomness without state: each draw is a pure function of a seed and a place in simulated time."""

from __future__ import annotations

import hashlib
import math
from statistics import NormalDist

_STANDARD = NormalDist()
# Below this mean a Poisson draw sums its probabilities exactly; above it the normal approximation is
# within a fraction of a percent and keeps a draw's cost bounded.
_EXACT_POISSON_MEAN = 50.0


def uniform(seed: int, stream: str, index: int) -> float:
    """A uniform number in (0, 1), the same in every process for the same (seed, stream, index)."""
    digest = hashlib.blake2b(f"{seed}:{stream}:{index}".encode(), digest_size=8).digest()
    return (int.from_bytes(digest, "big") + 0.5) / 2**64


def normal(seed: int, stream: str, index: int) -> float:
    """A standard normal number drawn from `uniform`."""
    return _STANDARD.inv_cdf(uniform(seed, stream, index))


def poisson(mean: float, seed: int, stream: str, index: int) -> int:
    """A Poisson count with this mean, by inverting its distribution (normal approximation when large)."""
    if mean <= 0:
        return 0
    u = uniform(seed, stream, index)
    if mean > _EXACT_POISSON_MEAN:
        return max(0, round(mean + math.sqrt(mean) * _STANDARD.inv_cdf(u)))
    k, p = 0, math.exp(-mean)
    cumulative = p
    while cumulative < u and k < 10 * _EXACT_POISSON_MEAN:
        k += 1
        p *= mean / k
        cumulative += p
    return k
