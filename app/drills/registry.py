"""The drills GPU Classroom knows, by name: the three drill modules' DRILLs (a lesson may also declare simple
numeric drills itself: app/drills/declarative.py)."""

from __future__ import annotations

from functools import cache
from typing import Any

from pydantic import ValidationError

from app.drills import bytes_per_parameter, spot_the_mistake, will_it_fit
from app.drills.base import Drill


@cache
def _by_name() -> dict[str, Drill]:
    """Every drill module's DRILL, listed by hand (as app.main's ROUTERS are): a new drill module is added here."""
    found: dict[str, Drill] = {}
    for drill in (bytes_per_parameter.DRILL, spot_the_mistake.DRILL, will_it_fit.DRILL):
        if drill.name in found:
            raise ValueError(f"drill '{drill.name}' listed twice")
        found[drill.name] = drill
    return found


def get_drill(name: str) -> Drill | None:
    """The drill called `name`, or None."""
    return _by_name().get(name)


def all_drills() -> dict[str, Drill]:
    """Every registered drill, by name."""
    return dict(sorted(_by_name().items()))


def validate_block(name: str, params: dict[str, Any]) -> list[str]:
    """Problems with a lesson's ```drill NAME``` block: an unknown drill or settings it does not take."""
    drill = get_drill(name)
    if drill is None:
        return [f"unknown drill '{name}' (known: {', '.join(all_drills())})"]
    try:
        drill.settings.model_validate(params)
    except ValidationError as exc:
        return [
            f"drill {name}: {'.'.join(str(p) for p in e['loc']) or 'value'}: {e['msg']}" for e in exc.errors()
        ]
    return []
