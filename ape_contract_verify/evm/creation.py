"""Finding a contract's creation (its block, transaction and input), shared by both readers.

A binary search on historical `eth_getCode` finds the block in which the code appeared (log2(height)
calls), then that block's transactions are checked for a direct deployment, and its traces for a
factory CREATE/CREATE2 frame; a node that refuses traces gets `evm/fork.py`'s replay. An in-process
chain (Ape's test provider) has neither traces nor a node to fork: its reader replays the block in
the process (`evm/tester_replay.py`), with the same frames. Nodes without historical state fall
back to a bounded scan of the recent blocks.
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping
from functools import partial
from typing import TYPE_CHECKING

from ape_contract_verify.evm.reads import ChainError, Creation, NodeObject, node_list, node_object
from ape_contract_verify.json_types import as_text
from ape_contract_verify.protocol.values import hex_to_bytes as _hex_bytes

if TYPE_CHECKING:
    from ape_contract_verify.evm.fork import ForkReplayer

DEFAULT_SCAN_BLOCKS = 5_000
# A node that prunes state keeps the last 128 blocks' (geth's default): the creation block is
# searched there when older blocks' code cannot be read.
RECENT_STATE_BLOCKS = 128
# Without historical code the block is not known: a fork replays only the most recent blocks.
FORK_SCAN_BLOCKS = 16
# Transactions of one block traced on a fork, at most (those whose logs name the address first).
FORK_MAX_TXS = 32
_TOO_OLD = -1
# The in-process chain's replay (`evm/tester_replay.py`): what `creation_attempts` says it is, and
# a Creation's `source` when it answers.
IN_PROCESS_REPLAY = "a replay in the in-process chain"
IN_PROCESS_SOURCE = "in-process replay"

# (tx hash, tx sender, frame) of one CREATE/CREATE2: the frame in callTracer's shape (type, from,
# to, input), from a node's trace, a fork's or an in-process replay.
CreateFrame = tuple[str, str, NodeObject]
# (tx hash, input, sender, lazy receipt contract address) of one to-less transaction.
Deployment = tuple[str, bytes, str, Callable[[], object]]


def created_address(sender: str, nonce: int) -> str:
    """Where a to-less transaction from `sender` with `nonce` puts its contract (CREATE's rule)."""
    import rlp
    from eth_utils.crypto import keccak

    return "0x" + keccak(rlp.encode([_hex_bytes(sender), nonce]))[12:].hex()


def norm_address(address: object) -> str:
    """An address as text to compare, lower case; "" for none (or a value that is no text)."""
    return address.lower() if isinstance(address, str) else ""


def walk_create_frames(frame: object) -> Iterator[NodeObject]:
    """CREATE/CREATE2 frames of a callTracer tree, depth first (failed subtrees skipped)."""
    if not isinstance(frame, Mapping):
        return
    if str(frame.get("type", "")).upper() in ("CREATE", "CREATE2") and "error" not in frame:
        yield frame
    if "error" in frame:
        return
    for sub in node_list(frame.get("calls")):
        yield from walk_create_frames(sub)


def _ran_as_sent(tx: NodeObject, frame: object) -> bool:
    """Whether a transaction traced as a call ran as it did on chain (it succeeded there, the run
    only replays those): no error, and a deployment made its contract where the sender's nonce
    put it (a different nonce on the fork moves it, and every child below with it)."""
    if not isinstance(frame, Mapping) or "error" in frame:
        return False
    if tx.get("to"):
        return True
    nonce = tx.get("nonce")
    nonce = int(nonce, 16) if isinstance(nonce, str) else nonce
    if not isinstance(nonce, int):
        return False
    return norm_address(frame.get("to")) == created_address(str(tx.get("from")), nonce)


class CreationFinder:
    """The search shared by both readers; subclasses answer the primitive questions."""

    def __init__(self, max_scan_blocks: int = DEFAULT_SCAN_BLOCKS, fork: bool | ForkReplayer = True):
        """`fork`: True replays on a fork of the node (when its URL is known and it has no
        traces), False never, or a `fork.ForkReplayer` to use."""
        self.max_scan_blocks = max_scan_blocks
        self._creations: dict[tuple[str, str], Creation] = {}
        self._creation_lock = threading.Lock()
        self._fork_setting = fork
        self._fork: ForkReplayer | None = None if isinstance(fork, bool) else fork
        self._tried: dict[str, list[str]] = {}  # address -> what the last search tried, in words

    # primitives
    def _block_number(self) -> int:
        raise NotImplementedError

    def _code_at(self, address: str, block: int) -> bytes | None:
        """Code at a past block, or None when the node keeps no historical state."""
        try:
            return self.get_code(address, block)
        except ChainError:
            return None

    def _block_deployments(self, block: int) -> Iterable[Deployment]:
        """(tx hash, input, sender, lazy receipt contract address) for each to-less transaction."""
        raise NotImplementedError

    def _block_create_frames(self, block: int) -> list[CreateFrame] | None:
        """(tx hash, tx sender, frame) of each CREATE/CREATE2 frame in the block; None without traces."""
        raise NotImplementedError

    def _frames_source(self) -> str:
        """Where `_block_create_frames` takes its frames: "trace", the node's trace APIs (refused:
        a replay on a fork may follow), or IN_PROCESS_SOURCE, a replay in the in-process chain (no
        fork: there is no node; a failed replay raises ChainError, which says why)."""
        return "trace"

    def get_code(self, address: str, block: int | None = None) -> bytes:
        """The code at `address` now, or at a past `block`."""
        raise NotImplementedError

    def _node_url(self) -> str | None:
        """The node's JSON-RPC URL, for a fork; None when there is none (an in-process chain)."""
        return None

    def _block_transactions(self, block: int) -> list[NodeObject]:
        """The block's transactions as JSON-RPC objects (hex quantities), in order."""
        raise NotImplementedError

    def _block_receipts(self, block: int) -> list[object] | None:
        """The block's receipts in one call (eth_getBlockReceipts), or None."""
        return None

    def creation_attempts(self, address: str) -> list[str]:
        """What the last search for `address` tried without finding it, in words."""
        return list(self._tried.get(norm_address(address), []))

    def fork_replayer(self) -> ForkReplayer | None:
        """The fork replayer, made on first use; None when forking is off or there is no URL."""
        if self._fork is None and self._fork_setting is True and (url := self._node_url()):
            from ape_contract_verify.evm.fork import ForkReplayer

            self._fork = ForkReplayer(url)
        return self._fork

    def close(self) -> None:
        """Stop the fork, if one runs."""
        if self._fork is not None:
            self._fork.close()

    # search
    def find_creation(self, address: str) -> Creation | None:
        code = self.get_code(address)
        if not code:
            return None
        # Keyed by the code too: a restarted dev chain can hold other code at the same address.
        key = (norm_address(address), hashlib.sha256(code).hexdigest())
        with self._creation_lock:
            if key in self._creations:
                return self._creations[key]
        tried: list[str] = []
        self._tried[norm_address(address)] = tried
        latest = self._block_number()
        lowest = max(0, latest - self.max_scan_blocks)
        block = self._creation_block(address, lowest, latest)
        if block is None and lowest < latest - RECENT_STATE_BLOCKS:
            # A pruning node answers only recent blocks' code: search there.
            block = self._creation_block(address, latest - RECENT_STATE_BLOCKS, latest)
            block = None if block == _TOO_OLD else block
        if block == _TOO_OLD:
            tried.append(f"the creation is older than the {self.max_scan_blocks} blocks searched")
            return None
        blocks: Iterable[int] = [block] if block is not None else range(latest, lowest - 1, -1)
        for number in blocks:
            creation = self._creation_in_block(
                address, number, fork=block is not None or number > latest - FORK_SCAN_BLOCKS
            )
            if creation:
                with self._creation_lock:
                    self._creations[key] = creation
                return creation
        tried[:] = list(dict.fromkeys(tried))  # a scan tries each source once per block: say it once
        return None

    def _creation_block(self, address: str, lo: int, hi: int) -> int | None:
        """The first block with code at `address`, by binary search.

        None when the node keeps no historical state (the caller scans instead); _TOO_OLD when the
        code predates the scan window.
        """
        first = self._code_at(address, lo)
        if first is None:
            return None
        if first:
            return lo if lo == 0 else _TOO_OLD
        last = self._code_at(address, hi)
        if not last:
            return None
        while hi - lo > 1:
            mid = (lo + hi) // 2
            code = self._code_at(address, mid)
            if code is None:
                return None
            if code:
                hi = mid
            else:
                lo = mid
        return hi

    def _creation_in_block(self, address: str, block: int, fork: bool = True) -> Creation | None:
        target = norm_address(address)
        for tx_hash, data, sender, contract_address in self._block_deployments(block):
            if norm_address(contract_address()) == target:
                return Creation(tx_hash, data, sender, factory=False, block=block, source="transaction")
        tried = self._tried.setdefault(target, [])
        source = self._frames_source()
        try:
            frames = self._block_create_frames(block)
        except ChainError as err:  # the in-process replay's failure (the trace APIs' refusal is None)
            tried.append(f"{IN_PROCESS_REPLAY} ({err})")
            return None
        if frames is None:
            tried.append("the node's trace APIs (refused)")
            frames = self._fork_frames(target, block) if fork else None
            source = "fork replay"
        for tx_hash, sender, frame in frames or []:
            if norm_address(frame.get("to")) == target:
                return Creation(
                    tx_hash,
                    _hex_bytes(frame.get("input")),
                    sender,
                    factory=norm_address(frame.get("from")) != norm_address(sender),
                    block=block,
                    creator=as_text(frame.get("from")),
                    source=source,
                )
        if source == IN_PROCESS_SOURCE:
            tried.append(f"{IN_PROCESS_REPLAY} (no transaction created the address)")
        return None

    def _fork_frames(self, target: str, block: int) -> list[CreateFrame] | None:
        """The block's transactions replayed on a local fork, until one creates `target`."""
        tried = self._tried.setdefault(target, [])

        def creates(frame: object) -> bool:
            return any(norm_address(c.get("to")) == target for c in walk_create_frames(frame))

        try:
            replayer, txs = self._replay_setup(block)
            for index in self._candidates(target, block, txs)[:FORK_MAX_TXS]:
                frame = replayer.trace(block, txs, index, creates)
                if creates(frame):
                    return [
                        (str(txs[index]["hash"]), str(txs[index].get("from", "")), c) for c in walk_create_frames(frame)
                    ]
        except ChainError as err:  # fork.ForkUnavailable among them
            tried.append(f"a replay on a local fork ({err})")
            return None
        tried.append(f"a replay on a local fork of block {block} (no transaction of it created the address)")
        return None

    def replay_create_frames(self, block: int, tx_hashes: Iterable[str]) -> list[CreateFrame]:
        """(tx hash, tx sender, frame) of every CREATE/CREATE2 of the given transactions of `block`,
        for a node without traces: the in-process replay of the block, else each transaction
        traced on a fork (`evm/fork.py`, which keeps the trace for a later creation search). A
        traced call is kept when it ran as the transaction did (no error; a deployment at the
        address its sender's nonce gives), else the block is replayed up to it. Raises ChainError
        (fork.ForkUnavailable: why there is no fork, in words)."""
        wanted = {norm_address(h) for h in tx_hashes}
        if self._frames_source() == IN_PROCESS_SOURCE:
            return [f for f in self._block_create_frames(block) or [] if norm_address(f[0]) in wanted]
        replayer, txs = self._replay_setup(block)
        found: list[CreateFrame] = []
        for index, tx in enumerate(txs):
            if norm_address(str(tx.get("hash", ""))) not in wanted:
                continue
            frame = replayer.trace(block, txs, index, partial(_ran_as_sent, tx))
            found += [(str(tx["hash"]), str(tx.get("from", "")), c) for c in walk_create_frames(frame)]
        return found

    def _replay_setup(self, block: int) -> tuple[ForkReplayer, list[NodeObject]]:
        """The fork replayer and the block's transactions; ForkUnavailable says why there is no fork."""
        from ape_contract_verify.evm.fork import ForkUnavailable

        replayer = self.fork_replayer()
        if replayer is None:
            raise ForkUnavailable("off" if not self._fork_setting else "no node URL to fork")
        return replayer, self._block_transactions(block)

    def _candidates(self, target: str, block: int, txs: list[NodeObject]) -> list[int]:
        """Indexes of the block's transactions worth replaying, those whose logs name the address first."""
        bare = target.removeprefix("0x")
        try:
            receipts = self._block_receipts(block) or []
        except ChainError:
            receipts = []
        # A log names it as its emitter, in a topic or in its data: the logs' text holds it.
        named = {i for i, receipt in enumerate(receipts) if bare in str(node_object(receipt).get("logs")).lower()}
        return sorted(range(len(txs)), key=lambda i: (i not in named, i))
