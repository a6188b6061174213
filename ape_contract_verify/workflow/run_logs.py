"""The one walk of a run's blocks: what its transactions created and which proxies they moved.

After a script, its blocks' receipts and logs say which contracts the run touched and which
upgrade events it emitted; `run_children` then finds every contract the run created that Ape did
not deploy (factories, CREATE2 deployers, clones), by the node's traces, or without traces by
replays and nonces (`evm/children.py`).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping
from typing import TYPE_CHECKING, NamedTuple, cast

from ape_contract_verify.protocol.values import checksum

if TYPE_CHECKING:
    from ape.api import ProviderAPI, ReceiptAPI, TransactionAPI

    from ape_contract_verify.evm.chain import CreationFinder
    from ape_contract_verify.evm.reads import ChainReader
    from ape_contract_verify.evm.upgrades import UpgradeEvent


class RunScan(NamedTuple):
    """What one walk of a run's blocks found."""

    candidates: list[str]  # addresses the logs mention (topics, data words), not in `seen`
    events: list[UpgradeEvent]  # the upgrade events, in order
    involved: list[str]  # contracts the run touched: its transactions' receivers, its logs' emitters
    # (block, hash) of the run's transactions (on a live network, Ape's accounts' only) that could have created a contract
    creating: list[tuple[int, str]]


def scan_logs(provider: ProviderAPI, start_block: int, seen: Collection[str] = (), max_blocks: int = 5000) -> RunScan:
    """One walk of the run's blocks (after `start_block`) and their receipts' logs."""
    from ape_contract_verify.evm.bytecode import to_hex
    from ape_contract_verify.evm.upgrades import decode_log, log_fields

    latest = provider.get_block("latest").number or 0
    ours = _own_sender(provider)
    scan = RunScan([], [], [], [])
    named: list[object] = []  # the addresses the logs name, and raw creations
    involved: list[object] = []
    for number in range(max(start_block + 1, latest - max_blocks + 1), latest + 1):
        # Not `get_block(n).transactions`: that asks Ape's query manager, whose first use loads
        # every plugin's query engine (a second or more) for what the provider answers directly.
        for txn in provider.get_transactions_by_block(number):
            if not ours(txn):
                continue
            receipt = provider.get_receipt(txn.txn_hash)
            if _could_create(receipt):
                scan.creating.append((number, to_hex(receipt.txn_hash)))
            if _is_address(txn.receiver):  # eth-tester gives a creation the zero address
                involved.append(txn.receiver)
            else:
                named.append(receipt.contract_address)  # a raw creation transaction (a blueprint sent by hand)
            for log in receipt.logs or []:
                event = decode_log(log, str(receipt.txn_hash))
                if event is not None:
                    scan.events.append(event)
                fields = log_fields(log)
                involved.append(fields.get("address"))
                named += _address_words(fields)
    scan.candidates.extend(a for a in _distinct(named) if a.lower() not in seen)
    scan.involved.extend(_distinct(involved))
    return scan


def run_children(
    provider: ProviderAPI,
    start_block: int,
    scan: RunScan,
    seen: Collection[str] = (),
    reader: ChainReader | None = None,
) -> list[str]:
    """Every contract the run created that is not in `seen` (what Ape deployed): those its logs
    name or emit with new code; then every CREATE and CREATE2 of the run's transactions that could
    have created one, read by `reader` (an `evm.chain` reader of the provider: the node's traces,
    else a replay on a fork of its node or in its in-process chain; one is made, and closed after,
    when none is given), and, without traces, the CREATE children by the involved contracts'
    nonces (`evm/children.py`: children of children too)."""
    from ape_contract_verify.evm.chain import ApeProviderChain
    from ape_contract_verify.evm.children import created_children, new_since, nonce_children

    mine = {a.lower() for a in seen}
    candidates = dict.fromkeys(scan.candidates + scan.involved)
    found = [a for a in candidates if a.lower() not in mine and new_since(provider, a, max(start_block, 0))]
    own = ApeProviderChain(provider) if reader is None else None
    try:
        frames = own or cast("CreationFinder", reader)  # a queue's reader, or a wrapper passing its calls on
        made = created_children(frames, provider, scan.creating, start_block) if scan.creating else []
        if not frames.traced:
            deployed = [checksum(a) for a in seen]
            made = (
                nonce_children(provider, deployed + scan.involved + found, start_block, made_in_run=deployed + found)
                + made
            )
    finally:
        if own is not None:
            own.close()  # its fork; a caller's reader keeps it for the children's creations
    return found + [a for a in dict.fromkeys(made) if a.lower() not in mine and a not in found]


def _could_create(receipt: ReceiptAPI) -> bool:
    """Whether a receipt leaves room for a contract creation: it succeeded (a reverted transaction
    keeps nothing it made) and used enough gas (`children.MIN_CREATING_GAS`)."""
    from ape_contract_verify.evm.children import MIN_CREATING_GAS

    try:
        return int(receipt.status) == 1 and int(receipt.gas_used or MIN_CREATING_GAS) >= MIN_CREATING_GAS
    except (TypeError, ValueError):
        return True


def _own_sender(provider: ProviderAPI) -> Callable[[TransactionAPI], bool]:
    """On a live network a run's blocks hold others' transactions too: only those Ape's accounts
    sent are read (a receipt each), not every one of a busy chain's. A dev chain is the run's own."""
    try:
        from ape import accounts

        dev = provider.network.is_dev
    except Exception:
        dev = True

    def ours(txn: TransactionAPI) -> bool:
        try:
            return dev or txn.sender in accounts
        except Exception:
            return True

    return ours


def _is_address(value: object) -> bool:
    return bool(value) and int(str(value), 16) != 0


def _distinct(addresses: list[object]) -> list[str]:
    """The nonzero addresses, checksummed, each once, in order."""

    return list(dict.fromkeys(checksum(str(a)) for a in addresses if _is_address(a)))


def _address_words(log: Mapping[str, object]) -> list[object]:
    """Addresses a log mentions: in its indexed topics and its 32-byte data words."""
    from ape_contract_verify.evm.proxies import address_in_word
    from ape_contract_verify.evm.upgrades import log_bytes

    topics, data = log.get("topics"), log_bytes(log.get("data"))
    chunks = [log_bytes(topic) for topic in (topics if isinstance(topics, (list, tuple)) else [])[1:]]
    chunks += [data[i : i + 32] for i in range(0, len(data) - 31, 32)]
    return [address_in_word(chunk) for chunk in chunks if len(chunk) == 32]
