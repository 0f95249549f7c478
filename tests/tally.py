"""Counts of the security checks a test run tried and that held, for docs/security.md.

A test wraps each check it makes in `with held("defence"):`: entering counts one tried, leaving without an
exception counts one held. `python -m tests.security_counts` runs the suite's security tests and prints the
counts beside the test cases each defence has; nothing is counted by hand.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager

TRIED: Counter[str] = Counter()
HELD: Counter[str] = Counter()


@contextmanager
def held(defence: str) -> Iterator[None]:
    """Count one check of `defence`: tried now, held when the block ends without an exception."""
    TRIED[defence] += 1
    yield
    HELD[defence] += 1
