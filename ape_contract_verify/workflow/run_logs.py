"""The one walk of a run's blocks: what its transactions created and which proxies they moved.

After a script, its blocks' receipts and logs say which contracts the run touched and which
upgrade events it emitted; `run_children` then finds every contract the run created that Ape did
not deploy (factories, CREATE2 deployers, clones), whether or not an event names it.

Two ways, over an Ape provider and the run's chain reader: the create frames of the run's
transactions that could have created a contract (`created_children`: every CREATE and CREATE2
frame, at any depth, from the node's traces, or without them a replay on a local fork of the node
or in the in-process chain, bounded), and, where the node has no traces, the CREATE rule: a
contract's nonce (`eth_getTransactionCount`) counts the contracts it created, and the n-th is at
`keccak(rlp([creator, n]))[12:]`. The nonce walk reads two nonces per contract that had code
before the run (none for one the run made: it started at 0) and recurses into what it finds, so
children of children are found too, beyond the replays' bound or where they fail.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Collection, Iterable, Mapping
from typing import TYPE_CHECKING, NamedTuple, cast

from ape_contract_verify.evm.reads import NodeObject, ape_address, created_address
from ape_contract_verify.json_types import as_text
from ape_contract_verify.logs import get_logger
from ape_contract_verify.protocol.values import checksum, hex_to_bytes

if TYPE_CHECKING:
    from ape.api import ProviderAPI, ReceiptAPI, TransactionAPI

    from ape_contract_verify.evm.chain import CreationFinder
    from ape_contract_verify.evm.reads import ChainReader
    from ape_contract_verify.workflow.upgrades import UpgradeEvent

logger = get_logger()


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
    from ape_contract_verify.workflow.upgrades import decode_log, log_fields

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
    nonces (children of children too)."""
    from ape_contract_verify.evm.chain import ApeProviderChain

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
    keeps nothing it made) and used enough gas (MIN_CREATING_GAS)."""
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
    from ape_contract_verify.workflow.upgrades import log_bytes

    topics, data = log.get("topics"), log_bytes(log.get("data"))
    chunks = [log_bytes(topic) for topic in (topics if isinstance(topics, (list, tuple)) else [])[1:]]
    chunks += [data[i : i + 32] for i in range(0, len(data) - 31, 32)]
    return [address_in_word(chunk) for chunk in chunks if len(chunk) == 32]


# --- the run's children, named by an event or not ------------------------------------------------

MAX_DEPTH = 4  # generations below a contract the run touched (A makes B makes C makes D)
MAX_CHILDREN = 256  # in all, per run
MAX_SPAN = 64  # contracts one creator may have made in one run, at most, by nonce
MAX_REPLAYED = 64  # transactions of one run replayed to find CREATE2 children, at most
# A transaction that created a contract paid 21000 + 32000 gas at least, less its refund, at most a
# fifth of what it used since London (EIP-3529): one that used less created nothing.
MIN_CREATING_GAS = (21_000 + 32_000) * 4 // 5


def _code(provider: ProviderAPI, address: str, block: int | None = None) -> bytes:
    return hex_to_bytes(provider.get_code(ape_address(address), block_id=block))


def new_since(provider: ProviderAPI, address: str, before: int) -> bool:
    """Whether `address` has code now and had none at block `before` (an unread one has not)."""
    try:
        return bool(_code(provider, address)) and not _code(provider, address, before)
    except Exception as err:
        logger.debug("contract_verify: skipping %s: %s", address, err)
        return False


def _created(frames: Iterable[NodeObject]) -> list[str]:
    """The checksummed addresses create frames made, once each, in order."""
    return list(dict.fromkeys(checksum(to) for frame in frames if (to := as_text(frame.get("to")))))


def nonce_children(
    provider: ProviderAPI,
    involved: Iterable[str],
    before: int,
    made_in_run: Iterable[str] = (),
    max_depth: int = MAX_DEPTH,
    max_children: int = MAX_CHILDREN,
) -> list[str]:
    """Contracts CREATE made during the run (after block `before`), by the creators' nonces.

    `involved`: contracts the run touched (deployed, called, or that logged); `made_in_run`: those
    of them the run created, whose nonce before the run was 0 (no read needed). An address without
    code now (an EOA, a self-destructed contract) creates nothing here and is never a child."""
    made = {a.lower() for a in made_in_run}
    queue = [(checksum(a), 0) for a in dict.fromkeys(involved)]
    visited: set[str] = set()
    found: list[str] = []
    while queue and len(found) < max_children:
        creator, depth = queue.pop(0)
        if creator.lower() in visited or depth >= max_depth:
            continue
        visited.add(creator.lower())
        try:
            # A nonce of 0: created nothing, ever (an EOA that never sent, a pre-EIP-161 contract).
            after = int(provider.get_nonce(ape_address(creator)))
            fresh = after == 0 or creator.lower() in made
            start = 0 if fresh else int(provider.get_nonce(ape_address(creator), block_id=before))
            if start == after or not _code(provider, creator):
                continue  # an EOA: its nonce counts its transactions, and its deploys are Ape's
        except Exception as err:
            logger.debug("contract_verify: no nonce or code for %s: %s", creator, err)
            continue
        # A contract's own nonce starts at 1 (EIP-161): n=0 is never one of its children.
        first = max(start, 1) if creator.lower() in made else start
        for n in range(max(first, after - MAX_SPAN), after):
            child = checksum(created_address(creator, n))  # CREATE's rule
            if not new_since(provider, child, before):
                continue  # failed, self-destructed, or there before the run
            if child.lower() not in made:
                found.append(child)
                made.add(child.lower())
            queue.append((child, depth + 1))
    return found


def created_children(
    reader: CreationFinder,
    provider: ProviderAPI,
    creating: Iterable[tuple[int, str]],
    before: int,
    max_txs: int = MAX_REPLAYED,
) -> list[str]:
    """Every contract the transactions created (CREATE and CREATE2, at any depth, each one's own
    deployment too): `creating` is (block, tx hash) of the run's transactions that could have
    created one (`workflow/run_logs.scan_logs`: succeeded, gas enough), the first `max_txs` of them
    read by `reader.create_frames` (an `evm.chain` reader of `provider`: the node's traces, else a
    replay on a fork of the node or in the in-process chain). A child must have code now and none
    at `before`. A replay that cannot run (no anvil, the node's state gone) is logged and ends the search."""
    by_block: dict[int, list[str]] = {}
    wanted = list(dict.fromkeys((int(b), str(h)) for b, h in creating))
    if len(wanted) > max_txs:
        logger.warning(
            "contract_verify: %d of the run's transactions could have created contracts; the first %d are "
            "replayed to find those no event names (verify the others by address)",
            len(wanted),
            max_txs,
        )
    for block, tx_hash in wanted[:max_txs]:
        by_block.setdefault(block, []).append(tx_hash)
    started = time.monotonic()
    found: list[str] = []
    for block, hashes in by_block.items():
        try:
            frames = reader.create_frames(block, hashes)
        except Exception as err:  # a ChainError (ForkUnavailable too): said once, the nonce walk's children stand
            logger.warning(
                "contract_verify: contracts made with CREATE2 that no event names are not found "
                "without the node's traces: a replay of block %d failed: %s",
                block,
                err,
            )
            break
        # a transaction's own deployment too: the caller drops Ape's
        for address in _created(frame for _tx, _sender, frame in frames):
            if address not in found and new_since(provider, address, before):
                found.append(address)
    if not reader.traced:  # a replay says what it cost; the node's own traces are not said
        logger.info(
            "contract_verify: %d of the run's transactions replayed (the node has no traces) in %.1f s",
            min(len(wanted), max_txs),
            time.monotonic() - started,
        )
    return found
