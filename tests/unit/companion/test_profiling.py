"""The profiling exercise's data file, its three phases and `gpu-classroom profile`."""

from __future__ import annotations

import hashlib
import io
import json
from pathlib import Path

import pytest
from pydantic import ValidationError

from app.cli import build_parser, cmd_profile, main, parse_size
from app.companion import profiling

EIGHT_MB = 8_000_000
# Fixed by the generator (version 1): change them only together with GENERATOR_VERSION.
EIGHT_MB_SHA256 = "2d9d5edf4630e64a277f7930637d6ba6c03b7c7b978580ee7f23f653e253bcd6"
EIGHT_MB_SUM = 438_224_571.10082  # exact: 43,822,457,110,082 × 10⁻⁵


def test_the_8_mb_file_is_the_same_bytes_every_time() -> None:
    first = hashlib.sha256(b"".join(profiling.data_chunks(EIGHT_MB))).hexdigest()
    second = hashlib.sha256(b"".join(profiling.data_chunks(EIGHT_MB))).hexdigest()
    assert first == second == EIGHT_MB_SHA256


def test_parsing_the_8_mb_file_gives_its_known_sum(tmp_path: Path) -> None:
    path = tmp_path / "numbers.csv"
    exact = profiling.write_file(path, EIGHT_MB)
    values = profiling.parse(profiling.read_bytes(path))
    assert len(values) == 800_000
    assert exact == EIGHT_MB_SUM
    assert sum(values) == pytest.approx(EIGHT_MB_SUM, rel=1e-12)  # float rounding of 800,000 additions


def test_every_row_is_ten_fixed_width_numbers_between_100_and_1000() -> None:
    chunk = next(profiling.data_chunks(10_000))
    rows = chunk.decode().splitlines()
    assert len(rows) == 100 and all(len(r) == 99 for r in rows)
    numbers = [float(x) for r in rows for x in r.split(",")]
    assert len(numbers) == 1000 and all(100 <= x < 1000 for x in numbers)
    assert len(set(numbers)) > 990  # not one value repeated


def test_a_size_that_is_not_whole_rows_is_refused() -> None:
    with pytest.raises(ValueError, match="multiple of 100"):
        next(profiling.data_chunks(150))


def test_the_server_cache_holds_the_same_bytes_and_the_exact_sum(tmp_path: Path) -> None:
    streamed = b"".join(profiling.stream_and_cache(tmp_path, 1_000_000))
    assert streamed == b"".join(profiling.data_chunks(1_000_000))
    assert profiling.cached_path(tmp_path, 1_000_000).read_bytes() == streamed
    parsed = sum(profiling.parse(streamed))
    assert profiling.cached_sum(tmp_path, 1_000_000) == pytest.approx(parsed, rel=1e-12)  # float rounding only
    assert list(tmp_path.glob("*.part")) == []


def test_an_interrupted_stream_leaves_no_half_file(tmp_path: Path) -> None:
    stream = profiling.stream_and_cache(tmp_path, 3_000_000)
    next(stream)
    stream.close()
    assert list(tmp_path.iterdir()) == []


def test_median_and_spread_come_from_the_samples() -> None:
    timing = profiling.PhaseTiming(seconds=[0.3, 0.1, 0.2, 0.5, 0.4])
    assert timing.median == pytest.approx(0.3, rel=1e-9)  # statistics of given numbers: float rounding only
    assert timing.spread == pytest.approx(0.4, rel=1e-9)  # statistics of given numbers: float rounding only
    claimed = profiling.PhaseTiming.model_validate({"seconds": [1.0, 3.0], "median": 99})
    assert claimed.median == pytest.approx(2.0, rel=1e-9)  # statistics of given numbers: float rounding only


def test_a_timing_that_is_not_positive_is_refused() -> None:
    with pytest.raises(ValidationError, match="positive"):
        profiling.PhaseTiming(seconds=[0.1, 0.0])


def test_the_kernel_is_a_fixed_sum_over_the_values() -> None:
    from array import array

    # y = x / 1000; ((y - 1.5)·y + 0.5)·y: 0 at y = 0.5 and y = 1, 0.048 at y = 0.2
    assert profiling.kernel(array("d", [500.0, 1000.0])) == pytest.approx(0.0, abs=1e-15)
    # statistics of given numbers: float rounding only
    assert profiling.kernel(array("d", [200.0])) == pytest.approx(0.048, rel=1e-9)


@pytest.mark.parametrize("text, mb", [("64MB", 64), ("8mb", 8), ("16", 16), (" 32 MB ", 32)])
def test_sizes_are_read_as_decimal_megabytes(text: str, mb: int) -> None:
    assert parse_size(text) == mb


BAD_ARGS = [["--size", "0MB"], ["--size", "lots"], ["--size", "9999MB"], ["--repeat", "0"]]


@pytest.mark.parametrize("args", BAD_ARGS)
def test_bad_arguments_exit_with_a_message(args: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["profile", *args])
    assert exc.value.code == 2
    assert "must be a whole number" in capsys.readouterr().err


def test_profile_json_prints_three_phases_with_positive_timings(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["profile", "--size", "8MB", "--repeat", "2", "--json"])
    captured = capsys.readouterr()
    assert code == 0
    report = json.loads(captured.out)
    assert set(report["phases"]) == {"read", "parse", "arithmetic"}
    for phase in report["phases"].values():
        assert len(phase["seconds"]) == 2 and all(s > 0 for s in phase["seconds"])
        assert phase["median"] > 0
    assert report["size_bytes"] == EIGHT_MB and report["values"] == 800_000
    assert report["checksum"] == pytest.approx(EIGHT_MB_SUM, rel=1e-12)  # float rounding only
    assert report["environment"]["cores"] >= 1
    assert "writing the 8 MB data file: 100 %" in captured.err and "repeat 2/2" in captured.err


def test_profile_prints_a_table_and_says_what_it_does_not_predict() -> None:
    args = build_parser().parse_args(["profile", "--size", "1MB", "--repeat", "3"])
    out, err = io.StringIO(), io.StringIO()
    assert cmd_profile(args, out, err) == 0
    text = out.getvalue()
    for phase in ("read", "parse", "arithmetic"):
        assert f"\n  {phase} " in text
    assert "predicts nothing about GPU training speed" in text
    assert "repeat 3/3" in err.getvalue() and "repeat 3/3" not in text


def test_the_temporary_file_is_removed_afterwards(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("tempfile.tempdir", str(tmp_path))
    args = build_parser().parse_args(["profile", "--size", "1MB", "--repeat", "1"])
    assert cmd_profile(args, io.StringIO(), io.StringIO()) == 0
    assert list(tmp_path.iterdir()) == []
