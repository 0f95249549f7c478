"""Author mode without the web: the lessons an author edits, reloaded one lesson at a time on each save.

A lesson that now has problems keeps being served as it last loaded without any (its last good version),
beside its problems; a lesson that never loaded cleanly is served as far as it loads. Every reload bumps the
lesson's version, so its open pages know to refresh.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from app.lessons.expressions import Evaluator
from app.lessons.glossary import load_glossary
from app.lessons.loader import BlockValidator, StepRenderer, duplicate_slugs, lesson_folders, load_lesson
from app.lessons.model import Lesson, Problem


def lesson_folder_of(path: Path, roots: Sequence[Path]) -> Path | None:
    """The lesson folder a changed file belongs to: the root itself when it is a lesson's folder, else the
    folder right under the root; None for a file outside every root."""
    target = path.resolve()
    for root in roots:
        top = root.resolve()
        if target != top and top not in target.parents:
            continue
        if (top / "lesson.yaml").is_file() or target == top:
            return root
        return root / target.relative_to(top).parts[0]
    return None


@dataclass
class AuthorLessons:
    """The lessons served in author mode, each lesson's problems and a version per lesson slug."""

    roots: list[Path]
    validate: BlockValidator | None
    lessons: dict[Path, Lesson] = field(default_factory=dict)  # by folder, resolved
    problems: dict[Path, list[Problem]] = field(default_factory=dict)
    versions: dict[str, int] = field(default_factory=dict)
    version: int = 0  # grows on every reload of any lesson
    clean: dict[Path, bool] = field(default_factory=dict)  # whether the version served loaded without problems
    root_problems: list[Problem] = field(default_factory=list)
    # One renderer for every reload: an expression's value depends on the engine alone, so its cache stays right
    # and a save re-evaluates only the expressions it changed.
    renderer: StepRenderer = field(default_factory=lambda: StepRenderer(Evaluator()), repr=False)

    def load_all(self) -> None:
        folders, self.root_problems = lesson_folders(self.roots)
        glossary, glossary_problems = load_glossary(self.roots)
        self.root_problems += glossary_problems
        self.renderer.glossary = glossary
        self.reload(folders)

    def served(self) -> list[Lesson]:
        """The lessons to serve, in the home page's order."""
        return sorted(self.lessons.values(), key=lambda le: (le.order, le.title))

    def reload(self, folders: Iterable[Path]) -> set[str]:
        """Reload these lesson folders (a folder without lesson.yaml is a lesson removed); the slugs touched."""
        touched: set[str] = set()
        for folder in folders:
            touched |= self._reload_one(folder)
        self._mark_duplicates()
        self.version += 1
        for slug in touched:
            self.versions[slug] = self.versions.get(slug, 0) + 1
        return touched

    def _reload_one(self, folder: Path) -> set[str]:
        key = folder.resolve()
        old = self.lessons.get(key)
        touched = {old.slug} if old else set()
        if not (folder / "lesson.yaml").is_file():
            self.lessons.pop(key, None)
            self.problems.pop(key, None)
            self.clean.pop(key, None)
            return touched
        problems: list[Problem] = []
        new = load_lesson(folder, self.renderer, self.validate, problems)
        self.problems[key] = problems
        broken = any(not p.warning for p in problems)
        if new is not None and (not broken or old is None or old.slug != new.slug):
            self.lessons[key] = new
            self.clean[key] = not broken
        return touched | ({new.slug} if new else set())

    def _mark_duplicates(self) -> None:
        for key in self.problems:
            self.problems[key] = [p for p in self.problems[key] if not p.message.startswith("duplicate slug")]
        for problem in duplicate_slugs(list(self.lessons.values())):
            self.problems.setdefault(Path(problem.file).parent.resolve(), []).append(problem)

    def problems_of(self, slug: str | None) -> list[Problem]:
        """The problems of the lesson with this slug (every lesson's, for None), and of missing folders."""
        found = list(self.root_problems)
        for key, problems in self.problems.items():
            lesson = self.lessons.get(key)
            if slug is None or (lesson is not None and lesson.slug == slug):
                found += problems
        return found

    def shows_last_good(self, slug: str) -> bool:
        """Whether the lesson served under this slug is a version that loaded without problems."""
        return any(le.slug == slug and self.clean.get(key, False) for key, le in self.lessons.items())

    def version_of(self, slug: str | None) -> int:
        return self.version if slug is None else self.versions.get(slug, 0)
