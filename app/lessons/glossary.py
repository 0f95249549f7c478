"""The glossary: each term once, its definition and the step that teaches it; `[[term]]` markers in prose.

`glossary.yaml` sits in a lessons root folder beside the lesson folders. Each entry names the step that teaches
the term as `lesson-slug/step-file.md`; the loader turns that into a step number from the lesson's lesson.yaml.
"""

from __future__ import annotations

import html
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, ValidationError

from app.lessons.model import Problem

GLOSSARY_FILE = "glossary.yaml"
MARKER = re.compile(r"\[\[([^\[\]\n|]+)(?:\|([^\[\]\n]+))?\]\]")


class TermSpec(BaseModel):
    model_config = ConfigDict(extra="forbid")
    term: str = Field(min_length=1)
    aliases: list[str] = Field(default_factory=list)
    definition: str = Field(min_length=1)
    taught_in: str = Field(pattern=r"^[a-z0-9-]+/[^/]+\.md$", description="lesson-slug/step-file.md")


class Term(BaseModel):
    """A glossary term with the step that teaches it resolved to a lesson slug and step number."""

    term: str
    aliases: list[str]
    definition: str
    lesson: str
    step: int
    step_title: str = ""
    lesson_title: str = ""
    file: str = ""
    line: int = 0

    @property
    def anchor(self) -> str:
        """The term's id on the glossary page."""
        return "term-" + re.sub(r"[^a-z0-9]+", "-", self.term.lower()).strip("-")

    @property
    def step_url(self) -> str:
        return f"/lessons/{self.lesson}/{self.step}"

    @property
    def step_label(self) -> str:
        """The teaching step named with its lesson ("What AI Workloads Need · step 9: Follow one request"): three
        lessons each have a step 3, so a bare "Step 3" is ambiguous."""
        where = f"{self.lesson_title} · step {self.step}" if self.lesson_title else f"Step {self.step}"
        return f"{where}: {self.step_title}" if self.step_title else where

    def names(self) -> list[str]:
        return [self.term, *self.aliases]

    def pattern(self) -> re.Pattern[str]:
        """Where the term (or an alias, or its plural) is used in prose: whole words; an all-lowercase name matches
        any case ("Token" opens a sentence), a name with capitals matches exactly (FLOPs is a count, FLOPS a rate)."""
        lower = [re.escape(n) for n in self.names() if n == n.lower()]
        exact = [re.escape(n) for n in self.names() if n != n.lower()]
        parts = []
        if lower:
            parts.append(r"(?i:" + "|".join(sorted(lower, key=len, reverse=True)) + r")")
        if exact:
            parts.append("|".join(sorted(exact, key=len, reverse=True)))
        return re.compile(r"(?<![\w/])(?:" + "|".join(parts) + r")(?:s|es)?(?![\w/])")


class Glossary(BaseModel):
    """Every term of the lesson roots, in the order written."""

    terms: list[Term] = Field(default_factory=list)
    _linkers: dict[frozenset[str], TermLinker] = PrivateAttr(default_factory=dict)

    def linker(self, lesson: str, step: int, order: Mapping[str, int]) -> TermLinker:
        """Links the terms a learner on `lesson`'s step `step` has not been taught yet (`order`: each lesson's place
        on the home page; a term of a later lesson counts as not yet taught), built once per set of terms."""
        names = frozenset(t.term for t in self.terms if taught_later(t, lesson, step, order))
        found = self._linkers.get(names)
        if found is None:
            found = self._linkers[names] = TermLinker([t for t in self.terms if t.term in names])
        return found

    def find(self, name: str) -> Term | None:
        """The term a marker names: its term or an alias, any case, or their plural."""
        wanted = name.strip()
        for fold in (False, True):  # exact spelling first: FLOPs (a count) and FLOPS (a rate) differ only in case
            key = wanted.lower() if fold else wanted
            for term in self.terms:
                names = [n.lower() if fold else n for n in term.names()]
                if key in names or key.removesuffix("s") in names or key.removesuffix("es") in names:
                    return term
        return None

    def sorted(self) -> list[Term]:
        return sorted(self.terms, key=lambda t: t.term.lower())


def _step_numbers(roots: Sequence[Path]) -> dict[str, tuple[int, str, str]]:
    """'lesson-slug/step-file.md' -> (step number, title, lesson title) from lesson.yaml and front matter."""
    out: dict[str, tuple[int, str, str]] = {}
    for root in roots:
        folders = [root] if (root / "lesson.yaml").is_file() else sorted(p for p in root.iterdir() if p.is_dir())
        for folder in folders:
            try:
                spec = yaml.safe_load((folder / "lesson.yaml").read_text(encoding="utf-8"))
                files = [f for section in spec["sections"] for f in section["steps"]]
                slug, lesson_title = spec["slug"], str(spec.get("title", ""))
            except (OSError, yaml.YAMLError, KeyError, TypeError):
                continue  # the lesson loader reports a broken lesson.yaml
            for number, name in enumerate(files, start=1):
                out[f"{slug}/{name}"] = (number, _title(folder / name), lesson_title)
    return out


