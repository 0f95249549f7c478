"""What a page service says when the address names nothing: app/web/errors.py answers it with a 404."""

from __future__ import annotations


class NotFound(LookupError):
    """The lesson, step or drill block an address names does not exist; the message says which."""
