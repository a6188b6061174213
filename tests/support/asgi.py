"""One GET through an ASGI app in this process (no server, no socket): the pages' unit tests render
through the app as a browser's request would reach it. Starlette's TestClient needs httpx, which the
project does not install."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from urllib.parse import unquote


@dataclass(frozen=True)
class Answer:
    status: int
    headers: dict[str, str]
    text: str


def get(app, path: str) -> Answer:
    """GET `path` (with its query string) from `app`; the whole answer."""
    route, _, query = path.partition("?")
    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "GET",
        "scheme": "http",
        "path": unquote(route),  # as a server hands it on: decoded, raw_path as sent
        "raw_path": route.encode(),
        "query_string": query.encode(),
        "root_path": "",
        "headers": [(b"host", b"127.0.0.1")],
        "client": ("127.0.0.1", 1),
        "server": ("127.0.0.1", 80),
    }
    sent: list[dict] = []

    async def receive() -> dict:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: dict) -> None:
        sent.append(message)

    asyncio.run(app(scope, receive, send))
    start = next(m for m in sent if m["type"] == "http.response.start")
    body = b"".join(m.get("body", b"") for m in sent if m["type"] == "http.response.body")
    headers = {k.decode().lower(): v.decode() for k, v in start["headers"]}
    return Answer(start["status"], headers, body.decode())