def _title(path: Path) -> str:
    try:
        match = re.search(r"^title:\s*(.+)$", path.read_text(encoding="utf-8"), flags=re.M)
    except OSError:
        return ""
    return match.group(1).strip().strip("\"'") if match else ""


def _line_of(text: str, needle: str) -> int:
    for i, line in enumerate(text.splitlines(), start=1):
        if needle in line:
            return i
    return 1


def load_glossary(roots: Path | Sequence[Path]) -> tuple[Glossary, list[Problem]]:
    """The glossary of the lesson roots (each root's glossary.yaml; a root without one adds nothing) and a problem,
    with file and line, for each entry that is malformed, repeated or names a step that does not exist."""
    given = [roots] if isinstance(roots, Path) else list(roots)
    # a root that is one lesson's folder uses the glossary of the folder holding it
    roots = list({r.resolve(): r for r in (g.parent if (g / "lesson.yaml").is_file() else g for g in given)}.values())
    problems: list[Problem] = []
    terms: list[Term] = []
    steps = _step_numbers([r for r in roots if r.is_dir()])
    seen: dict[str, str] = {}  # every name and alias so far -> its term
    for root in roots:
        path = root / GLOSSARY_FILE
        if path.is_file():
            terms += _read_file(path, steps, seen, problems)
    return Glossary(terms=terms), problems


def _read_file(path: Path, steps: dict[str, tuple[int, str, str]], seen: dict[str, str],
               problems: list[Problem]) -> list[Term]:
    """The terms of one glossary.yaml; its problems are added to `problems`."""
    text = path.read_text(encoding="utf-8")
    try:
        raw: Any = yaml.safe_load(text) or []
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        problems.append(Problem(file=str(path), line=(mark.line + 1) if mark else 1, message=f"bad YAML: {exc}"))
        return []
    if not isinstance(raw, list):
        problems.append(Problem(file=str(path), line=1, message="the glossary must be a list of terms"))
        return []
    terms = [_read_entry(entry, path, text, steps, seen, problems) for entry in raw]
    return [t for t in terms if t is not None]


def _read_entry(entry: Any, path: Path, text: str, steps: dict[str, tuple[int, str, str]], seen: dict[str, str],
                problems: list[Problem]) -> Term | None:
    """One glossary entry as a Term, or None when it is malformed or names no step (its problems added)."""
    name = str(entry.get("term", "")) if isinstance(entry, dict) else ""
    line = _line_of(text, f"term: {name}") if name else 1
    try:
        spec = TermSpec.model_validate(entry)
    except ValidationError as exc:
        for e in exc.errors():
            where = ".".join(str(p) for p in e["loc"]) or "entry"
            problems.append(Problem(file=str(path), line=line, message=f"glossary {where}: {e['msg']}"))
        return None
    for alias in [spec.term, *spec.aliases]:
        key = alias if alias != alias.lower() else alias.lower()  # names with capitals differ by case
        if key in seen:
            problems.append(Problem(file=str(path), line=line,
                                    message=f"'{alias}' is already a glossary name (of '{seen[key]}')"))
        seen[key] = spec.term
    if spec.taught_in not in steps:
        problems.append(Problem(file=str(path), line=line,
                                message=f"'{spec.term}' is taught in '{spec.taught_in}', which is no step "
                                "of any lesson (write lesson-slug/step-file.md)"))
        return None
    number, title, lesson_title = steps[spec.taught_in]
    return Term(term=spec.term, aliases=spec.aliases, definition=spec.definition, lesson=spec.taught_in.split("/")[0],
                step=number, step_title=title, lesson_title=lesson_title, file=str(path), line=line)


def render_marker(term: Term | None, shown: str, uid: str) -> str:
    """A marker as HTML: the term links to its glossary entry (so it works without JavaScript) and is followed by its
    definition, hidden; static/app.js turns the link into a button with aria-expanded that shows the definition."""
    text = html.escape(shown)
    if term is None:
        return text
    return (
        f'<span class="term"><a class="term-name" href="/glossary#{term.anchor}" data-def="{uid}">{text}</a>'
        f'<span class="term-def" id="{uid}" role="note" hidden><dfn>{html.escape(term.term)}</dfn>: '
        f'{html.escape(term.definition)} <a href="{term.step_url}">{html.escape(term.step_label)}</a></span></span>'
    )


