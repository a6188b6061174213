"""Keeping this process's local explorers, one per connected chain, in process (no server, no port).

Each (`explorer.contract_api.EmbeddedExplorer`, asked through `workflow.local_target.LocalTarget`) is shared by everything in the process that verifies or reads there (the deploy hook's
queue, Ape's explorer for `Contract(address)`, links and `publish=True`). What the hook verified
during an `ape run` is then what `Contract(address)` finds and what its links show, in the same run.

An explorer is started on first use and kept until the process ends (or `stop_all`). It reads the
chain through the reader of whoever started it: the deploy hook passes its memoising reader, so
the explorer's reads during the script come from memory, not from a provider the script is using.

What it verified is kept for as long as its chain lives: on a node that outlives the `ape` command
(an anvil the user started), in the project's `.build/contract_verify/explorer-<chain id>-<genesis>.sqlite`,
so a later `ape verify status` or `ape verify all` on that chain answers from it; a new node with
the same chain id has another genesis, so another store. A chain that ends with the command
(Ape's in-process test chain, a node the provider started and stops) gets no store: nothing
could ever read it again (`ends_with_run` says why, for the summary's advice).
"""

from __future__ import annotations

import atexit
import threading
from pathlib import Path
from typing import TYPE_CHECKING

from ape_contract_verify.logs import get_logger

if TYPE_CHECKING:
    from ape.api import ProviderAPI

    from ape_contract_verify.evm.reads import ChainReader
    from ape_contract_verify.explorer.contract_api import EmbeddedExplorer

logger = get_logger()

_lock = threading.Lock()
# (id(provider), chain id, store path) -> (provider, explorer); the provider is held so its id is
# not reused. The store path names the chain instance (its genesis): a provider object reconnected
# to a new node with the same chain id gets that chain's explorer, not the old one's.
_running: dict[tuple[int, int | None, Path | None], tuple[ProviderAPI, EmbeddedExplorer]] = {}


def shared(
    provider: ProviderAPI, chain_reader: ChainReader | None = None, start: bool = True
) -> EmbeddedExplorer | None:
    """The running explorer for `provider`'s chain; started (on `chain_reader`, default the
    provider itself) when there is none and `start` is set, else None."""
    key: tuple[int, int | None, Path | None]
    try:
        key = (id(provider), provider.chain_id, store_path(provider))
    except Exception:  # not connected: one explorer per provider object still
        key = (id(provider), None, None)
    with _lock:
        found = _running.get(key)
        if found is not None:
            return found[1]
        if not start:
            return None
        from ape_contract_verify.evm.chain import ApeProviderChain

        explorer = _start(key[2], chain_reader or ApeProviderChain(provider))
        _running[key] = (provider, explorer)
        return explorer


def kept(provider: ProviderAPI) -> EmbeddedExplorer | None:
    """The running explorer for `provider`'s chain, else the one kept for it (started on its store):
    what `ape verify status` reads. None when the chain ends with the command (nothing is kept)."""
    return shared(provider, start=not ends_with_run(provider))


def ends_with_run(provider: ProviderAPI) -> str:
    """Why `provider`'s chain ends with this `ape` command, in words; "" when it outlives it."""
    from ape_contract_verify.evm.tester_replay import tester_chain

    if tester_chain(provider) is not None:
        return "Ape's test provider runs its chain inside the `ape` command, and it ends with it"
    # getattr: only Ape's SubprocessProvider (ape-foundry's, ape-node's) has a process and its name;
    # one it started, it stops.
    process, name = getattr(provider, "process", None), getattr(provider, "process_name", None)
    if process is not None:
        return f"{provider.name} started this {name or 'node'} and stops it when the command ends"
    return ""


def store_path(provider: ProviderAPI) -> Path | None:
    """Where the explorer of `provider`'s chain keeps what it verified: one SQLite file per chain
    id and genesis hash in the project's .build/contract_verify/; None when the chain ends with
    the command, or its genesis cannot be read (a store keyed by chain id alone could serve one
    anvil's sources for another's)."""
    if ends_with_run(provider):
        return None
    try:
        from ape import project

        chain_id = int(provider.chain_id)
        block_hash = provider.get_block(0).hash
        genesis = block_hash.hex() if isinstance(block_hash, (bytes, bytearray)) else str(block_hash)
        folder = Path(project.path) / ".build" / "contract_verify"
    except Exception as err:  # no store: the explorer still verifies, for this command only
        logger.debug("contract_verify: no store for the local explorer: %s", err)
        return None
    genesis = genesis.removeprefix("0x")
    return folder / f"explorer-{chain_id}-{genesis[:12]}.sqlite" if genesis else None


def _start(path: Path | None, chain_reader: ChainReader) -> EmbeddedExplorer:
    from ape_contract_verify.engine.compilers import process_cache
    from ape_contract_verify.explorer.contract_api import EmbeddedExplorer
    from ape_contract_verify.explorer.store import StoreOpenError

    if path is not None:
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            return EmbeddedExplorer(chain_reader, db_path=path, cache=process_cache()).start()
        except (OSError, StoreOpenError) as err:
            logger.warning(
                "contract_verify: the local explorer keeps nothing after this command: %s cannot be used (%s)",
                path,
                err,
            )
    return EmbeddedExplorer(chain_reader, cache=process_cache()).start()


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


atexit.register(stop_all)  # a no-op when none was started
