"""Live simulations on a stateless server: the page carries when a run started, the server works out the rest.

A run plays in wall-clock time on the learner's screen and in fast simulated time inside the engine.
The page holds five values (in hidden form fields and in its URL): `started_at`, the epoch second the
current running stretch began (0 when not running); `elapsed`, the wall seconds already played before
it; `run_of`, a fingerprint of what makes it this run (the model, the seed: change one and a new run
starts); `segments`, the run's past as stretches of settings; and `action`, the button just pressed.
From these, the settings and the clock, any server process computes the same state: nothing is kept
between requests, and a reload resumes where the run is.

A change of settings while a run plays or is paused (issue 13, item 3) closes the current stretch where the
run stands and opens a new one there: simulated time now = simulated time at the last change + (played −
played at the last change) × the new speed, and the engine continues from the state at the change (training:
training seconds and tokens done; serving: the queue). Each stretch is a few numbers: `played_at_speed_`, its
state, then its settings, joined by `_`; stretches are joined by `-` (characters no URL escapes). At most
MAX_STRETCHES are kept: past that the oldest change is merged into the first stretch (only the last change's
state and the recent chart need to be exact). Reset, or a new run, clears them.
"""

from __future__ import annotations

import hashlib
import json
import math
import time
from functools import cache
from typing import Annotated, Any, ClassVar, Literal, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError, field_validator

from app.engine.placement import NodeLoad
from app.widgets._fields import MODEL_OPTIONS

Action = Literal["", "start", "pause", "reset"]
Status = Literal["ready", "running", "paused", "finished"]
LIVE_FIELDS = ("started_at", "elapsed", "run_of", "action", "segments")
PLAY_OPTIONS = [("5", "5 seconds"), ("20", "20 seconds"), ("60", "1 minute"), ("180", "3 minutes")]
MAX_STRETCHES = 8
SEGMENTS_MAX_CHARS = 1200
NUMBER_MAX = 1e15  # larger than any simulated second, token count or setting a live widget allows


def clock() -> float:
    """Wall-clock seconds since the epoch (tests replace this)."""
    return time.time()


def _text(value: float) -> str:
    """A number as a stretch holds it: plain decimals, at most six after the point, no exponent."""
    return f"{value:.6f}".rstrip("0").rstrip(".") or "0"


def _exact(value: float) -> float:
    """The value as it reads back from the page, so a stretch read back equals the stretch written."""
    return float(_text(value))


class Stretch(BaseModel):
    """One stretch of a run under one set of settings: where it began on the wall clock and in simulated time,
    its speed, the state the engine continues from, and the settings that shaped it."""

    model_config = ConfigDict(frozen=True)

    played: float = Field(description="Wall seconds played when it began")
    at: float = Field(description="Simulated seconds when it began")
    speed: float = Field(description="Simulated seconds a wall second")
    state: tuple[float, ...] = Field(description="What it continues from (training: seconds, tokens; serving: queue)")
    settings: tuple[float, ...] = Field(description="The values of the widget's STRETCH_SETTINGS in it")

    @classmethod
    def of(
        cls, played: float, at: float, speed: float, state: tuple[float, ...], settings: tuple[float, ...]
    ) -> Stretch:
        """A stretch with every number as the page will hold it."""
        return cls(
            played=_exact(played), at=_exact(at), speed=_exact(speed),
            state=tuple(_exact(v) for v in state), settings=tuple(_exact(v) for v in settings),
        )

    def simulated(self, played: float) -> float:
        """Simulated seconds at `played` wall seconds, at this stretch's speed."""
        return self.at + (played - self.played) * self.speed

    def played_at(self, simulated: float) -> float:
        """Wall seconds played when the simulated clock reaches `simulated` in this stretch."""
        return self.played + (simulated - self.at) / self.speed

    def text(self) -> str:
        return "_".join(_text(v) for v in (self.played, self.at, self.speed, *self.state, *self.settings))