def taught_later(term: Term, lesson: str, step: int, order: Mapping[str, int]) -> bool:
    """The term is taught after step `step` of `lesson`: later in the same lesson, or in a lesson that comes later."""
    if term.lesson == lesson:
        return step < term.step
    return term.lesson in order and lesson in order and order[lesson] < order[term.lesson]


# Inside these a term is not linked: it is a control or a link already, or markup where a button cannot go.
_NO_TERMS = frozenset({"a", "button", "label", "option", "select", "textarea", "script", "style", "svg", "title",
                       "h1", "h2", "h3", "h4", "h5", "h6", "dfn", "code", "pre", "output", "summary", "noscript"})
_VOID = frozenset({"input", "br", "hr", "img", "meta", "link", "source", "wbr", "col", "area", "base", "track"})
_TAG = re.compile(r"(<[^>]*>)")
_TAG_NAME = re.compile(r"</?([a-zA-Z][a-zA-Z0-9-]*)")
_SVG = re.compile(r"(<svg\b.*?</svg>)", re.DOTALL)  # an SVG holds no other svg in our markup


class TermLinker:
    """Marks the first use of each of its terms in a piece of rendered HTML (a widget's output) as render_marker
    does for `[[term]]` in prose: in running text, not in controls, links, headings, SVG or a figure's element
    (data-value). One compiled pattern for all its terms, so a widget update costs one pass over its HTML."""

    def __init__(self, terms: Sequence[Term]) -> None:
        self.by_name: dict[str, Term] = {}
        for term in terms:
            for name in term.names():
                self.by_name[name.lower() if name == name.lower() else name] = term
        lower = [re.escape(n) for n in self.by_name if n == n.lower()]
        exact = [re.escape(n) for n in self.by_name if n != n.lower()]
        parts = [r"(?i:" + "|".join(sorted(lower, key=len, reverse=True)) + r")"] if lower else []
        parts += ["|".join(sorted(exact, key=len, reverse=True))] if exact else []
        self.pattern = re.compile(r"(?<![\w/-])(?:" + "|".join(parts) + r")(?:s|es)?(?![\w/-])") if parts else None

    def term_of(self, word: str) -> Term | None:
        """The term a matched word names: its exact spelling first (FLOPs and FLOPS differ by case), then any case,
        each also without a plural ending."""
        stems = [word, word.removesuffix("s"), word.removesuffix("es")]
        for key in [*stems, *(s.lower() for s in stems)]:
            if key in self.by_name:
                return self.by_name[key]
        return None

    def link(self, markup: str, prefix: str) -> str:
        """`markup` with the first use of each term outside controls, links, headings and SVG marked; the
        definitions get ids `{prefix}-{n}`, unique on a page when the prefix is."""
        if self.pattern is None:
            return markup
        done: set[str] = set()
        stack: list[tuple[str, bool]] = []  # open elements, and whether a term may be marked inside each
        out: list[str] = []
        # An SVG (a chart: hundreds of tags, no term marked inside) is passed over whole, not tag by tag.
        for part in _SVG.split(markup):
            if part.startswith("<svg"):
                out.append(part)
                continue
            for piece in _TAG.split(part):
                if piece.startswith("<"):
                    _track(piece, stack)
                elif piece and len(done) < len(self.by_name) and all(ok for _, ok in stack):
                    piece = self._link_text(piece, done, prefix)
                out.append(piece)
        return "".join(out)

    def _link_text(self, text: str, done: set[str], prefix: str) -> str:
        assert self.pattern is not None

        def mark(match: re.Match[str]) -> str:
            term = self.term_of(match.group(0))
            if term is None or term.term in done:
                return match.group(0)
            done.add(term.term)
            return render_marker(term, html.unescape(match.group(0)), f"{prefix}-{len(done)}")

        return self.pattern.sub(mark, text)


def _track(tag: str, stack: list[tuple[str, bool]]) -> None:
    """Follow one tag: push an opened element (with whether terms may be marked in it), pop a closed one."""
    found = _TAG_NAME.match(tag)
    if found is None:
        return  # a comment or doctype
    name = found.group(1).lower()
    if tag.startswith("</"):
        for i in range(len(stack) - 1, -1, -1):
            if stack[i][0] == name:
                del stack[i:]
                break
        return
    if name in _VOID or tag.endswith("/>"):
        return
    # a figure's element (data-value) stays the bare figure that scripts and tests read; a hidden one is not read
    ok = name not in _NO_TERMS and 'class="term' not in tag and " hidden" not in tag and "data-value=" not in tag
    stack.append((name, ok))
