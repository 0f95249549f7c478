"""The drills GPU Classroom knows, by name; a module in app/drills that registers one adds it."""

from __future__ import annotations

import importlib
import pkgutil
from functools import cache
from typing import Any

from pydantic import ValidationError

from app.drills.base import Drill

DRILLS: dict[str, Drill] = {}
NOT_DRILLS = {"answers", "base", "declarative", "declared_check", "registry", "room", "selfcheck", "seeds",
              "will_it_fit_mistakes"}  # modules of app/drills that register no drill


def register(drill: Drill) -> Drill:
    """Add a drill to the registry (names are unique)."""
    if drill.name in DRILLS and DRILLS[drill.name] is not drill:
        raise ValueError(f"drill '{drill.name}' registered twice")
    DRILLS[drill.name] = drill
    return drill


@cache
def _load_all() -> None:
    """Import every drill module once (each registers its drill); listing the package on every call cost a
    directory read per step page."""
    import app.drills as package

    for info in pkgutil.iter_modules(package.__path__):
        if info.name not in NOT_DRILLS and not info.name.startswith("_") and not info.ispkg:
            importlib.import_module(f"app.drills.{info.name}")


def get_drill(name: str) -> Drill | None:
    """The drill called `name`, or None."""
    _load_all()
    return DRILLS.get(name)


def all_drills() -> dict[str, Drill]:
    """Every registered drill, by name."""
    _load_all()
    return dict(sorted(DRILLS.items()))


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
