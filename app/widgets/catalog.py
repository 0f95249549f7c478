"""Imports every widget module so each registers itself. Add a new widget's module here."""

from app.widgets import weight_storage  # noqa: F401
