"""A small error hierarchy: every engine error carries a sentence a learner can read."""

from __future__ import annotations


class EngineError(ValueError):
    """Input the engine cannot work with; the message is written for a learner."""


class UnknownModel(EngineError):
    """A model id that is not in the catalog."""

    def __init__(self, model_id: str, known: list[str]) -> None:
        self.model_id = model_id
        self.known = known
        super().__init__(f"Unknown model '{model_id}'. Known models: {', '.join(known)}.")


class DoesNotFit(EngineError):
    """A plan that needs more memory on one GPU than the GPU has."""

    def __init__(self, gpu_index: int, needed_bytes: int, capacity_bytes: int) -> None:
        self.gpu_index = gpu_index
        self.needed_bytes = needed_bytes
        self.capacity_bytes = capacity_bytes
        over = (needed_bytes - capacity_bytes) / 1e9
        super().__init__(
            f"GPU {gpu_index} needs {needed_bytes / 1e9:.1f} GB but holds {capacity_bytes / 1e9:.0f} GB: "
            f"{over:.1f} GB too much."
        )