def encode(stretches: list[Stretch]) -> str:
    return "-".join(s.text() for s in stretches)


def decode(text: str, state_size: int) -> list[Stretch]:
    """The stretches of a valid `segments` value (LiveParams checked it)."""
    found = []
    for entry in filter(None, text.split("-")):
        v = [float(x) for x in entry.split("_")]
        found.append(Stretch(played=v[0], at=v[1], speed=v[2], state=tuple(v[3 : 3 + state_size]),
                             settings=tuple(v[3 + state_size :])))
    return found


@cache
def _setting_check(params: type[BaseModel], name: str) -> TypeAdapter[Any]:
    """The validator of one settings field, with its bounds: a stretch's settings obey the same rules."""
    field = params.model_fields[name]
    form: Any = Annotated[(field.annotation, *field.metadata)]
    return TypeAdapter(form)


class LiveParams(BaseModel):
    """The fields every live widget carries besides its settings.

    A widget names the settings a run continues across (STRETCH_SETTINGS, kept in each stretch), how many numbers
    of state a stretch begins from (STATE_SIZE) and what makes it a different run (RUN_IDENTITY)."""

    STRETCH_SETTINGS: ClassVar[tuple[str, ...]] = ()
    STATE_SIZE: ClassVar[int] = 1
    RUN_IDENTITY: ClassVar[tuple[str, ...]] = ("seed",)

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
        description="Fingerprint of what makes the run this run (RUN_IDENTITY)",
    )
    action: Action = Field(default="", description="The button just pressed: start, pause or reset")
    segments: str = Field(
        default="",
        max_length=SEGMENTS_MAX_CHARS,
        pattern=r"^[0-9._-]*$",
        description="The run's stretches of settings, oldest first (see app.widgets._live)",
    )

    @field_validator("segments")
    @classmethod
    def _stretches(cls, value: str) -> str:
        """Well-formed stretches: the right count of numbers, in order on both clocks, settings within bounds."""
        size = 3 + cls.STATE_SIZE + len(cls.STRETCH_SETTINGS)
        entries = [e.split("_") for e in value.split("-")] if value else []
        if len(entries) > MAX_STRETCHES or any(len(e) != size for e in entries):
            raise ValueError(f"A run keeps at most {MAX_STRETCHES} stretches of {size} numbers each.")
        try:
            stretches = decode(value, cls.STATE_SIZE)
        except ValueError:
            raise ValueError("A stretch holds plain numbers only.") from None
        for before, s in zip([None, *stretches], stretches, strict=False):
            numbers = (s.played, s.at, s.speed, *s.state, *s.settings)
            if not all(math.isfinite(v) and 0 <= v <= NUMBER_MAX for v in numbers) or s.speed <= 0:
                raise ValueError("A stretch's numbers are out of range.")
            if before is not None and (s.played < before.played or s.at < before.at):
                raise ValueError("Stretches must follow each other in time.")
            cls._check_settings(s.settings)
        return value

    @classmethod
    def _check_settings(cls, settings: tuple[float, ...]) -> None:
        for name, v in zip(cls.STRETCH_SETTINGS, settings, strict=True):
            try:
                _setting_check(cls, name).validate_python(v)
            except ValidationError:
                raise ValueError(f"A stretch's {name} is out of range.") from None

    def fingerprint(self) -> str:
        """A short hash of what makes it this run (RUN_IDENTITY): change one and a new run starts."""
        identity = self.model_dump(include=set(self.RUN_IDENTITY))
        return hashlib.sha1(json.dumps(identity, sort_keys=True, default=str).encode()).hexdigest()[:10]

    def stretch_settings(self) -> tuple[float, ...]:
        return tuple(_exact(float(getattr(self, name))) for name in self.STRETCH_SETTINGS)

    def stretches(self) -> list[Stretch]:
        return decode(self.segments, self.STATE_SIZE)


