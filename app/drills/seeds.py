"""Seeds of a learner's questions: the same learner, drill and question number always give the same seed."""

from __future__ import annotations

import hashlib

MAX_SEED = 2**63 - 1  # fits a signed 64-bit column


def learner_seed(learner_id: str, drill: str, number: int) -> int:
    """A seed from sha256 of the learner, the drill and the question number (0, 1, ...)."""
    digest = hashlib.sha256(f"{learner_id}\x1f{drill}\x1f{number}".encode()).digest()
    return int.from_bytes(digest[:8], "big") & MAX_SEED
