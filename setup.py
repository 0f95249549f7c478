"""Packaging beyond pyproject.toml: a wheel carries the built-in lessons inside the app package.

`pip install .` (a wheel) copies lessons/ to app/builtin_lessons/, where app.settings.builtin_lessons() finds them
wherever the command runs; an editable install (`pip install -e .`, the Makefile's) reads the checkout's lessons/.
"""

import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

LESSONS = Path(__file__).resolve().parent / "lessons"


class BuildWithLessons(build_py):
    """build_py, plus the built-in lessons as package data of `app` (not in editable mode: the checkout has them)."""

    def run(self) -> None:
        super().run()
        if not self.editable_mode and LESSONS.is_dir():
            target = Path(self.build_lib) / "app" / "builtin_lessons"
            shutil.rmtree(target, ignore_errors=True)
            shutil.copytree(LESSONS, target, ignore=shutil.ignore_patterns("__pycache__", ".*"))


setup(cmdclass={"build_py": BuildWithLessons})
