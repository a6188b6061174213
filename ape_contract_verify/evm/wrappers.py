"""Wrapping a ChainReader: every read memoised (`MemoizingChain`), or one call at a time.

`MemoizingChain` remembers every read: `ape run`'s deploy hook warms it on the script's thread,
so verification workers are served from memory and never touch a provider that is busy with the
script. `SerializedChain` lets one call at a time through: Ape providers and requests sessions are
not promised to be thread-safe, and the local explorer's handlers and workers share one reader.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any, TypeVar

from ape_contract_verify.evm.reads import ChainReader, Creation, TransactionFacts, attempts_of

V = TypeVar("V")


class MemoizingChain:
    """A ChainReader that memoises every read; a miss goes to `base` under one lock. A base
    written before `get_transaction`, or one that does not search, is still served (the
    AttributeError cases below)."""

    def __init__(self, base: ChainReader):
        self.base = base
        self._lock = threading.Lock()
        # (the read, its arguments) -> the answer: "code", "slot", "call", "creation", "transaction"
        self._memo: dict[tuple[object, ...], Any] = {}

    def __repr__(self) -> str:
        return f"MemoizingChain({self.base!r})"

    def _read(self, key: tuple[object, ...], fn: Callable[[], V], keep: Callable[[V], bool] = lambda _: True) -> V:
        """The kept answer, else `fn()`'s, kept when `keep` says."""
        with self._lock:
            if key in self._memo:
                kept: V = self._memo[key]
                return kept
            answer = fn()
            if keep(answer):
                self._memo[key] = answer
            return answer

    def chain_id(self) -> int:
        return self._read(("chain id",), self.base.chain_id)

    def get_code(self, address: str) -> bytes:
        return self._read(("code", address.lower()), lambda: self.base.get_code(address))

    def get_storage_at(self, address: str, slot: int) -> bytes:
        return self._read(("slot", address.lower(), slot), lambda: self.base.get_storage_at(address, slot))

    def call(self, to: str, data: bytes) -> bytes:
        return self._read(("call", to.lower(), bytes(data)), lambda: self.base.call(to, data))

    def find_creation(self, address: str) -> Creation | None:
        return self._read(("creation", address.lower()), lambda: self.base.find_creation(address))

    def creation_attempts(self, address: str) -> list[str]:
        """What the base's search tried in vain (not memoised: it follows the last search)."""
        return attempts_of(self.base, address)

    def close(self) -> None:
        # getattr: a reader that does not search has no `close`
        if closer := getattr(self.base, "close", None):
            closer()

    def get_transaction(self, tx_hash: str) -> TransactionFacts | None:
        """Kept once mined (it cannot change then); None and pending ones are asked again."""
        try:
            getter = self.base.get_transaction
        except AttributeError:
            raise NotImplementedError(f"{self.base!r} cannot read transactions") from None
        return self._read(
            ("transaction", tx_hash.lower()),
            lambda: getter(tx_hash),
            lambda facts: bool(facts and facts.block is not None),
        )

    def forget(self, *addresses: str) -> None:
        """Drop what was read of these addresses' storage and calls (an upgrade changed them);
        code and creation stay."""
        gone = {a.lower() for a in addresses}
        with self._lock:
            for key in [k for k in self._memo if k[0] in ("slot", "call") and k[1] in gone]:
                del self._memo[key]

    def remember_creation(self, address: str, creation: Creation | None) -> None:
        """What the deploy receipt already says, so no worker searches blocks for it."""
        with self._lock:
            self._memo[("creation", address.lower())] = creation


class SerializedChain:
    """A reader, one call at a time (re-entrant: a call may make further calls)."""

    def __init__(self, chain: ChainReader):
        self._chain = chain
        self._lock = threading.RLock()

    def __repr__(self) -> str:
        return f"SerializedChain({self._chain!r})"

    def __getattr__(self, name: str) -> Any:  # Any: whatever attribute the wrapped reader has
        # getattr: a transparent proxy, so any reader's extras (get_transaction, safe_url, close) pass
        attr = getattr(self._chain, name)
        if not callable(attr):
            return attr

        def locked(*args: object, **kwargs: object) -> object:
            with self._lock:
                return attr(*args, **kwargs)

        return locked
