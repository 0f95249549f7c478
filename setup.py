"""Packaging beyond pyproject.toml: a wheel carries the built-in lessons, the templates and the static files inside
the app package.

`pip install .` (a wheel) copies lessons/ to app/builtin_lessons/, where app.settings.builtin_lessons() finds them
wherever the command runs, and templates/ and static/ (with static/vendor/, so run `make frontend` first) to
app/site/, where app.web.templating finds them; an editable install (`pip install -e .`, the Makefile's) reads the
checkout's folders.
"""

import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

HERE = Path(__file__).resolve().parent
# folder of the checkout -> where a wheel keeps it inside the app package
PACKAGED = {"lessons": "builtin_lessons", "templates": "site/templates", "static": "site/static"}


class BuildWithSite(build_py):
    """build_py, plus the built-in lessons, templates and static files as package data of `app` (not in editable
    mode: the checkout has them)."""

    def run(self) -> None:
        super().run()
        if self.editable_mode:
            return
        for folder, inside in PACKAGED.items():
            if (HERE / folder).is_dir():
                target = Path(self.build_lib) / "app" / inside
                shutil.rmtree(target, ignore_errors=True)
                shutil.copytree(HERE / folder, target, ignore=shutil.ignore_patterns("__pycache__", ".*"))


setup(cmdclass={"build_py": BuildWithSite})
