"""A small error hierarchy: every engine error carries a sentence a learner can read."""

from __future__ import annotations

from app.engine.text import gb


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
        super().__init__(  # the one GB formatter, so this sentence and the panel round alike
            f"GPU {gpu_index} needs {gb(needed_bytes, 1)} but holds {gb(capacity_bytes, 0)}: "
            f"{gb(needed_bytes - capacity_bytes, 1)} too much."
        )
