"""A scriptable Etherscan-style HTTP server on 127.0.0.1, for the client's tests.

Real sockets and real HTTP (http.server in a thread): the client's retries, timeouts and dropped
connections are exercised for real. Each answer is scripted: an envelope, an HTTP status, a dropped
connection, or a stall.
"""

import json
import socket
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any, Union
from urllib.parse import parse_qsl, urlsplit

import pytest

from support.loopback import LoopbackServer, reply


@dataclass
class Seen:
    method: str
    path: str
    query: dict
    form: dict
    raw: str = ""

    @property
    def action(self) -> str:
        return self.form.get("action") or self.query.get("action", "")

    @property
    def params(self) -> dict:
        return {**self.query, **self.form}


def envelope(status: str, message: str, result: Any) -> dict:
    return {"status": status, "message": message, "result": result}


def ok(result: Any, message: str = "OK") -> dict:
    return envelope("1", message, result)


def notok(result: Any) -> dict:
    return envelope("0", "NOTOK", result)


@dataclass
class Http:
    code: int
    body: str = ""
    headers: dict = field(default_factory=dict)


@dataclass
class Drop:
    """Read the request, then close the socket without answering (a lost response)."""


@dataclass
class Stall:
    seconds: float
    then: Any = None


Answer = Union[dict, Http, Drop, Stall, Callable[[Seen], Any]]  # noqa: UP007 (a runtime alias)


class StubExplorer:
    def __init__(self):
        self.seen: list[Seen] = []
        self.script: deque = deque()
        self.default: Callable[[Seen], Any] | None = None
        self.lock = threading.Lock()
        stub = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):  # keep test output clean
                pass

            def _handle(self):
                parts = urlsplit(self.path)
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length).decode() if length else ""
                seen = Seen(self.command, parts.path, dict(parse_qsl(parts.query)), dict(parse_qsl(raw)), raw)
                with stub.lock:
                    stub.seen.append(seen)
                    answer = stub.script.popleft() if stub.script else stub.default
                self._answer(seen, answer)

            def _answer(self, seen: Seen, answer: Answer):
                while callable(answer) and not isinstance(answer, (dict, Http, Drop, Stall)):
                    answer = answer(seen)
                if answer is None:
                    answer = Http(500, "no scripted answer")
                if isinstance(answer, Stall):
                    time.sleep(answer.seconds)
                    answer = answer.then if answer.then is not None else Drop()
                    try:
                        return self._answer(seen, answer)
                    except OSError:
                        return
                if isinstance(answer, Drop):
                    self.close_connection = True
                    try:
                        self.connection.shutdown(socket.SHUT_RDWR)
                    except OSError:
                        pass
                    return
                if isinstance(answer, dict):
                    answer = Http(200, json.dumps(answer), {"Content-Type": "application/json"})
                reply(self, answer.code, answer.body.encode(), answer.headers)

            do_GET = _handle
            do_POST = _handle

        self.server = LoopbackServer(Handler)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.port}/api"

    def answer(self, *answers: Answer) -> "StubExplorer":
        with self.lock:
            self.script.extend(answers)
        return self

    def actions(self) -> list[str]:
        return [s.action for s in self.seen]

    def __enter__(self):
        self.thread = self.server.start(poll_interval=0.05)
        return self

    def __exit__(self, *exc):
        self.server.stop(self.thread)


@pytest.fixture
def stub():
    with StubExplorer() as server:
        yield server


class Clock:
    """A fake clock: sleeping (`sleep`) advances it and records the wait; nothing waits."""

    def __init__(self) -> None:
        self.now = 0.0
        self.slept: list[float] = []

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.now += seconds


class Sleeps(list):
    """An injectable sleep that records instead of waiting (the limiter keeps real time)."""

    def __call__(self, seconds: float) -> None:
        self.append(seconds)


def make_client(stub: StubExplorer, **kwargs):
    from ape_contract_verify.client.etherscan import ExplorerClient
    from ape_contract_verify.retry import RateLimiter

    options = dict(
        api_key=None,
        timeout=(2.0, 2.0),
        max_retries=4,
        backoff=0.01,
        max_backoff=0.05,
        not_indexed_timeout=0.0,
        limiter=RateLimiter(1000.0),
        sleep=Sleeps(),
    )
    options.update(kwargs)
    return ExplorerClient(stub.url, **options)


GUID = "a7lpxkm9ub8mnbz4x2hvsyqxnwe1bxqzd3ckkcf9ahqurzenvx"
ADDRESS = "0x5FbDB2315678afecb367f032d93F642f64180aa3"
IMPL = "0xe7f1725E7734CE288F8367e1Bb143E90bb3F0512"
