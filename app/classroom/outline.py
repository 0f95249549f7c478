"""A lesson as a class needs it: step numbers, titles, minutes and drills, kept with the class."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class StepOutline:
    number: int
    title: str
    minutes: float = 1.0
    drills: tuple[str, ...] = ()
    note: str = ""  # the lesson's note for the instructor on this step (never shown to learners)
    about: tuple[tuple[str, str], ...] = ()  # (drill, what it asks in a line) for the dashboard


@dataclass(frozen=True)
class Outline:
    """The web layer builds this from a lesson when a class is created; the class stores it as JSON. `labels`: per
    drill, what each part asks in words ("Total training state before activations"), so the instructor's views
    never show a part's id."""

    slug: str
    title: str
    steps: tuple[StepOutline, ...]
    labels: dict[str, dict[str, str]] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {"title": self.title, "steps": [
            {"number": s.number, "title": s.title, "minutes": s.minutes, "drills": list(s.drills),
             **({"note": s.note} if s.note else {}), **({"about": dict(s.about)} if s.about else {})}
            for s in self.steps], "labels": self.labels}

    @classmethod
    def from_json(cls, slug: str, data: dict[str, Any] | None) -> Outline:
        data = data or {}
        steps = tuple(StepOutline(number=int(s["number"]), title=str(s["title"]), minutes=float(s.get("minutes", 1)),
                                  drills=tuple(s.get("drills", ())), note=str(s.get("note", "")),
                                  about=tuple((str(k), str(v)) for k, v in dict(s.get("about", {})).items()))
                      for s in data.get("steps", []))
        labels = {str(d): {str(k): str(v) for k, v in parts.items()} for d, parts in (data.get("labels") or {}).items()}
        return cls(slug=slug, title=str(data.get("title", slug)), steps=steps, labels=labels)
