"""Drill: spot the mistake. A short scenario shows one of 22 common GPU mistakes; pick it from four."""

from __future__ import annotations

import random
from collections.abc import Mapping
from functools import lru_cache
from pathlib import Path

import yaml
from pydantic import BaseModel, ConfigDict, Field

from app.drills.base import Choice, Drill, Feedback, Part, Question, Solution, Topic, Variant

NAME = "spot-the-mistake"
DATA = Path(__file__).parent / "data" / "mistakes.yaml"
CHOICES = 4
LETTERS = "abcdefgh"
SPREAD = 8  # mastery needs this many distinct mistakes right at the first try, not just a streak of three

# Close cousins: a scenario written for one could be argued for the other, so neither is offered as
# the other's distractor (docs/companion-widgets-plan.md).
COUSINS: tuple[frozenset[str], ...] = (
    frozenset({"compute-before-memory", "training-as-weights-only"}),
    frozenset({"trusted-vendor-numbers", "accelerator-by-claims"}),
    frozenset({"upgrade-without-diagnosis", "upgrade-timing", "hardware-without-software"}),
    frozenset({"sharing-without-isolation", "virtualization-mismatch"}),
    frozenset({"unmanaged-heterogeneity", "upgrade-timing"}),
)


class Mistake(BaseModel):
    """One of the common mistakes, with the principle it breaks and the step that teaches it."""

    model_config = ConfigDict(frozen=True)

    id: str
    title: str
    principle: str
    teaches: str = Field(description="lesson-slug/step-number")

    @property
    def link(self) -> str:
        return f"/lessons/{self.teaches}"


class Scenario(BaseModel):
    model_config = ConfigDict(frozen=True)

    id: str
    mistake: str
    text: str


class Catalogue(BaseModel):
    mistakes: list[Mistake]
    scenarios: list[Scenario]

    def mistake(self, mistake_id: str) -> Mistake:
        return next(m for m in self.mistakes if m.id == mistake_id)

    def scenario(self, scenario_id: str) -> Scenario:
        return next(s for s in self.scenarios if s.id == scenario_id)


@lru_cache(maxsize=1)
def catalogue() -> Catalogue:
    """The mistakes and scenarios of data/mistakes.yaml."""
    return Catalogue.model_validate(yaml.safe_load(DATA.read_text(encoding="utf-8")))


def cousins(mistake_id: str) -> set[str]:
    """Mistakes too close to this one to serve as its distractors (itself included)."""
    return {mistake_id}.union(*(group for group in COUSINS if mistake_id in group))


def generate(rng: random.Random) -> Question:
    """A scenario and four mistakes to choose from: its own and three that are not its close cousins."""
    data = catalogue()
    scenario = rng.choice(data.scenarios)
    pool = sorted(m.id for m in data.mistakes if m.id not in cousins(scenario.mistake))
    options = [scenario.mistake, *rng.sample(pool, CHOICES - 1)]
    rng.shuffle(options)
    return Question(
        drill=NAME,
        title="Spot the mistake",
        prompt=scenario.text,
        parameters={"scenario": scenario.id, "options": options},
        parts=[
            Part(
                id="mistake",
                prompt="Which mistake does this show?",
                kind="choice",
                choices=[
                    Choice(value=LETTERS[i], label=data.mistake(m).title, names=[m])
                    for i, m in enumerate(options)
                ],
            )
        ],
    )


def _where(m: Mistake) -> str:
    return f"slide {m.teaches.rsplit('/', 1)[1]}"


def solve(q: Question) -> Solution:
    """The scenario's mistake, its principle and the step that teaches it; each distractor's own message."""
    data = catalogue()
    options = [data.mistake(m) for m in q.parameters["options"]]
    right = data.mistake(data.scenario(q.parameters["scenario"]).mistake)
    letter = LETTERS[options.index(right)]
    variants = [
        Variant(
            part="mistake",
            id=m.id,
            value=LETTERS[i],
            message=f"“{m.title}” is a different mistake: {m.principle[0].lower()}{m.principle[1:]} "
            f"This scenario is about something else.",
        )
        for i, m in enumerate(options)
        if m is not right
    ]
    others = [m for m in options if m is not right]
    return Solution(
        expected={"mistake": letter},
        variants=variants,
        solution=[f"The mistake: {right.title}.", f"The principle: {right.principle}"],
        hints=[
            f"Rule one out: “{m.title}” would mean the team broke this rule: {m.principle} Did they?"
            for m in others[:2]
        ],
        principle=right.principle,
        link=right.link,
        link_text=f"Go back to {_where(right)}, which teaches it",
    )


def topic(q: Question) -> str:
    """The mistake a question's scenario shows."""
    return catalogue().scenario(q.parameters["scenario"]).mistake


DRILL = Drill(
    name=NAME,
    title="Spot the mistake",
    description="A short scenario from a team like yours shows one of 22 common GPU infrastructure "
    "mistakes: "
    "pick it from four.",
    generate=generate,
    solve=solve,
    malformed=({"mistake": ""}, {"mistake": "z"}, {"mistake": "all of them"}),
    topic=topic,
    topics=tuple(Topic(id=m.id, title=m.title, link=m.link) for m in catalogue().mistakes),
    spread=SPREAD,
)


def grade(question: Question, answers: Mapping[str, str]) -> Feedback:
    """Grade the choice (its letter, its title or the mistake's id)."""
    return DRILL.grade(question, answers)
