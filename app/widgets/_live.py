"""Live simulations on a stateless server: the page carries when a run started, the server works out the rest.

A run plays in wall-clock time on the learner's screen and in fast simulated time inside the engine.
The page holds four values (in hidden form fields and in its URL): `started_at`, the epoch second the
current running stretch began (0 when not running); `elapsed`, the wall seconds already played before
it; `run_of`, a fingerprint of the settings the run belongs to; and `action`, the button just pressed.
From these, the settings and the clock, any server process computes the same state: nothing is kept
between requests, and a reload resumes where the run is.
"""

from __future__ import annotations

import hashlib
import json
import time
from typing import Literal, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field

from app.engine.placement import NodeLoad
from app.widgets._fields import MODEL_OPTIONS

Action = Literal["", "start", "pause", "reset"]
Status = Literal["ready", "running", "paused", "finished"]
LIVE_FIELDS = ("started_at", "elapsed", "run_of", "action")
PLAY_OPTIONS = [("5", "5 seconds"), ("20", "20 seconds"), ("60", "1 minute"), ("180", "3 minutes")]


def clock() -> float:
    """Wall-clock seconds since the epoch (tests replace this)."""
    return time.time()


class LiveParams(BaseModel):
    """The fields every live widget carries besides its settings."""

    # Defaults are validated too, so 64 and "64" and 64.0 give the same fingerprint.
    model_config = ConfigDict(validate_default=True)

    seed: int = Field(default=1, ge=0, le=2**31 - 1, description="Seed of the run's randomness")
    play_seconds: int = Field(default=60, ge=1, le=600, description="Wall seconds the whole run plays in")
    started_at: float = Field(
        default=0,
        ge=0,
        le=1e11,
        allow_inf_nan=False,
        description="Epoch second the current running stretch began; 0 when not running",
    )
    elapsed: float = Field(
        default=0,
        ge=0,
        le=1e9,
        allow_inf_nan=False,
        description="Wall seconds already played before that stretch",
    )
    run_of: str = Field(
        default="",
        max_length=16,
        pattern=r"^[0-9a-f]*$",
        description="Fingerprint of the settings the run last played with",
    )
    action: Action = Field(default="", description="The button just pressed: start, pause or reset")

    def fingerprint(self) -> str:
        """A short hash of the settings (not the live fields): which settings the run's state was played with."""
        settings = self.model_dump(exclude=set(LIVE_FIELDS))
        return hashlib.sha1(json.dumps(settings, sort_keys=True, default=str).encode()).hexdigest()[:10]


class LiveState(BaseModel):
    """Where a run stands on the wall clock, after the button pressed has been applied."""

    status: Status
    started_at: float = Field(description="Epoch second the running stretch began; 0 when not running")
    elapsed: float = Field(description="Wall seconds played before started_at")
    played: float = Field(description="Wall seconds played in all, up to now")
    duration: float = Field(description="Wall seconds the whole run plays for")
    run_of: str

    @property
    def running(self) -> bool:
        return self.status == "running"

    def form_values(self) -> dict[str, str]:
        """The hidden fields the page keeps for the next request (and the URL keeps for a reload)."""
        return {
            "started_at": f"{self.started_at:.3f}" if self.started_at else "0",
            "elapsed": f"{self.elapsed:.3f}" if self.elapsed else "0",
            "run_of": self.run_of,
            "action": "",
        }


def resolve(params: LiveParams, duration: float, now: float) -> LiveState:
    """Apply the button pressed, and any change of settings, at wall time `now`.

    Changing a setting continues the run from where it is, with the new settings (issue 13, item 3): the time
    played stays, only Reset goes back to the beginning. A run that reaches its end stops there.
    """
    started = min(params.started_at, now)
    elapsed = params.elapsed
    fingerprint = params.fingerprint()
    played = elapsed + (now - started if started else 0.0)
    if params.action == "start":
        played = 0.0 if played >= duration else played
        started, elapsed = now, played
    elif params.action == "pause" and started:
        started, elapsed = 0.0, played
    elif params.action == "reset":
        started, elapsed, played = 0.0, 0.0, 0.0
    if played >= duration:
        return LiveState(
            status="finished",
            started_at=0.0,
            elapsed=duration,
            played=duration,
            duration=duration,
            run_of=fingerprint,
        )
    status: Status = "running" if started else ("paused" if played > 0 else "ready")
    return LiveState(
        status=status,
        started_at=started,
        elapsed=elapsed,
        played=played,
        duration=duration,
        run_of=fingerprint,
    )


# A run that cannot start (the model does not fit) stands still at the beginning.
NOT_STARTED = LiveState(status="ready", started_at=0, elapsed=0, played=0, duration=1, run_of="")


@runtime_checkable
class LiveRun(Protocol):
    """What the widget lifecycle asks of a live widget's result (app.widgets.service.render)."""

    def is_running(self) -> bool:
        """Keep polling (else the htmx answer is 286: stop)."""
        ...

    def form_values(self) -> dict[str, str]:
        """Hidden form values the result sets (a run's start time), written back to the form and the URL."""
        ...

    def placement(self) -> NodeLoad:
        """The run's memory on dgx-1, busy as it is right now."""
        ...


class LiveResult(BaseModel):
    """What every live widget's result carries beside its own figures; it implements LiveRun."""

    model_name: str
    models: list[tuple[str, str]] = Field(default=MODEL_OPTIONS, description="Catalog models to pick from")
    play_options: list[tuple[str, str]] = PLAY_OPTIONS
    fits: bool = True
    refusal: str = Field(default="", description="Why the run cannot start, when it does not fit")
    live: LiveState = NOT_STARTED
    announcement: str = Field(description="What a screen reader hears: only when the status or the verdict changes")
    node: NodeLoad

    def is_running(self) -> bool:
        return self.live.running

    def form_values(self) -> dict[str, str]:
        return self.live.form_values()

    def placement(self) -> NodeLoad:
        return self.node


def refused(exc: Exception, lead: str) -> dict[str, object]:
    """The fields of a run that cannot start: the sentence why, and what a screen reader hears."""
    return {"fits": False, "refusal": f"{lead}{exc}", "live": NOT_STARTED, "announcement": f"Does not fit: {exc}"}
