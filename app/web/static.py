"""Static files with long-lived caching: URLs carry a content hash, so a change gets a new URL."""

from __future__ import annotations

import hashlib
from pathlib import Path

from starlette.responses import Response
from starlette.staticfiles import StaticFiles
from starlette.types import Scope


class CachedStatic(StaticFiles):
    """StaticFiles (ETag, Last-Modified) plus Cache-Control: immutable for versioned URLs."""

    async def get_response(self, path: str, scope: Scope) -> Response:
        response = await super().get_response(path, scope)
        if response.status_code == 200:
            versioned = b"v=" in scope.get("query_string", b"")
            response.headers["Cache-Control"] = (
                "public, max-age=31536000, immutable" if versioned else "public, max-age=300"
            )
        return response


class StaticUrls:
    """Maps a static path to /static/path?v=<hash of its content>, hashed once per process."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._cache: dict[str, str] = {}

    def __call__(self, path: str) -> str:
        if path not in self._cache:
            file = self.root / path
            digest = hashlib.sha256(file.read_bytes()).hexdigest()[:10] if file.is_file() else "missing"
            self._cache[path] = f"/static/{path}?v={digest}"
        return self._cache[path]
