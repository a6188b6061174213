"""Creation frames on an in-process chain: a block replayed with py-evm, its create messages caught.

Ape's test provider (`ethereum:local:test`) runs eth-tester on py-evm in the same process: it has
no trace API and no URL a fork could start from, but its chain is right here. A block is replayed
on a copy of the state at its parent (the block's own header for the context: number, time,
coinbase, base fee), and every CREATE/CREATE2 message is read from the replay's computation tree,
depth first, in the shape of a callTracer frame (`evm/chain.py` searches them unchanged).

The real chain is never written: the replay's state lives on a write buffer over the chain's
database that is dropped afterwards, and the chain object itself is only read. Callers serialise
(eth-tester is not thread-safe): `ApeProviderChain` holds its lock around `create_frames`.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, cast

from ape_contract_verify.evm.bytecode import to_hex
from ape_contract_verify.evm.reads import ChainError, NodeObject, created_address, provider_web3

if TYPE_CHECKING:
    from ape.api import ProviderAPI
    from eth.abc import BlockAPI, ComputationAPI, StateAPI
    from eth.chains.base import Chain
    from eth.vm.base import VM


class ReplayFailed(ChainError):
    """The block could not be replayed: why, in words."""


def tester_chain(provider: ProviderAPI) -> Chain | None:
    """py-evm's chain behind `provider` when it is an in-process eth-tester (Ape's test provider:
    provider.web3 -> EthereumTesterProvider -> EthereumTester -> PyEVMBackend -> chain); else None.
    Read at each use: eth-tester replaces its chain object when a snapshot is restored."""
    from web3.providers.eth_tester import EthereumTesterProvider

    try:  # raises when the provider is not connected
        web3 = provider_web3(provider)
        tester = (
            web3.provider.ethereum_tester
            if web3 is not None and isinstance(web3.provider, EthereumTesterProvider)
            else None
        )
        # getattr: only eth-tester's PyEVMBackend has a py-evm chain (its MockBackend has none)
        chain: Chain | None = getattr(tester.backend, "chain", None) if tester is not None else None
    except Exception:
        return None
    return chain


def create_frames(chain: Chain | None, block_number: int) -> list[tuple[str, str, NodeObject]]:
    """(tx hash, tx sender, frame) of every successful CREATE/CREATE2 of the canonical block
    `block_number` of `chain` (`tester_chain`'s), depth first; [] for a block without creates.
    Raises ReplayFailed."""
    if chain is None:
        raise ReplayFailed("the provider's in-process chain is gone")
    try:
        # py-evm's BlockNumber is eth-typing's NewType of int
        block = chain.get_canonical_block_by_number(block_number)  # type: ignore[arg-type]
    except Exception as err:  # HeaderNotFound, BlockNotFound
        raise ReplayFailed(f"block {block_number} is not in the chain: {type(err).__name__}") from None
    if not block.transactions:
        return []
    try:
        return list(_replay(chain, block))
    except Exception as err:  # py-evm's ValidationError, VMError, a missing trie node
        raise ReplayFailed(f"block {block_number}: {type(err).__name__}: {err}") from None


def _preprocess(vm: VM, block: BlockAPI) -> None:
    """py-evm 0.11 and later take the block (an instance method); 0.10 (eth-tester 0.11, with
    eth-ape 0.8.25 and web3 6) takes the state and the header (a classmethod)."""
    import inspect

    if "header" in inspect.signature(vm.block_preprocessing).parameters:
        vm.block_preprocessing(vm.state, block.header)  # type: ignore[call-arg, arg-type]  # py-evm 0.10's
    else:
        vm.block_preprocessing(block)


def _replay(chain: Chain, block: BlockAPI) -> Iterator[tuple[str, str, NodeObject]]:
    from eth.db.atomic import AtomicDB
    from eth.db.batch import BatchDB

    parent = chain.get_block_header_by_hash(block.header.parent_hash)
    # The block's context on its parent's state: what the block's transactions ran on.
    header = block.header.copy(state_root=parent.state_root, gas_used=0)
    base = cast("VM", chain.get_vm(at_header=header))  # every py-evm fork's VM is one (with its contexts)
    overlay = AtomicDB(BatchDB(chain.chaindb.db))  # writes stay in the buffer, never committed
    vm = type(base)(
        header=header,
        chaindb=type(chain.chaindb)(overlay),
        chain_context=base.chain_context,
        consensus_context=base.consensus_context,
    )
    _preprocess(vm, block)  # the system contracts' writes before the first transaction
    state = vm.state
    for transaction in block.transactions:
        state.lock_changes()
        computation = state.apply_transaction(transaction)
        tx_hash, sender = to_hex(transaction.hash), to_hex(transaction.sender)
        for frame in _walk(computation, state):
            yield tx_hash, sender, frame


def _walk(computation: ComputationAPI, state: StateAPI) -> Iterator[NodeObject]:
    """Create frames of a computation tree, depth first; a failed computation's subtree skipped
    (as `reads.walk_create_frames` skips a callTracer frame with an error). CREATE put its contract
    where one of the creator's nonces so far gives (`created_address`); CREATE2's address is none of them."""
    if computation.is_error:
        return
    message = computation.msg
    if message.is_create:
        creator, address = to_hex(message.sender), to_hex(message.storage_address)
        nonces = range(state.get_nonce(message.sender))
        yield {
            "type": "CREATE" if any(created_address(creator, n) == address for n in nonces) else "CREATE2",
            "from": creator,
            "to": address,
            "input": to_hex(message.code),  # the init code (and constructor arguments)
            "output": to_hex(computation.output),
        }
    for child in computation.children:
        yield from _walk(child, state)