class LiveState(BaseModel):
    """Where a run stands on the wall clock, after the button pressed has been applied."""

    status: Status
    started_at: float = Field(description="Epoch second the running stretch began; 0 when not running")
    elapsed: float = Field(description="Wall seconds played before started_at")
    played: float = Field(description="Wall seconds played in all, up to now")
    duration: float = Field(description="Wall seconds the whole run plays for, as its settings stand")
    run_of: str
    stretches: list[Stretch] = Field(default_factory=list, description="The run's stretches of settings")
    simulated: float = Field(default=0, description="Simulated seconds now")

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
            "segments": encode(self.stretches),
        }


class Continuation(Protocol):
    """What resolve asks a live widget's engine, for the run as its settings stand."""

    def close(self, stretches: list[Stretch], simulated: float) -> tuple[float, tuple[float, ...]]:
        """The last stretch (with its own settings) run to `simulated`, or to the run's end if that comes first:
        the simulated seconds it ends at, and the state there."""
        ...

    def end(self, stretches: list[Stretch]) -> float:
        """Simulated seconds the run ends at, the last stretch continuing with the current settings."""
        ...


def _wall(params: LiveParams, now: float) -> tuple[float, float, float]:
    """Start of the running stretch, wall seconds before it, and wall seconds played in all; zeros on Reset or
    when the settings make it a different run."""
    new_run = bool(params.run_of) and params.run_of != params.fingerprint()
    if params.action == "reset" or new_run:
        return 0.0, 0.0, 0.0
    started = min(params.started_at, now)
    return started, params.elapsed, params.elapsed + (now - started if started else 0.0)


def _continue(stretches: list[Stretch], played: float, here: Stretch, run: Continuation) -> list[Stretch]:
    """Close the last stretch where the run stands when the settings (or the speed) changed, and open one there."""
    if not stretches:
        return []
    last = stretches[-1]
    if (last.speed, last.settings) == (here.speed, here.settings):
        return stretches
    at, state = run.close(stretches, last.simulated(played))
    begun = max(last.played, last.played_at(at))
    if begun <= last.played:  # the last stretch never played: the new settings take its place
        return [*stretches[:-1], Stretch.of(last.played, last.at, here.speed, last.state, here.settings)]
    kept = [*stretches, Stretch.of(begun, at, here.speed, state, here.settings)]
    while len(kept) > MAX_STRETCHES:
        del kept[1]  # the oldest change merges into the first stretch
    return kept


def resolve(params: LiveParams, speed: float, now: float, run: Continuation) -> LiveState:
    """Apply the button pressed, and any change of settings, at wall time `now`.

    Changing a setting continues the run from where it is, with the new settings (issue 13, item 3): the time
    played, the simulated time and the run's state stay, only Reset (or a new model) goes back to the beginning.
    A run that reaches its end stops there."""
    started, elapsed, played = _wall(params, now)
    fresh = [] if played == 0 and not started else params.stretches()
    first = Stretch.of(0, 0, speed, (0.0,) * params.STATE_SIZE, params.stretch_settings())
    stretches = _continue(fresh, played, first, run)
    duration = _duration(stretches or [first], run)
    if params.action == "start":
        if played >= duration:
            played, stretches, duration = 0.0, [], _duration([first], run)
        started, elapsed = now, played
    elif params.action == "pause" and started:
        started, elapsed = 0.0, played
    if started or played > 0:
        stretches = stretches or [first]
    if played >= duration:
        started, elapsed, played = 0.0, duration, duration
    status: Status = "finished" if played >= duration else "running" if started else "paused" if played else "ready"
    return LiveState(
        status=status, started_at=started, elapsed=elapsed, played=played, duration=duration,
        run_of=params.fingerprint(), stretches=stretches,
        simulated=stretches[-1].simulated(played) if stretches else 0.0,
    )


def _duration(stretches: list[Stretch], run: Continuation) -> float:
    """Wall seconds the run plays for: to the last change, then to its end at the last stretch's speed."""
    return stretches[-1].played_at(run.end(stretches))


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
