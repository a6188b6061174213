"""The one walk of a run's blocks: what its transactions created and which proxies they moved.

After a script, its blocks' receipts and logs say which contracts the run touched and which
upgrade events it emitted; `run_children` then finds every contract the run created that Ape did
not deploy (factories, CREATE2 deployers, clones), by the node's traces, or without traces by
nonces and replays (`evm/children.py`).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Collection, Mapping
from typing import TYPE_CHECKING, NamedTuple, cast

from ape_contract_verify.logs import get_logger

if TYPE_CHECKING:
    from ape.api import ProviderAPI, ReceiptAPI, TransactionAPI

    from ape_contract_verify.evm.children import ReplaysCreations
    from ape_contract_verify.evm.reads import ChainReader
    from ape_contract_verify.evm.upgrades import UpgradeEvent

logger = get_logger()


class RunScan(NamedTuple):
    """What one walk of a run's blocks found."""

    candidates: list[str]  # addresses the logs mention (topics, data words), not in `seen`
    events: list[UpgradeEvent]  # the upgrade events, in order
    transactions: list[str]  # the hashes of the run's transactions (on a live network, Ape's accounts' only)
    involved: list[str]  # contracts the run touched: its transactions' receivers, its logs' emitters
    creating: list[tuple[int, str]]  # (block, hash) of the run's transactions that could have created a contract


def scan_logs(provider: ProviderAPI, start_block: int, seen: Collection[str] = (), max_blocks: int = 5000) -> RunScan:
    """One walk of the run's blocks (after `start_block`) and their receipts' logs."""
    from ape_contract_verify.evm.upgrades import decode_log
    from ape_contract_verify.protocol.values import checksum

    latest = provider.get_block("latest").number or 0
    first = max(start_block + 1, latest - max_blocks + 1)
    scan = RunScan([], [], [], [], [])
    ours = _own_sender(provider)

    def touched(address: object) -> None:
        if address and int(str(address), 16) and checksum(str(address)) not in scan.involved:
            scan.involved.append(checksum(str(address)))

    for number in range(first, latest + 1):
        # Not `get_block(n).transactions`: that asks Ape's query manager, whose first use loads
        # every plugin's query engine (a second or more) for what the provider answers directly.
        for txn in provider.get_transactions_by_block(number):
            if not ours(txn):
                continue
            receipt = provider.get_receipt(txn.txn_hash)
            scan.transactions.append(hash_text(receipt.txn_hash))
            if _could_create(receipt):
                scan.creating.append((number, hash_text(receipt.txn_hash)))
            receiver = txn.receiver  # eth-tester gives a creation the zero address
            touched(receiver)
            made = receipt.contract_address if not receiver or not int(str(receiver), 16) else None
            if made and str(made).lower() not in seen and checksum(str(made)) not in scan.candidates:
                scan.candidates.append(checksum(str(made)))  # a raw creation transaction (a blueprint sent by hand)
            for log in receipt.logs or []:
                event = decode_log(log, str(receipt.txn_hash))
                if event is not None:
                    scan.events.append(event)
                touched(_log_fields(log).get("address"))
                for word in _address_words(log):
                    if word.lower() not in seen and word not in scan.candidates:
                        scan.candidates.append(word)
    return scan


def run_children(
    provider: ProviderAPI,
    start_block: int,
    scan: RunScan,
    seen: Collection[str] = (),
    reader: ChainReader | None = None,
) -> list[str]:
    """Every contract the run created that is not in `seen` (what Ape deployed): those its logs
    name or emit with new code; then every CREATE and CREATE2 in the node's traces of the run's
    transactions, or, without traces, the CREATE children by the involved contracts' nonces
    (`evm/children.py`: children of children too) and every CREATE and CREATE2 of the run's
    transactions that could have created one, replayed by `reader` (an `evm.chain` reader of the
    provider: on a fork of its node, or in its in-process chain; one is made when none is given)."""
    from ape_contract_verify.evm.children import nonce_children, traced_children
    from ape_contract_verify.protocol.values import checksum

    mine = {a.lower() for a in seen}
    found = created_since(
        provider, start_block, [a for a in dict.fromkeys(scan.candidates + scan.involved) if a.lower() not in mine]
    )
    traced = traced_children(provider, scan.transactions)
    if traced is None:
        deployed = [checksum(a) for a in seen]
        traced = nonce_children(provider, deployed + scan.involved + found, start_block, made_in_run=deployed + found)
        if scan.creating:
            traced += _replayed(provider, reader, scan.creating, start_block)
    for address in traced:
        if address.lower() not in mine and address not in found:
            found.append(address)
    return found


