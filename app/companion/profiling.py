"""The CPU-only profiling exercise: a generated CSV file, and reading, parsing and arithmetic timed apart.

The same data file is streamed by the server to the browser's Web Worker and written by
`gpu-classroom profile` to a temporary folder. It is deterministic: rows of ten fixed-width numbers
(100 bytes a row), drawn from a 64-bit linear congruential generator with a fixed seed, so a given size
always has the same bytes, the same SHA-256 and the same sum. None of this simulates hardware: it runs on
the learner's own CPU and predicts nothing about GPU training speed.
"""

from __future__ import annotations

import json
import os
import platform
import statistics
import tempfile
import time
from array import array
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, computed_field, field_validator

GENERATOR_VERSION = 1
VALUES_PER_ROW = 10
ROW_BYTES = 100  # ten 9-character numbers "ddd.ddddd", nine commas, one newline
SCALE = 100_000  # five decimals: a value is an integer count of 1e-5
LOW, SPAN = 100 * SCALE, 900 * SCALE  # values from 100.00000 to 999.99999
SEED = 20240607
# Knuth's MMIX linear congruential generator (The Art of Computer Programming, vol. 2, 3.3.4).
LCG_A, LCG_C, MASK64 = 6364136223846793005, 1442695040888963407, (1 << 64) - 1
ROWS_PER_CHUNK = 10_000  # 1 MB a chunk
MB = 10**6
MIN_MB, MAX_MB = 1, 512
WEB_MAX_MB = 64
WEB_SIZES_MB = (1, 2, 4, 8, 16, 32, 64)  # the sizes the server makes: a bounded cache of 127 MB in all
PHASES = ("read", "parse", "arithmetic")
ROW_FORMAT = ",".join(["%03d.%05d"] * VALUES_PER_ROW) + "\n"
SAFETY = (
    "It measures this computer's CPU on a small artificial job and predicts nothing about GPU training speed."
)


def size_bytes(size_mb: int) -> int:
    """Bytes of the data file of `size_mb` decimal megabytes (always a whole number of rows)."""
    return size_mb * MB


def value_count(nbytes: int) -> int:
    """Numbers in a data file of `nbytes` bytes."""
    return nbytes // ROW_BYTES * VALUES_PER_ROW


