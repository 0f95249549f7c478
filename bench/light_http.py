"""A light HTTP/1.1 client for the load generator: keep-alive connections, cookies, form bodies, and no more.

`bench/classroom.py` plays hundreds of learners on the machine that also runs the server; with httpx its own
work took about a third of the two cores (2 to 3 ms of CPU a request: httpx's models, its connection pool and
h11's pure-Python parser), CPU the server then did not get, so the latencies measured the generator as much as
the app. Each real learner has a browser on their own machine. This client does what those learners' requests
need (GET with a query, POST of a form, a cookie jar, Content-Length or chunked answers, several keep-alive
connections per learner) at about a tenth of the CPU, so the server gets the cores. It speaks to the server
the bench started or to `--url` (http or https), never follows redirects, and raises `LightError` on any
failure, as httpx raises `httpx.HTTPError`.
"""

from __future__ import annotations

import asyncio
import ssl
from collections.abc import Mapping
from dataclasses import dataclass, field
from urllib.parse import urlencode, urlsplit


class LightError(Exception):
    """The request failed: connection refused or closed, timed out, or a malformed answer."""


@dataclass
class Headers:
    """Response headers by lower-case name (the last of a repeated one; Set-Cookie goes to the jar)."""

    values: dict[str, str] = field(default_factory=dict)

    def get(self, name: str, default: str = "") -> str:
        return self.values.get(name.lower(), default)

    def __getitem__(self, name: str) -> str:
        return self.values[name.lower()]


@dataclass
class Response:
    status_code: int
    headers: Headers
    content: bytes

    @property
    def text(self) -> str:
        return self.content.decode("utf-8", "replace")


_Connection = tuple[asyncio.StreamReader, asyncio.StreamWriter]


class LightClient:
    """One learner's browser: up to `max_connections` keep-alive connections to one origin and its cookies."""

    def __init__(self, base_url: str, timeout: float = 30, max_connections: int = 3,
                 tls: ssl.SSLContext | None = None) -> None:
        parts = urlsplit(base_url)
        self.host = parts.hostname or "127.0.0.1"
        self.https = parts.scheme == "https"
        self.port = parts.port or (443 if self.https else 80)
        self.authority = parts.netloc
        self.timeout = timeout
        self.tls = tls if self.https else None
        self.cookies: dict[str, str] = {}
        self._idle: list[_Connection] = []
        self._slots = asyncio.Semaphore(max_connections)

    async def __aenter__(self) -> LightClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        for _, writer in self._idle:
            writer.close()
        self._idle.clear()

    async def request(self, method: str, url: str, params: Mapping[str, str] | None = None,
                      data: Mapping[str, str] | None = None, headers: Mapping[str, str] | None = None) -> Response:
        """Send one request and read its whole answer (LightError on any failure, timeout included)."""
        if params:
            url += ("&" if "?" in url else "?") + urlencode(params)
        body = urlencode(data).encode() if data is not None else b""
        lines = [f"{method} {url} HTTP/1.1", f"Host: {self.authority}", "Accept: */*"]
        if data is not None:
            lines += ["Content-Type: application/x-www-form-urlencoded", f"Content-Length: {len(body)}"]
        if self.cookies:
            lines.append("Cookie: " + "; ".join(f"{k}={v}" for k, v in self.cookies.items()))
        lines += [f"{k}: {v}" for k, v in (headers or {}).items()]
        raw = ("\r\n".join(lines) + "\r\n\r\n").encode() + body
        async with self._slots:
            try:
                return await asyncio.wait_for(self._exchange(raw, method == "HEAD"), self.timeout)
            except (OSError, asyncio.IncompleteReadError, asyncio.LimitOverrunError, ValueError) as exc:
                raise LightError(f"{type(exc).__name__}: {exc}") from exc
            except TimeoutError as exc:
                raise LightError(f"ReadTimeout after {self.timeout:g} s") from exc

    async def _exchange(self, raw: bytes, head: bool) -> Response:
        reused = bool(self._idle)
        reader, writer = self._idle.pop() if reused else await self._connect()
        try:
            writer.write(raw)
            response, keep = await self._read(reader, head)
        except (OSError, asyncio.IncompleteReadError):
            writer.close()
            if not reused:
                raise
            # the server closed an idle keep-alive connection (its timeout) just as we reused it: once more, fresh
            reader, writer = await self._connect()
            writer.write(raw)
            response, keep = await self._read(reader, head)
        if keep:
            self._idle.append((reader, writer))
        else:
            writer.close()
        return response

    async def _connect(self) -> _Connection:
        server_hostname = self.host if self.tls else None
        return await asyncio.open_connection(self.host, self.port, ssl=self.tls, server_hostname=server_hostname)

    async def _read(self, reader: asyncio.StreamReader, head: bool) -> tuple[Response, bool]:
        block = await reader.readuntil(b"\r\n\r\n")
        status_line, *header_lines = block[:-4].decode("latin-1").split("\r\n")
        status = int(status_line.split(" ", 2)[1])
        values: dict[str, str] = {}
        for line in header_lines:
            name, _, value = line.partition(":")
            name, value = name.strip().lower(), value.strip()
            if name == "set-cookie":
                self._keep_cookie(value)
            else:
                values[name] = value
        if head or status in (204, 304) or 100 <= status < 200:
            content = b""
        elif values.get("transfer-encoding", "").lower() == "chunked":
            content = await _chunks(reader)
        elif "content-length" in values:
            content = await reader.readexactly(int(values["content-length"]))
        else:  # read to the end: the server closes the connection after the body
            content = await reader.read()
            values["connection"] = "close"
        keep = values.get("connection", "").lower() != "close"
        return Response(status, Headers(values), content), keep

    def _keep_cookie(self, value: str) -> None:
        pair = value.split(";", 1)[0]
        name, _, cookie = pair.partition("=")
        expired = "max-age=0" in value.lower().replace(" ", "") or not cookie.strip('"')
        if expired:
            self.cookies.pop(name.strip(), None)
        else:
            self.cookies[name.strip()] = cookie.strip()


async def _chunks(reader: asyncio.StreamReader) -> bytes:
    parts = []
    while True:
        size = int((await reader.readuntil(b"\r\n")).split(b";", 1)[0], 16)
        if size == 0:
            await reader.readuntil(b"\r\n")  # no trailers from our server: the empty line
            return b"".join(parts)
        parts.append(await reader.readexactly(size))
        await reader.readexactly(2)
