"""The lesson loader and `gpu-classroom check`: good lessons load, broken ones name file and line."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from app.cli import main
from app.lessons.blocks import validate_lesson_block
from app.lessons.loader import load_lessons
from app.lessons.model import LessonProblems

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "lessons"


@pytest.fixture
def lessons_dir(tmp_path: Path) -> Path:
    target = tmp_path / "lessons"
    shutil.copytree(FIXTURES, target)
    return target


def run_check(path: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, list[str]]:
    code = main(["check", str(path), "--seeds", "3"])
    out = capsys.readouterr().out
    return code, [line for line in out.splitlines() if line]


def test_a_lesson_loads_with_steps_numbered_from_one() -> None:
    lessons, problems = load_lessons(FIXTURES, validate_lesson_block)
    assert problems == []
    tiny = lessons[0]
    assert [s.number for s in tiny.steps] == [1, 2]
    assert [s.section for s in tiny.steps] == ["First section", "Second section"]
    assert tiny.steps[0].meta.formula == "bytes = parameters × bits ÷ 8"


def test_widget_fences_become_widget_blocks_and_prose_becomes_html() -> None:
    lessons, _ = load_lessons(FIXTURES, validate_lesson_block)
    kinds = [b.kind for b in lessons[0].steps[0].blocks]
    assert kinds == ["html", "widget", "html"]
    widget = lessons[0].steps[0].blocks[1]
    assert widget.name == "weight-storage" and widget.params == {"parameters": "7e9", "bits": 16}
    assert widget.line == 10


def test_check_passes_on_good_lessons(lessons_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, lines = run_check(lessons_dir, capsys)
    assert code == 0 and lines[-1].startswith("ok: 1 lesson(s), 2 steps")


def _edit(file: Path, old: str, new: str) -> None:
    file.write_text(file.read_text().replace(old, new))


def test_check_reports_an_unknown_widget_with_its_line(lessons_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _edit(lessons_dir / "tiny" / "01-first.md", "```widget weight-storage", "```widget no-such-widget")
    code, lines = run_check(lessons_dir, capsys)
    assert code == 1
    line = next(x for x in lines if "unknown widget" in x)
    assert line.startswith(f"{lessons_dir / 'tiny' / '01-first.md'}:10: unknown widget 'no-such-widget'; the widgets: ")
    assert "weight-storage" in line and "plan" in line  # the names an author can use


def test_check_reports_a_parameter_the_widget_refuses(lessons_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _edit(lessons_dir / "tiny" / "01-first.md", "bits: 16", "bits: 12")
    code, lines = run_check(lessons_dir, capsys)
    assert code == 1
    assert any(
        line.endswith("01-first.md:12: widget weight-storage: bits: Choose one of: 32, 16, 8, 4.") for line in lines
    )


def test_check_reports_an_unknown_setting(lessons_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _edit(lessons_dir / "tiny" / "01-first.md", "bits: 16", "bits: 16\ncolour: red")
    code, lines = run_check(lessons_dir, capsys)
    assert code == 1 and any("unknown setting 'colour'" in line for line in lines)


def test_check_reports_bad_yaml_in_a_block_at_its_line(lessons_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _edit(lessons_dir / "tiny" / "01-first.md", "bits: 16", "bits: [16")
    code, lines = run_check(lessons_dir, capsys)
    assert code == 1
    assert any(":12: bad YAML in widget block: while parsing a flow sequence" in line for line in lines)


def test_check_reports_bad_front_matter(lessons_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _edit(lessons_dir / "tiny" / "02-second.md", "title: The second step\n", "")
    code, lines = run_check(lessons_dir, capsys)
    assert code == 1 and any("02-second.md:2: front matter: the key 'title' is missing" in line for line in lines)


def test_check_reports_a_missing_step_file(lessons_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (lessons_dir / "tiny" / "02-second.md").unlink()
    code, lines = run_check(lessons_dir, capsys)
    assert code == 1
    assert f"{lessons_dir / 'tiny' / 'lesson.yaml'}:10: step file '02-second.md' is missing" in lines


def test_check_reports_a_duplicate_slug(lessons_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    shutil.copytree(lessons_dir / "tiny", lessons_dir / "tiny-copy")
    code, lines = run_check(lessons_dir, capsys)
    assert code == 1 and any("duplicate slug 'tiny'" in line for line in lines)


def test_check_reports_bad_lesson_yaml(lessons_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (lessons_dir / "tiny" / "lesson.yaml").write_text("slug: tiny\ntitle: [unclosed\n")
    code, lines = run_check(lessons_dir, capsys)
    assert code == 1 and any("lesson.yaml:" in line and "bad YAML" in line for line in lines)


def test_check_reports_an_expression_that_fails(lessons_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _edit(lessons_dir / "tiny" / "02-second.md", "The last step", "The last {{ no_such_name() }} step")
    code, lines = run_check(lessons_dir, capsys)
    assert code == 1 and any("02-second.md:7: cannot evaluate {{no_such_name()}}" in line for line in lines)


def test_expressions_run_in_a_sandbox(lessons_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _edit(lessons_dir / "tiny" / "02-second.md", "The last step", "{{ ''.__class__.__mro__ }}")
    code, lines = run_check(lessons_dir, capsys)
    assert code == 1 and any("cannot evaluate" in line for line in lines)


def test_strict_loading_raises_with_every_problem(lessons_dir: Path) -> None:
    _edit(lessons_dir / "tiny" / "01-first.md", "```widget weight-storage", "```widget nope")
    with pytest.raises(LessonProblems) as info:
        load_lessons(lessons_dir, validate_lesson_block)
    assert "unknown widget 'nope'" in str(info.value)


def test_the_shipped_lessons_pass_check(capsys: pytest.CaptureFixture[str]) -> None:
    root = Path(__file__).resolve().parents[3] / "lessons"
    code, lines = run_check(root, capsys)
    assert code == 0, "\n".join(lines)


def test_a_reveal_block_is_prose_with_its_expressions_evaluated(lessons_dir: Path) -> None:
    step = lessons_dir / "tiny" / "02-second.md"
    step.write_text(step.read_text() + "\n```reveal\nThe answer is **{{ 6 | num }}** words long.\n```\n")
    lessons, problems = load_lessons(lessons_dir, validate_lesson_block)
    assert problems == []
    reveal = [b for b in lessons[0].steps[1].blocks if b.kind == "reveal"]
    assert len(reveal) == 1 and "<strong>6</strong>" in reveal[0].html
    assert lessons[0].steps[1].words >= 12  # the reveal's words count as prose