def data_chunks(nbytes: int, totals: list[int] | None = None) -> Iterator[bytes]:
    """The data file of `nbytes` bytes (a multiple of 100) in chunks of about 1 MB.

    When `totals` is given, the exact sum of every value, in units of 1e-5, is appended to it at the end.
    """
    if nbytes <= 0 or nbytes % ROW_BYTES:
        raise ValueError(f"the data file size must be a positive multiple of {ROW_BYTES} bytes")
    state, rows, total = SEED, nbytes // ROW_BYTES, 0
    while rows:
        n = min(rows, ROWS_PER_CHUNK)
        out: list[str] = []
        for _ in range(n):
            args: list[int] = []
            for _ in range(VALUES_PER_ROW):
                state = (state * LCG_A + LCG_C) & MASK64
                v = (state >> 34) % SPAN
                total += v
                args += (100 + v // SCALE, v % SCALE)
            out.append(ROW_FORMAT % tuple(args))
        rows -= n
        yield "".join(out).encode("ascii")
    if totals is not None:
        totals.append(total + LOW * value_count(nbytes))


def exact_sum(units: int) -> float:
    """A sum kept in units of 1e-5, as a float."""
    return units / SCALE


def etag(nbytes: int) -> str:
    """A strong ETag: the file depends only on the generator's version and the size."""
    return f'"profile-v{GENERATOR_VERSION}-{nbytes}"'


# --- the cached file the server streams -----------------------------------------------------------------


def cached_path(cache_dir: Path, nbytes: int) -> Path:
    return cache_dir / f"profile-v{GENERATOR_VERSION}-{nbytes}.csv"


def cached_sum(cache_dir: Path, nbytes: int) -> float | None:
    """The exact sum of a file already generated in `cache_dir`, or None if it is not there yet."""
    meta = cached_path(cache_dir, nbytes).with_suffix(".json")
    try:
        return exact_sum(int(json.loads(meta.read_text())["sum_units"]))
    except (OSError, ValueError, KeyError):
        return None


def stream_and_cache(cache_dir: Path, nbytes: int) -> Iterator[bytes]:
    """Yield the file while writing it to `cache_dir`; the finished file appears there atomically."""
    cache_dir.mkdir(parents=True, exist_ok=True)
    final = cached_path(cache_dir, nbytes)
    fd, tmp_name = tempfile.mkstemp(dir=cache_dir, suffix=".part")
    tmp = Path(tmp_name)
    totals: list[int] = []
    try:
        with os.fdopen(fd, "wb") as out:
            for chunk in data_chunks(nbytes, totals):
                out.write(chunk)
                yield chunk
        final.with_suffix(".json").write_text(json.dumps({"sum_units": totals[0], "bytes": nbytes}))
        tmp.replace(final)
    finally:
        tmp.unlink(missing_ok=True)


def ensure_cached(cache_dir: Path, nbytes: int) -> None:
    """Generate the file of `nbytes` into `cache_dir` unless it is there already (the web app runs this in a
    worker process, one at a time, so the generator's CPU time never holds the event loop's GIL)."""
    if cached_path(cache_dir, nbytes).exists() and cached_sum(cache_dir, nbytes) is not None:
        return
    for _ in stream_and_cache(cache_dir, nbytes):
        pass


def write_file(path: Path, nbytes: int, progress: Callable[[int], None] | None = None) -> float:
    """Write the data file to `path`, reporting bytes written; returns the exact sum of its values."""
    totals: list[int] = []
    done = 0
    with path.open("wb") as out:
        for chunk in data_chunks(nbytes, totals):
            out.write(chunk)
            done += len(chunk)
            if progress:
                progress(done)
    return exact_sum(totals[0])


# --- the three phases, as the CLI runs them -------------------------------------------------------------


def read_bytes(path: Path) -> bytes:
    """Phase 1: the file's bytes into memory."""
    return path.read_bytes()


def parse(data: bytes) -> array[float]:
    """Phase 2: text into an array of 64-bit floats (the Python counterpart of a Float64Array)."""
    return array("d", map(float, data.replace(b"\n", b",").split(b",")[:-1]))


def kernel(values: array[float]) -> float:
    """Phase 3, the fixed arithmetic: scale each value to [0.1, 1) and sum a cubic, by Horner's rule."""
    acc = 0.0
    for x in values:
        y = x * 0.001
        acc += ((y - 1.5) * y + 0.5) * y
    return acc


# --- the report that both the CLI and the browser produce --------------------------------------------------


class PhaseTiming(BaseModel):
    """One phase timed `repeat` times; median and spread come from the samples, never taken as given."""

    model_config = ConfigDict(extra="ignore")

    seconds: list[float] = Field(min_length=1, max_length=50, description="Each repeat's time in seconds")

    @field_validator("seconds")
    @classmethod
    def _positive(cls, value: list[float]) -> list[float]:
        if any(not (0 < s < 3600) for s in value):
            raise ValueError("every timing must be a positive number of seconds below an hour")
        return value

    @computed_field  # type: ignore[prop-decorator]
    @property
    def median(self) -> float:
        """Median of the repeats."""
        return float(statistics.median(self.seconds))

    @computed_field  # type: ignore[prop-decorator]
    @property
    def spread(self) -> float:
        """Slowest minus fastest repeat."""
        return max(self.seconds) - min(self.seconds)

    @computed_field  # type: ignore[prop-decorator]
    @property
    def fastest(self) -> float:
        return min(self.seconds)

    @computed_field  # type: ignore[prop-decorator]
    @property
    def slowest(self) -> float:
        return max(self.seconds)


class Environment(BaseModel):
    """What produced the timings: browser or Python, processor and core count."""

    model_config = ConfigDict(extra="ignore")

    runtime: str = Field(max_length=200, description="Browser or Python version")
    platform: str = Field(default="", max_length=200, description="Operating system")
    processor: str = Field(default="", max_length=200, description="Processor, when it can be told")
    cores: int = Field(ge=1, le=4096, description="Logical cores the runtime reports")


class PhaseSet(BaseModel):
    model_config = ConfigDict(extra="ignore")

    read: PhaseTiming
    parse: PhaseTiming
    arithmetic: PhaseTiming


class ProfileReport(BaseModel):
    """The result of one profiling run, from `gpu-classroom profile --json` or from the browser."""

    model_config = ConfigDict(extra="ignore")

    source: Literal["terminal", "browser"] = Field(description="Where it ran")
    size_bytes: int = Field(ge=ROW_BYTES, le=MAX_MB * MB, description="Size of the data file")
    values: int = Field(ge=1, description="Numbers parsed")
    repeat: int = Field(ge=1, le=50, description="Times each phase ran")
    environment: Environment
    phases: PhaseSet
    checksum: float = Field(allow_inf_nan=False, description="Sum of the parsed values")
    kernel_result: float | None = Field(
        default=None, allow_inf_nan=False, description="What the arithmetic gave"
    )
    measured_at: datetime | None = Field(default=None, description="When it ran, if the tool said")

    @property
    def size_mb(self) -> float:
        """Size of the data file in decimal megabytes."""
        return self.size_bytes / MB

    def rows(self) -> list[tuple[str, PhaseTiming]]:
        """The three phases in order, with their timings."""
        return [(p, getattr(self.phases, p)) for p in PHASES]

    def slowest_phase(self) -> str:
        """The phase with the largest median."""
        return max(PHASES, key=lambda p: getattr(self.phases, p).median)


def environment() -> Environment:
    """This Python and this machine."""
    return Environment(
        runtime=f"{platform.python_implementation()} {platform.python_version()}",
        platform=platform.platform(terse=True)[:200],
        processor=_processor()[:200],
        cores=os.cpu_count() or 1,
    )


def _processor() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def run_profile(
    path: Path,
    repeat: int,
    log: Callable[[str], None] = lambda _: None,
    clock: Callable[[], float] = time.perf_counter,
) -> ProfileReport:
    """Read, parse and compute over the file `repeat` times, each phase timed on its own."""
    times: dict[str, list[float]] = {p: [] for p in PHASES}
    total, count, result = 0.0, 0, 0.0
    for r in range(1, repeat + 1):
        t0 = clock()
        data = read_bytes(path)
        t1 = clock()
        values = parse(data)
        t2 = clock()
        result = kernel(values)
        t3 = clock()
        for phase, secs in zip(PHASES, (t1 - t0, t2 - t1, t3 - t2), strict=True):
            times[phase].append(max(secs, 1e-9))
        total, count = sum(values), len(values)
        log(f"repeat {r}/{repeat}: read {_fmt(t1 - t0)}, parse {_fmt(t2 - t1)}, arithmetic {_fmt(t3 - t2)}")
    return ProfileReport(
        source="terminal", size_bytes=path.stat().st_size, values=count, repeat=repeat,
        environment=environment(), phases=PhaseSet(**{p: PhaseTiming(seconds=times[p]) for p in PHASES}),
        checksum=total, kernel_result=result,
        measured_at=datetime.now(UTC).replace(microsecond=0),
    )


def _fmt(seconds: float) -> str:
    return f"{seconds * 1e3:,.1f} ms" if seconds < 1 else f"{seconds:,.2f} s"


def table(report: ProfileReport) -> str:
    """The report as a plain-text table for the terminal."""
    env = report.environment
    lines = [
        f"{report.size_bytes / MB:,.0f} MB of CSV, {report.values:,} numbers, "
        f"each phase {report.repeat} times",
        f"{env.runtime} on {env.processor or 'an unknown processor'}, {env.cores} logical cores",
        "",
        f"  {'phase':<11} {'median':>11} {'spread':>11} {'fastest':>11} {'slowest':>11}",
    ]
    for name in PHASES:
        p = getattr(report.phases, name)
        cells = (_fmt(p.median), _fmt(p.spread), _fmt(p.fastest), _fmt(p.slowest))
        lines.append(f"  {name:<11} " + " ".join(f"{c:>11}" for c in cells))
    lines += ["", f"Slowest phase: {report.slowest_phase()}. Spread = slowest minus fastest repeat.", SAFETY]
    return "\n".join(lines)
