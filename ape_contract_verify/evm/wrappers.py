"""Wrapping a ChainReader: every read memoised (`MemoizingChain`), or one call at a time.

`MemoizingChain` remembers every read: `ape run`'s deploy hook warms it on the script's thread,
so verification workers are served from memory and never touch a provider that is busy with the
script. `SerializedChain` lets one call at a time through: Ape providers and requests sessions are
not promised to be thread-safe, and the local explorer's handlers and workers share one reader.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Hashable
from typing import Any, TypeVar

from ape_contract_verify.evm.reads import ChainReader, Creation, SearchingReader, TransactionFacts

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


class MemoizingChain:
    """A ChainReader that memoises every read; a miss goes to `base` under one lock. A base
    written before `get_transaction`, or one that does not search, is still served (the
    AttributeError cases below)."""

    def __init__(self, base: SearchingReader):
        self.base = base
        self._lock = threading.Lock()
        self._chain_id: dict[None, int] = {}
        self._codes: dict[str, bytes] = {}
        self._slots: dict[tuple[str, int], bytes] = {}
        self._calls: dict[tuple[str, bytes], bytes] = {}
        self._creations: dict[str, Creation | None] = {}
        self._transactions: dict[str, TransactionFacts] = {}

    def __repr__(self) -> str:
        return f"MemoizingChain({self.base!r})"

    def _read(self, table: dict[K, V], key: K, fn: Callable[[], V]) -> V:
        with self._lock:
            if key not in table:
                table[key] = fn()
            return table[key]

    def chain_id(self) -> int:
        return self._read(self._chain_id, None, self.base.chain_id)

    def get_code(self, address: str) -> bytes:
        return self._read(self._codes, address.lower(), lambda: self.base.get_code(address))

    def get_storage_at(self, address: str, slot: int) -> bytes:
        return self._read(self._slots, (address.lower(), slot), lambda: self.base.get_storage_at(address, slot))

    def call(self, to: str, data: bytes) -> bytes:
        return self._read(self._calls, (to.lower(), bytes(data)), lambda: self.base.call(to, data))

    def find_creation(self, address: str) -> Creation | None:
        return self._read(self._creations, address.lower(), lambda: self.base.find_creation(address))

    def creation_attempts(self, address: str) -> list[str]:
        """What the base's search tried in vain (not memoised: it follows the last search)."""
        # getattr: a reader that does not search has neither `creation_attempts` nor `close`
        attempts = getattr(self.base, "creation_attempts", None)
        return list(attempts(address)) if attempts else []

    def close(self) -> None:
        if closer := getattr(self.base, "close", None):
            closer()

    def get_transaction(self, tx_hash: str) -> TransactionFacts | None:
        """Kept once mined (it cannot change then); None and pending ones are asked again."""
        try:
            getter = self.base.get_transaction
        except AttributeError:
            raise NotImplementedError(f"{self.base!r} cannot read transactions") from None
        key = tx_hash.lower()
        with self._lock:
            if key in self._transactions:
                return self._transactions[key]
            facts = getter(tx_hash)
            if facts is not None and facts.block is not None:
                self._transactions[key] = facts
            return facts

    def forget(self, *addresses: str) -> None:
        """Drop what was read of these addresses' storage and calls (an upgrade changed them);
        code and creation stay."""
        gone = {a.lower() for a in addresses}
        with self._lock:
            for slot in [k for k in self._slots if k[0] in gone]:
                del self._slots[slot]
            for call in [k for k in self._calls if k[0] in gone]:
                del self._calls[call]

    def remember_creation(self, address: str, creation: Creation | None) -> None:
        """What the deploy receipt already says, so no worker searches blocks for it."""
        with self._lock:
            self._creations[address.lower()] = creation


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
