"""What an instructor does without Python: several lesson folders, `gpu-classroom new`, and author mode's
reloading (one lesson at a time, the last good version kept beside its problems)."""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from app.cli import main
from app.lessons.blocks import validate_lesson_block
from app.lessons.loader import load_lessons
from app.lessons.watch import AuthorLessons, lesson_folder_of
from app.main import create_app
from app.settings import Settings
from tests.conftest import FIXTURE_LESSONS, make_settings

ROOT = Path(__file__).resolve().parents[3]
DECLARED = ROOT / "tests" / "fixtures" / "declared"


def test_lessons_dirs_adds_folders_beside_lessons_dir_each_once(tmp_path: Path) -> None:
    extra = os.pathsep.join([str(tmp_path / "mine"), "lessons", str(tmp_path / "theirs")])
    dirs = Settings(lessons_dir=Path("lessons"), lessons_dirs=extra).lesson_dirs()
    assert dirs == [Path("lessons"), tmp_path / "mine", tmp_path / "theirs"]
    assert Settings(lessons_dir=Path("lessons")).lesson_dirs() == [Path("lessons")]


def test_the_environment_variable_sets_it(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("GPU_CLASSROOM_LESSONS_DIRS", f"{tmp_path}{os.pathsep}{DECLARED}")
    assert Settings().lesson_dirs()[1:] == [tmp_path, DECLARED]


def copy_lesson(source: Path, root: Path) -> Path:
    target = root / source.name
    shutil.copytree(source, target)
    return target


def test_a_slug_in_two_folders_is_a_check_error_naming_both(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    copy_lesson(FIXTURE_LESSONS / "tiny", tmp_path / "mine")
    _, problems = load_lessons([FIXTURE_LESSONS, tmp_path / "mine"], validate_lesson_block, strict=False)
    first = FIXTURE_LESSONS / "tiny" / "lesson.yaml"
    assert [p.message for p in problems] == [f"duplicate slug 'tiny' (also in {first})"]
    assert problems[0].file == str(tmp_path / "mine" / "tiny" / "lesson.yaml")
    assert main(["check", str(FIXTURE_LESSONS), str(tmp_path / "mine"), "--seeds", "2"]) == 1
    assert "duplicate slug 'tiny'" in capsys.readouterr().out


def test_check_takes_several_folders_or_one_lesson_folder(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", str(FIXTURE_LESSONS), str(DECLARED), "--seeds", "5"]) == 0
    assert "ok: 2 lesson(s), 3 steps" in capsys.readouterr().out
    assert main(["check", str(DECLARED / "training-state"), "--seeds", "5"]) == 0


def test_new_writes_a_lesson_that_passes_check_and_serves(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["new", "gpu-memory", "GPU memory: a first look", "--dir", str(tmp_path / "mine")]) == 0
    folder = tmp_path / "mine" / "gpu-memory"
    assert sorted(p.name for p in folder.iterdir()) == ["01-a-model-is-its-weights.md",
                                                        "02-drill-memory-for-the-weights.md", "lesson.yaml"]
    assert main(["check", str(tmp_path / "mine"), "--seeds", "50"]) == 0
    assert "ok: 1 lesson(s), 2 steps" in capsys.readouterr().out
    with TestClient(create_app(make_settings(tmp_path, tmp_path / "mine"))) as c:
        overview = c.get("/lessons/gpu-memory")
        assert overview.status_code == 200 and "GPU memory: a first look" in overview.text
        widget = c.get("/lessons/gpu-memory/1").text
        assert 'data-widget="weight-storage"' in widget
        assert "8.03 B parameters" in widget
        drill = c.get("/lessons/gpu-memory/2").text
        assert 'data-drill="gpu-memory/weights-to-serve"' in drill and "How much memory do the weights take?" in drill


def test_new_refuses_to_overwrite_and_refuses_a_bad_slug(tmp_path: Path) -> None:
    assert main(["new", "mine", "Mine", "--dir", str(tmp_path)]) == 0
    (tmp_path / "mine" / "lesson.yaml").write_text("my own work")
    assert main(["new", "mine", "Other", "--dir", str(tmp_path)]) == 1
    assert (tmp_path / "mine" / "lesson.yaml").read_text() == "my own work"
    assert main(["new", "Not A Slug", "X", "--dir", str(tmp_path)]) == 2
    assert not (tmp_path / "Not A Slug").exists()


def test_a_changed_file_belongs_to_the_lesson_folder_under_its_root(tmp_path: Path) -> None:
    roots = [tmp_path / "a", tmp_path / "b" / "one-lesson"]
    (tmp_path / "b" / "one-lesson").mkdir(parents=True)
    (tmp_path / "b" / "one-lesson" / "lesson.yaml").write_text("x")
    assert lesson_folder_of(tmp_path / "a" / "first" / "01.md", roots) == tmp_path / "a" / "first"
    assert lesson_folder_of(tmp_path / "b" / "one-lesson" / "02.md", roots) == tmp_path / "b" / "one-lesson"
    assert lesson_folder_of(tmp_path / "elsewhere.md", roots) is None


def authoring(tmp_path: Path) -> tuple[AuthorLessons, Path]:
    root = tmp_path / "lessons"
    folder = copy_lesson(FIXTURE_LESSONS / "tiny", root)
    copy_lesson(DECLARED / "training-state", root)
    state = AuthorLessons(roots=[root], validate=validate_lesson_block)
    state.load_all()
    return state, folder


def test_a_save_reloads_only_its_lesson_and_bumps_its_version(tmp_path: Path) -> None:
    state, folder = authoring(tmp_path)
    other = next(le for le in state.served() if le.slug == "training-state")
    step = folder / "01-first.md"
    step.write_text(step.read_text().replace("\n\n", "\n\nA sentence added while authoring.\n\n", 1))
    assert state.reload([folder]) == {"tiny"}
    tiny = next(le for le in state.served() if le.slug == "tiny")
    assert "A sentence added while authoring." in tiny.steps[0].blocks[0].html
    assert next(le for le in state.served() if le.slug == "training-state") is other  # not reloaded
    assert (state.version_of("tiny"), state.version_of("training-state")) == (2, 1)


def test_a_broken_save_keeps_the_last_good_version_beside_its_problem_and_a_fix_clears_it(tmp_path: Path) -> None:
    state, folder = authoring(tmp_path)
    good = next(le for le in state.served() if le.slug == "tiny")
    step = folder / "02-second.md"
    text = step.read_text()
    step.write_text(text + "\n```widget plan\ngpus: [1\n```\n")  # a YAML list left open
    state.reload([folder])
    problems = [str(p) for p in state.problems_of("tiny")]
    line = len(text.splitlines()) + 3  # the line after `gpus: [1`, where YAML finds the list unclosed
    assert problems == [f"{step}:{line}: bad YAML in widget block: while parsing a flow sequence; expected ',' or "
                        "']', but got '<stream end>'"], problems
    assert next(le for le in state.served() if le.slug == "tiny") is good
    assert state.shows_last_good("tiny")
    assert [p for p in state.problems_of("training-state") if not p.warning] == []  # a warning: few questions
    step.write_text(text)
    state.reload([folder])
    assert state.problems_of("tiny") == []


def test_a_new_lesson_folder_appears_and_a_duplicate_slug_is_a_problem(tmp_path: Path) -> None:
    state, _ = authoring(tmp_path)
    twin = copy_lesson(DECLARED / "training-state", tmp_path / "lessons" / "twin")
    shutil.move(str(twin), str(tmp_path / "lessons" / "training-state-copy"))
    state.reload([tmp_path / "lessons" / "training-state-copy"])
    messages = [p.message for p in state.problems_of("training-state")]
    assert any(m.startswith("duplicate slug 'training-state'") for m in messages), messages


def test_a_lesson_broken_from_the_start_is_served_as_far_as_it_loads_and_says_so(tmp_path: Path) -> None:
    root = tmp_path / "lessons"
    folder = copy_lesson(FIXTURE_LESSONS / "tiny", root)
    step = folder / "02-second.md"
    step.write_text(step.read_text() + "\n```widget plan\ngpus: [1\n```\n")
    state = AuthorLessons(roots=[root], validate=validate_lesson_block)
    state.load_all()
    assert [le.slug for le in state.served()] == ["tiny"] and len(state.problems_of("tiny")) == 1
    assert not state.shows_last_good("tiny")


def test_author_mode_alone_has_the_event_stream_and_the_banner(tmp_path: Path) -> None:
    settings = make_settings(tmp_path, FIXTURE_LESSONS)
    with TestClient(create_app(settings)) as plain:
        assert plain.get("/author/events?version=0&lesson=tiny").status_code == 404
        assert "author-mode" not in plain.get("/lessons/tiny/1").text
    with TestClient(create_app(settings, author=True)) as author:
        page = author.get("/lessons/tiny/1")
        assert 'data-author-events="/author/events?version=1&amp;lesson=tiny"' in page.text
        assert "script-src 'self'" in page.headers["content-security-policy"]
        assert re.findall(r"<script(?![^>]*\bsrc=)", page.text) == []  # no inline script: the CSP would block it
        events = author.get("/author/events?version=0&lesson=tiny")  # the page is older than the lesson
        assert events.headers["content-type"].startswith("text/event-stream")
        assert "event: reload\ndata: 1\n\n" in events.text
