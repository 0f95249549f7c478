"""Load lessons from disk, collecting every problem with its file and line."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import yaml
from markdown_it import MarkdownIt
from markdown_it.rules_inline import StateInline
from markdown_it.token import Token
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from app.drills.author_errors import messages
from app.drills.declared_check import line_of, yaml_lines
from app.lessons.expressions import Evaluator, ExpressionError
from app.lessons.glossary import MARKER, Glossary, load_glossary, render_marker
from app.lessons.model import Block, Lesson, LessonProblems, Problem, SectionInfo, Step, StepMeta

FENCE_KINDS = ("widget", "drill", "cheatsheet")
PROSE_FENCES = ("reveal",)  # Markdown inside, shown once the step's guesses are committed
SLUG = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")

MAX_DRILL_NAME = 64  # a drill's name is stored in a 64-character column (drill_attempts, drill_state)

# Validates a block (kind, name, YAML body as data, YAML body as written); returns a message per problem (empty when
# the block is good). A message with an `offset` attribute is that many lines below the block's fence line.
BlockValidator = Callable[[str, str, dict[str, Any], str], list[str]]


class SectionSpec(BaseModel):
    model_config = ConfigDict(extra="forbid")
    title: str = Field(min_length=1)
    steps: list[str] = Field(min_length=1)


class LessonSpec(BaseModel):
    model_config = ConfigDict(extra="forbid")
    slug: str
    title: str = Field(min_length=1)
    summary: str = Field(min_length=1)
    minutes: float = Field(gt=0)
    order: int = 100
    presentable: bool = False
    sections: list[SectionSpec] = Field(min_length=1)


def _yaml_line(exc: yaml.YAMLError, offset: int) -> int:
    mark = getattr(exc, "context_mark", None) or getattr(exc, "problem_mark", None)
    return offset + (mark.line if mark is not None else 0)


def _yaml_text(exc: yaml.YAMLError, source: str = "") -> str:
    """A one-line reason for a YAML error, with how to fix the usual slip: a value holding ': ' not in quotes."""
    parts = [getattr(exc, "context", None), getattr(exc, "problem", None)]
    text = " ".join(("; ".join(p for p in parts if p) or str(exc).splitlines()[0]).split())
    mark = getattr(exc, "problem_mark", None)
    if "mapping values are not allowed" in text and mark is not None and source:
        line = source.splitlines()[mark.line] if mark.line < len(source.splitlines()) else ""
        key, _, value = line.partition(": ")
        quoted = value.strip().replace("\\", "\\\\").replace('"', '\\"')
        example = f': write {key.strip()}: "{quoted}"' if key.strip() and value.strip() else ""
        text += f" (a value that holds ': ' must be in quotes{example})"
    return text


def _field_messages(err: ValidationError, model: type[BaseModel], source: str, first: int) -> list[tuple[int, str]]:
    """(line, message) of each error of `err`, at the line of its key in `source` (whose first line is `first`)."""
    lines = yaml_lines(source)
    return [(first - 1 + (line_of(lines, loc) or 1), msg) for loc, msg in messages(err, model)]


def split_front_matter(text: str) -> tuple[str, str, int]:
    """(front matter, body, line number of the body's first line); no front matter gives ''."""
    lines = text.splitlines(keepends=True)
    if not lines or lines[0].strip() != "---":
        return "", text, 1
    for i in range(1, len(lines)):
        if lines[i].strip() == "---":
            return "".join(lines[1:i]), "".join(lines[i + 1 :]), i + 2
    raise ValueError("front matter starts with --- but never ends")


class StepRenderer:
    """Markdown to blocks: prose becomes HTML; widget, drill and cheatsheet fences become blocks."""

    def __init__(self, evaluator: Evaluator, glossary: Glossary | None = None) -> None:
        self.md = MarkdownIt("commonmark", {"html": False, "typographer": True}).enable(["table", "replacements"])
        self.md.inline.ruler.before("link", "glossary_term", _term_rule)
        def render_term(_renderer: object, tokens: Sequence[Token], idx: int, options: Any, env: dict[str, Any]) -> str:
            return self._render_term(tokens, idx, env)

        self.md.add_render_rule("glossary_term", render_term)
        self.evaluator = evaluator
        self.glossary = glossary or Glossary()

    def _render_term(self, tokens: Sequence[Token], idx: int, env: dict[str, Any]) -> str:
        """A `[[term]]` or `[[term|shown text]]` marker: the shown text with its definition (see render_marker)."""
        name, shown = tokens[idx].meta["name"], tokens[idx].meta["shown"]
        env["terms"] = env.get("terms", 0) + 1
        term = self.glossary.find(name)
        uid = f"def-{term.anchor.removeprefix('term-')}-{env['terms']}" if term else ""
        return render_marker(term, shown or name, uid)

    def render(self, body: str, first_line: int, file: str, problems: list[Problem]) -> tuple[list[Block], int]:
        """Blocks of the body and its prose word count."""
        body = self._substitute(body, first_line, file, problems)
        env: dict[str, Any] = {}  # one per step: numbers its definitions so their ids are unique on the page
        tokens = self.md.parse(body, env)
        blocks: list[Block] = []
        pending: list[Token] = []
        for tok in tokens:
            kind, _, name = tok.info.strip().partition(" ")
            if tok.type == "fence" and kind in PROSE_FENCES:
                self._flush(pending, blocks, env)
                line = first_line + (tok.map[0] if tok.map else 0)
                blocks.append(Block(kind="reveal", html=self.md.render(tok.content, env), line=line))
            elif tok.type == "fence" and kind in FENCE_KINDS:
                self._flush(pending, blocks, env)
                line = first_line + (tok.map[0] if tok.map else 0)
                blocks.append(self._fence_block(kind, name.strip(), tok.content, line, file, problems))
            else:
                pending.append(tok)
        self._flush(pending, blocks, env)
        words = len(re.findall(r"[A-Za-z0-9']+", _prose_only(MARKER.sub(lambda m: m.group(2) or m.group(1), body))))
        return blocks, words

    def _substitute(self, body: str, first_line: int, file: str, problems: list[Problem]) -> str:
        out, in_fence, prose_fence = [], False, False
        for i, line in enumerate(body.splitlines(keepends=True)):
            if line.lstrip().startswith("```"):
                in_fence = not in_fence
                prose_fence = in_fence and line.strip()[3:].strip() in PROSE_FENCES
            if not in_fence or prose_fence:
                try:
                    line = self.evaluator.substitute(line)
                except ExpressionError as exc:
                    problems.append(Problem(file=file, line=first_line + i, message=str(exc)))
            out.append(line)
        return "".join(out)

    def _flush(self, pending: list[Token], blocks: list[Block], env: dict[str, Any]) -> None:
        if pending:
            html = self.md.renderer.render(pending, self.md.options, env)
            blocks.append(Block(kind="html", html=html))
            pending.clear()

    @staticmethod
    def _fence_block(kind: str, name: str, content: str, line: int, file: str, problems: list[Problem]) -> Block:
        params: dict[str, Any] = {}
        bad = False
        try:
            loaded = yaml.safe_load(content) if content.strip() else {}
            if not isinstance(loaded, dict):
                raise yaml.YAMLError("the block's body must be a YAML mapping of parameters (key: value lines)")
            params = loaded
        except yaml.YAMLError as exc:
            bad = True  # one problem for the slip, not a second one about the block it spoils
            problems.append(Problem(file=file, line=_yaml_line(exc, line + 1),
                                    message=f"bad YAML in {kind} block: {_yaml_text(exc, content)}"))
        if kind != "cheatsheet" and not name:
            problems.append(Problem(file=file, line=line, message=f"{kind} block needs a name: ```{kind} NAME"))
        return Block(kind=kind, name=name, params=params, line=line, source=content, bad_yaml=bad)


def _term_rule(state: StateInline, silent: bool) -> bool:
    """`[[term]]` or `[[term|shown text]]` becomes a glossary_term token (before the link rule sees the brackets)."""
    match = MARKER.match(state.src, state.pos)
    if match is None:
        return False
    if not silent:
        token = state.push("glossary_term", "", 0)
        token.meta = {"name": match.group(1).strip(), "shown": (match.group(2) or "").strip()}
    state.pos = match.end()
    return True


def _prose_only(body: str) -> str:
    """The body without its widget, drill and cheat-sheet blocks (a reveal block is prose)."""
    return re.sub(r"```(?!reveal)[^\n]*\n.*?```", " ", body, flags=re.S)


def load_lesson(
    folder: Path, renderer: StepRenderer, validate: BlockValidator | None, problems: list[Problem]
) -> Lesson | None:
    """One lesson from its folder; None when lesson.yaml itself is unusable."""
    spec_file = folder / "lesson.yaml"
    text = spec_file.read_text(encoding="utf-8")
    try:
        raw = yaml.safe_load(text)
        spec = LessonSpec.model_validate(raw)
    except yaml.YAMLError as exc:
        problems.append(Problem(file=str(spec_file), line=_yaml_line(exc, 1),
                                message=f"bad YAML: {_yaml_text(exc, text)}"))
        return None
    except ValidationError as exc:
        problems.extend(Problem(file=str(spec_file), line=n, message=m)
                        for n, m in _field_messages(exc, LessonSpec, text, 1))
        return None
    if not SLUG.match(spec.slug):
        problems.append(
            Problem(file=str(spec_file), line=1, message=f"slug '{spec.slug}' must be lowercase words joined by -")
        )
    steps: list[Step] = []
    sections: list[SectionInfo] = []
    for section in spec.sections:
        numbers = []
        for name in section.steps:
            step = _load_step(folder / name, len(steps) + 1, section.title, renderer, validate, problems, spec_file)
            if step is not None:
                steps.append(step)
                numbers.append(step.number)
        sections.append(SectionInfo(title=section.title, steps=numbers))
    _name_declared_drills(spec.slug, steps, problems)
    return Lesson(
        slug=spec.slug,
        title=spec.title,
        summary=spec.summary,
        minutes=spec.minutes,
        order=spec.order,
        presentable=spec.presentable,
        path=folder,
        sections=sections,
        steps=steps,
    )


def _name_declared_drills(slug: str, steps: list[Step], problems: list[Problem]) -> None:
    """A drill declared in a lesson is named `lesson-slug/drill-id`: unique across lessons, stable in URLs."""
    seen: dict[str, Path] = {}
    for step in steps:
        for block in step.blocks:
            if not block.declared:
                continue
            block.name = f"{slug}/{block.name}"
            if block.name in seen:
                problems.append(Problem(file=str(step.file), line=block.line,
                                        message=f"drill '{block.name}' is declared twice (also in {seen[block.name]})"))
            if len(block.name) > MAX_DRILL_NAME:
                problems.append(Problem(file=str(step.file), line=block.line, message=f"drill name '{block.name}' "
                                        f"is longer than {MAX_DRILL_NAME} characters: shorten the drill's id"))
            seen[block.name] = step.file


def _load_step(
    path: Path,
    number: int,
    section: str,
    renderer: StepRenderer,
    validate: BlockValidator | None,
    problems: list[Problem],
    spec_file: Path,
) -> Step | None:
    if not path.is_file():
        line = _line_of(spec_file, path.name)
        problems.append(Problem(file=str(spec_file), line=line, message=f"step file '{path.name}' is missing"))
        return None
    text = path.read_text(encoding="utf-8")
    front = ""
    try:
        front, body, body_line = split_front_matter(text)
        meta = StepMeta.model_validate(yaml.safe_load(front) or {})
    except yaml.YAMLError as exc:
        problems.append(Problem(file=str(path), line=_yaml_line(exc, 2),
                                message=f"bad front matter: {_yaml_text(exc, front)}"))
        return None
    except ValidationError as exc:
        problems.extend(Problem(file=str(path), line=n, message=f"front matter: {m}")
                        for n, m in _field_messages(exc, StepMeta, front, 2))
        return None
    except ValueError as exc:
        problems.append(Problem(file=str(path), line=1, message=f"front matter: {exc}"))
        return None
    blocks, words = renderer.render(body, body_line, str(path), problems)
    if validate is not None:
        for block in blocks:
            if block.kind in ("widget", "drill") and block.name and not block.bad_yaml:
                for msg in validate(block.kind, block.name, block.params, block.source):
                    line = block.line + int(getattr(msg, "offset", 0))
                    problems.append(Problem(file=str(path), line=line, message=str(msg),
                                            warning=bool(getattr(msg, "warning", False))))
    return Step(number=number, file=path, section=section, meta=meta, blocks=blocks, words=words)


def _line_of(file: Path, needle: str) -> int:
    for i, line in enumerate(file.read_text(encoding="utf-8").splitlines(), start=1):
        if needle in line:
            return i
    return 1


def lesson_folders(roots: Path | Sequence[Path]) -> tuple[list[Path], list[Problem]]:
    """Every lesson folder (one holding lesson.yaml) in each root (a root may be one lesson's folder), each once,
    and a problem for a root that is missing."""
    folders: list[Path] = []
    problems: list[Problem] = []
    for root in [roots] if isinstance(roots, Path) else roots:
        if not root.is_dir():
            problems.append(Problem(file=str(root), line=0, message="lessons folder does not exist"))
        elif (root / "lesson.yaml").is_file():
            folders.append(root)
        else:
            folders += sorted(p for p in root.iterdir() if (p / "lesson.yaml").is_file())
    unique = {f.resolve(): f for f in reversed(folders)}  # the first mention of a folder wins
    return [f for f in folders if unique[f.resolve()] is f], problems


def duplicate_slugs(lessons: Sequence[Lesson]) -> list[Problem]:
    """A problem for every lesson whose slug an earlier one (in any folder) already has."""
    problems: list[Problem] = []
    seen: dict[str, Lesson] = {}
    for lesson in lessons:
        if lesson.slug in seen:
            problems.append(
                Problem(
                    file=str(lesson.path / "lesson.yaml"),
                    line=1,
                    message=f"duplicate slug '{lesson.slug}' (also in {seen[lesson.slug].path / 'lesson.yaml'})",
                )
            )
        seen.setdefault(lesson.slug, lesson)
    return problems


def load_lessons(
    roots: Path | Sequence[Path], validate: BlockValidator | None = None, strict: bool = True
) -> tuple[list[Lesson], list[Problem]]:
    """Every lesson in the root folder (or folders), ordered; with strict, raise LessonProblems when anything is
    wrong. A slug in two folders is a problem."""
    folders, problems = lesson_folders(roots)
    glossary, glossary_problems = load_glossary(roots)
    problems += glossary_problems
    renderer = StepRenderer(Evaluator(), glossary)
    lessons: list[Lesson] = []
    for folder in folders:
        lesson = load_lesson(folder, renderer, validate, problems)
        if lesson is not None:
            lessons.append(lesson)
    problems += duplicate_slugs(lessons)
    if strict and any(not p.warning for p in problems):
        raise LessonProblems(problems)
    return sorted(lessons, key=lambda le: (le.order, le.title)), problems


class Served(list[Lesson]):
    """The lessons a server serves, and those it does not because they have problems (`broken`, by slug)."""

    def __init__(self, lessons: Sequence[Lesson] = (), broken: dict[str, list[Problem]] | None = None) -> None:
        super().__init__(lessons)
        self.broken: dict[str, list[Problem]] = broken or {}


def owner_of(problem: Problem, lessons: Sequence[Lesson]) -> Lesson | None:
    """The lesson whose folder holds the problem's file, if any."""
    path = Path(problem.file).resolve()
    return next((le for le in lessons if le.path.resolve() in path.parents), None)


def served_lessons(roots: Path | Sequence[Path], validate: BlockValidator | None) -> tuple[Served, list[Problem]]:
    """The lessons to serve: every lesson that loads without a problem. A lesson with problems is left out and
    listed in `broken`, so one broken lesson never stops the others being served; the problems come back too."""
    lessons, problems = load_lessons(roots, validate, strict=False)
    by_folder: dict[Path, list[Problem]] = {}
    for problem in problems:
        lesson = owner_of(problem, lessons) if not problem.warning else None
        if lesson is not None:
            by_folder.setdefault(lesson.path.resolve(), []).append(problem)
    good = [le for le in lessons if le.path.resolve() not in by_folder]
    broken: dict[str, list[Problem]] = {}
    for lesson in lessons:
        if lesson.path.resolve() in by_folder and lesson.slug not in {g.slug for g in good}:
            broken.setdefault(lesson.slug, []).extend(by_folder[lesson.path.resolve()])
    return Served(good, broken), problems
