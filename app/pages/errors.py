"""What a page service says when the address names nothing: app/web/errors.py answers it with a 404."""

from __future__ import annotations

from collections.abc import Mapping

from app.widgets import base


class NotFound(LookupError):
    """The lesson, step or drill block an address names does not exist; the message says which."""


def readable(error: Mapping[str, object]) -> str:
    """A refused value (one pydantic error) as the sentence shown beside its field: the widgets' wording, one for the
    whole app (a 422 of the JSON API, a companion form)."""
    return base.readable(error)
