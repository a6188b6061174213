"""This process's embedded local explorers: one per connected chain, shared by everything in the
process that verifies or reads there (the deploy hook's queue, Ape's explorer for
`Contract(address)`, links and `publish=True`). What the hook verified during an `ape run` is then
what `Contract(address)` finds and what its links show, in the same run.

An explorer is started on first use and kept until the process ends (or `stop_all`). It reads the
chain through the reader of whoever started it: the deploy hook passes its memoising reader, so
the explorer's reads during the script come from memory, not from a provider the script is using.
"""

from __future__ import annotations

import atexit
import threading
from typing import Any, Optional

_lock = threading.Lock()
# (id(provider), chain id) -> (provider, explorer); the provider is held so its id is not reused.
_running: dict[tuple[int, Any], tuple[Any, Any]] = {}
_atexit = False


def _key(provider: Any) -> tuple[int, Any]:
    try:
        chain_id = provider.chain_id
    except Exception:  # not connected: one explorer per provider object still
        chain_id = None
    return id(provider), chain_id


def shared(provider: Any, chain_reader: Any = None, start: bool = True) -> Optional[Any]:
    """The running explorer for `provider`'s chain; started (on `chain_reader`, default the
    provider itself) when there is none and `start` is set, else None."""
    global _atexit
    key = _key(provider)
    with _lock:
        found = _running.get(key)
        if found is not None:
            return found[1]
        if not start:
            return None
        from ape_contract_verify.evm.chain import ApeProviderChain
        from ape_contract_verify.server.runner import start_embedded

        explorer = start_embedded(chain_reader or ApeProviderChain(provider))
        _running[key] = (provider, explorer)
        if not _atexit:
            _atexit = True
            atexit.register(stop_all)
        return explorer


def stop_all() -> None:
    """Stop every explorer this module started (at exit, and for tests that run Ape in-process)."""
    with _lock:
        explorers = [explorer for _, explorer in _running.values()]
        _running.clear()
    for explorer in explorers:
        try:
            explorer.stop()
        except Exception:  # at exit: nothing left to tell
            pass
