"""Imports every widget module in app/widgets so each registers itself: adding a module adds a widget."""

from __future__ import annotations

import importlib
import pkgutil

import app.widgets as package

NOT_WIDGETS = {"base", "registry", "catalog", "service"}

for info in pkgutil.iter_modules(package.__path__):
    if info.name not in NOT_WIDGETS and not info.name.startswith("_"):
        importlib.import_module(f"app.widgets.{info.name}")