def _replayed(
    provider: ProviderAPI, reader: ChainReader | None, creating: list[tuple[int, str]], start_block: int
) -> list[str]:
    from ape_contract_verify.evm.chain import ApeProviderChain
    from ape_contract_verify.evm.children import MAX_REPLAYED, replayed_children

    own = ApeProviderChain(provider) if reader is None else None
    started = time.monotonic()
    try:
        # A queue's reader is a CreationFinder (JsonRpcChain, ApeProviderChain) or a wrapper passing its calls on.
        finder = own if own is not None else cast("ReplaysCreations", reader)
        found = replayed_children(finder, provider, creating, start_block)
    finally:
        if own is not None:
            own.close()  # its fork; a queue's reader keeps it for the children's creations
    logger.info(
        "contract_verify: %d of the run's transactions replayed (the node has no traces) in %.1f s",
        min(len(creating), MAX_REPLAYED),
        time.monotonic() - started,
    )
    return found


def _could_create(receipt: ReceiptAPI) -> bool:
    """Whether a receipt leaves room for a contract creation: it succeeded (a reverted transaction
    keeps nothing it made) and used enough gas (`children.MIN_CREATING_GAS`)."""
    from ape_contract_verify.evm.children import MIN_CREATING_GAS

    try:
        if int(receipt.status) != 1:
            return False
        return int(receipt.gas_used or MIN_CREATING_GAS) >= MIN_CREATING_GAS
    except (TypeError, ValueError):
        return True


def hash_text(value: str | bytes) -> str:
    return value if isinstance(value, str) else "0x" + bytes(value).hex()


def _own_sender(provider: ProviderAPI) -> Callable[[TransactionAPI], bool]:
    """On a live network a run's blocks hold others' transactions too: only those Ape's accounts
    sent are read (a receipt each), not every one of a busy chain's. A dev chain is the run's own."""
    try:
        if provider.network.is_dev:
            return lambda txn: True
        from ape import accounts
    except Exception:
        return lambda txn: True

    def ours(txn: TransactionAPI) -> bool:
        try:
            return txn.sender in accounts
        except Exception:
            return True

    return ours


def created_since(provider: ProviderAPI, start_block: int, candidates: list[str]) -> list[str]:
    """Of the addresses the run's logs mention, the contracts made during the run: code now, none
    at `start_block`."""
    found: list[str] = []
    before = max(start_block, 0)
    for address in candidates:
        try:
            if provider.get_code(address) and not provider.get_code(address, block_id=before):
                found.append(address)
        except Exception as err:
            logger.debug("contract_verify: skipping %s: %s", address, err)
    return found


def _log_fields(log: object) -> Mapping[str, object]:
    """A receipt's log as a mapping: Ape's are dicts; an object's attributes otherwise."""
    if isinstance(log, Mapping):
        return log
    return vars(log) if hasattr(log, "__dict__") else {}


def _address_words(log: object) -> list[str]:
    """Addresses a log mentions: in its indexed topics and its 32-byte data words."""
    from ape_contract_verify.protocol.values import checksum

    words = []
    raw = _log_fields(log)
    topics = list(_items(raw.get("topics")))[1:]
    data = raw.get("data") or b""
    data = bytes.fromhex(data.removeprefix("0x")) if isinstance(data, str) else _bytes(data)
    chunks = [_bytes(t) if not isinstance(t, str) else bytes.fromhex(t.removeprefix("0x")) for t in topics]
    chunks += [bytes(data[i : i + 32]) for i in range(0, len(data) - len(data) % 32, 32)]
    for chunk in chunks:
        if len(chunk) == 32 and chunk[:12] == bytes(12) and chunk[12:] != bytes(20):
            words.append(checksum("0x" + chunk[12:].hex()))
    return words


def _items(value: object) -> list[object]:
    return list(value) if isinstance(value, (list, tuple)) else []


def _bytes(value: object) -> bytes:
    """A log's topic or data as bytes (HexBytes, bytes, or a sequence of ints)."""
    if isinstance(value, (bytes, bytearray, memoryview)):
        return bytes(value)
    return bytes(value) if isinstance(value, (list, tuple)) else b""
