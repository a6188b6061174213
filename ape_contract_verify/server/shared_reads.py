"""Live chain reads shared by the requests that wait for the same ones.

The explorer reads the chain through one `SerializedChain` (one call at a time), so a handler
that reads the node on every request is bounded by the node's round trips, whatever the load
is. `SharedReads` keeps every answer as fresh as a read of its own (no cache): a request takes
the first read of its key that *starts after the request arrived*; every request that arrives
before that read starts shares it. Under load the requests for one key are served by one read
each round instead of one read each.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

from starlette.concurrency import run_in_threadpool

Key = TypeVar("Key", bound=Hashable)
Answer = TypeVar("Answer")


class SharedReads(Generic[Key, Answer]):
    """`await reads.get(key)`: `read(key)`, run on a worker thread, shared as the docstring says.
    A read that raises raises in every request that shared it; the next request reads again."""

    def __init__(self, read: Callable[[Key], Answer]):
        self._read = read
        self._waiting: dict[Key, asyncio.Task[Answer]] = {}  # not started yet: joinable
        self._running: dict[Key, asyncio.Task[Answer]] = {}  # started: too old for new arrivals

    async def get(self, key: Key) -> Answer:
        task = self._waiting.get(key)
        if task is None:
            task = self._waiting[key] = asyncio.ensure_future(self._run(key, self._running.get(key)))
            task.add_done_callback(_retrieved)  # no "exception never retrieved" when every sharer left
        return await asyncio.shield(task)  # one request going away does not end the others' read

    async def _run(self, key: Key, before: asyncio.Task[Answer] | None) -> Answer:
        if before is not None:  # one read of a key at a time: the node is read serially anyway
            await asyncio.wait([before])
        this = self._waiting.pop(key)  # the task running this; from here on, arrivals wait for the next read
        self._running[key] = this
        try:
            return await run_in_threadpool(self._read, key)
        finally:
            if self._running.get(key) is this:
                del self._running[key]


def _retrieved(task: asyncio.Task[object]) -> None:
    if not task.cancelled():
        task.exception()
