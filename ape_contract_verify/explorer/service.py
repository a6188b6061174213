"""`ExplorerService`: the state every handler reads (store, chain, the job queue's wake-up, accepted keys).

One object, held by the app (`app.state.service`) and by the in-process local target."""

from __future__ import annotations

import hmac
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING

from ape_contract_verify.explorer.store import Store

if TYPE_CHECKING:
    from ape_contract_verify.evm.reads import SearchingReader

MAX_BODY_BYTES = 20 * 1024 * 1024  # a submission's size, whichever face it comes through


class ExplorerService:
    """The state the handlers need: the store, the job queue, the chain, the configured keys."""

    def __init__(
        self,
        store: Store,
        chain: SearchingReader,  # LocalExplorer's SerializedChain passes on a reader's search, where it has one
        notify: Callable[[], None] = lambda: None,
        api_keys: Iterable[str] = (),
        max_body: int = MAX_BODY_BYTES,
        proxy_daily_limit: int = 100,
    ):
        self.store = store
        self.chain = chain
        self.notify = notify
        self._api_keys = tuple(k for k in api_keys if k)
        self.max_body = max_body
        self.proxy_daily_limit = proxy_daily_limit
        self.known_chain_id: int | None = None  # the chain id once read

    def __repr__(self) -> str:  # never show keys
        return f"<ExplorerService db={self.store.path!r} keys={len(self._api_keys)}>"

    @property
    def requires_key(self) -> bool:
        return bool(self._api_keys)

    def key_ok(self, key: str) -> bool:
        if not self._api_keys:
            return True
        candidate = (key or "").encode()
        return any(hmac.compare_digest(candidate, k.encode()) for k in self._api_keys)

    def chain_id(self) -> int:
        if self.known_chain_id is None:
            self.known_chain_id = int(self.chain.chain_id())
        return self.known_chain_id
