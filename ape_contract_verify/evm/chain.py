"""The two chain readers, JSON-RPC to a node (`JsonRpcChain`) or through an Ape provider, and the
creation search they share (`CreationFinder`).

`ChainReader` (`evm/reads.py`) is all the verifier and proxy detection need (and `get_transaction`,
the explorer's transaction page). `JsonRpcChain` talks JSON-RPC to any node (anvil, for
`ape verify serve --rpc URL`); `ApeProviderChain` reads through an Ape provider, including the
in-process `ethereum:local:test` one, which has no JSON-RPC endpoint. Both are safe to call from
several worker threads.

Finding a creation: a binary search on historical `eth_getCode` finds the block in which the code
appeared (log2(height) calls), then that block's transactions are checked for a direct deployment,
and its traces for a factory CREATE/CREATE2 frame; a node that refuses traces gets a replay on a
local fork (`ForkReplayer`, below). An in-process chain (Ape's test provider) has neither traces nor a node to fork: its reader
replays the block in the process (`evm/tester_replay.py`), with the same frames. Nodes without
historical state fall back to a bounded scan of the recent blocks.

The fork: hosted nodes refuse `debug_*` and `trace_*`, so a factory's child has no creation input
there. anvil (from the toolchain, or `anvil` on PATH) forks the node at the block before the
transaction, which needs only `eth_*` reads of that block's state (a non-archive node keeps recent
blocks' state: the deploy hook replays right after the deploy). There the transaction is traced
with a call (`debug_traceCall`) and, when that does not create the address (an earlier transaction
of the same block changed the factory's state), the block's transactions up to it are sent again
and the one asked for is traced (`debug_traceTransaction`).

Bounded: one anvil process per reader, forked at one block at a time (reused for every address of
that block, reset to the next block's); it starts within `startup_timeout`, each call ends within
`timeout`; it is killed on `close()` and at exit.
"""

from __future__ import annotations

import contextlib
import hashlib
import itertools
import os
import shutil
import socket
import subprocess
import threading
import time
import weakref
from collections.abc import Callable, Iterable, Iterator, Mapping
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from ape_contract_verify.evm.bytecode import to_hex
from ape_contract_verify.evm.reads import (
    CallReverted,
    ChainError,
    CreateFrame,
    Creation,
    NodeObject,
    TransactionFacts,
    ape_address,
    created_address,
    node_list,
    node_object,
    norm_address,
    provider_web3,
    quantity,
    read_transaction,
    walk_create_frames,
)
from ape_contract_verify.evm.tester_replay import create_frames, tester_chain
from ape_contract_verify.json_types import JsonValue, as_text
from ape_contract_verify.protocol.values import hex_to_bytes as _hex_bytes
from ape_contract_verify.retry import Retry, RetryPolicy, with_retries

if TYPE_CHECKING:
    import requests
    from ape.api import ProviderAPI

T = TypeVar("T")

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

# (tx hash, input, sender, the address CREATE's rule gives its contract) of one to-less transaction.
Deployment = tuple[str, bytes, str, str]


def _ran_as_sent(tx: NodeObject, frame: object) -> bool:
    """Whether a transaction traced as a call ran as it did on chain (it succeeded there, the run
    only replays those): no error, and a deployment made its contract where the sender's nonce
    put it (a different nonce on the fork moves it, and every child below with it)."""
    if not isinstance(frame, Mapping) or "error" in frame:
        return False
    if tx.get("to"):
        return True
    try:
        nonce = quantity(tx.get("nonce"))
    except TypeError:
        return False
    return norm_address(frame.get("to")) == created_address(str(tx.get("from")), nonce)


def revert_data(error: object) -> bytes:
    """The revert data of a JSON-RPC error: anvil and geth put it in `data` as hex."""
    data = error.get("data") if isinstance(error, Mapping) else None
    if isinstance(data, Mapping):  # some nodes nest it
        data = data.get("data")
    try:
        return _hex_bytes(data) if isinstance(data, str) else b""
    except ValueError:
        return b""


# A provider's rate limit: HTTP 429, or JSON-RPC -32005 (limit exceeded) / -32029 (too many requests).
RATE_LIMIT_CODES = (-32005, -32029, 429)
RATE_LIMIT_RETRIES = 8
RATE_LIMIT_MAX_WAIT = 8.0


def is_rate_limited(body: object) -> bool:
    error = body.get("error") if isinstance(body, Mapping) else None
    if not isinstance(error, Mapping):
        return False
    message = str(error.get("message", "")).lower()
    return error.get("code") in RATE_LIMIT_CODES or "rate limit" in message or "too many requests" in message


def rate_limit_text(err: BaseException) -> bool:
    """Whether an error raised by a provider (web3, Ape) is a rate limit, by its words."""
    text = str(err).lower()
    return any(word in text for word in ("429", "too many requests", "rate limit", "-32005", "-32029"))


# How a node says it refuses a method itself (JSON-RPC -32601, as hosted plans answer).
_REFUSALS = ("does not exist", "not available", "method not found", "not supported", "-32601", "unsupported method")


def is_refused(err: BaseException) -> bool:
    """Whether the node refused the method itself."""
    return any(word in str(err).lower() for word in _REFUSALS)


def node_retry(retries: int | None = None) -> RetryPolicy:
    """How a node's rate limit is waited out (`ape_contract_verify.retry`'s one policy): its
    Retry-After, else doubling from 0.25 s with jitter, at most RATE_LIMIT_MAX_WAIT seconds;
    RATE_LIMIT_RETRIES retries unless `retries` says."""
    return RetryPolicy(
        max_retries=RATE_LIMIT_RETRIES if retries is None else retries, base_delay=0.25, max_delay=RATE_LIMIT_MAX_WAIT
    )


ANVIL_ENV = "APE_CONTRACT_VERIFY_ANVIL"


class ForkUnavailable(ChainError):
    """No replay on a fork: why, in words for the summary (no URL, no secrets)."""


def find_anvil() -> str | None:
    """anvil: `$APE_CONTRACT_VERIFY_ANVIL`, else on PATH, else the project toolchain's."""
    explicit = os.environ.get(ANVIL_ENV)
    if explicit:
        return explicit if Path(explicit).is_file() else None
    found = shutil.which("anvil")
    if found:
        return found
    for base in (Path.cwd(), *Path(__file__).resolve().parents):
        candidate = base / "toolchain" / "node_modules" / ".bin" / "anvil"
        if candidate.is_file():
            return str(candidate)
    return None


def _end(proc: subprocess.Popen[bytes]) -> None:
    """A fork process killed and reaped: at `close()`, when its replayer is dropped, or at exit
    (`weakref.finalize`'s, which holds the process, not the replayer)."""
    if proc.poll() is None:
        proc.kill()
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(timeout=10)
    if proc.stderr:
        proc.stderr.close()


def _call_of(tx: Mapping[str, object]) -> dict[str, object]:
    """The transaction as a call: who, to whom, what, how much, with how much gas."""
    value = tx.get("value")
    call = {
        "from": tx.get("from"),
        "to": tx.get("to") or None,  # none for a deployment
        "data": tx.get("input") or tx.get("data") or "0x",
        "gas": tx.get("gas"),
        "value": None if value in ("0x0", 0) else value,
    }
    return {k: v for k, v in call.items() if v is not None}


class ForkReplayer:
    """Replays a block's transactions on a local fork of `node_url` and traces them (callTracer):
    one anvil process (`proc`, at `url`), forked at one `block` at a time."""

    proc: subprocess.Popen[bytes] | None = None
    block: int | None = None

    def __init__(self, node_url: str, anvil: str | None = None, startup_timeout: float = 30.0, timeout: float = 60.0):
        self.node_url = node_url
        self.anvil = anvil
        self.startup_timeout = startup_timeout
        self.timeout = timeout
        self._lock = threading.Lock()
        self._traces: dict[str, JsonValue] = {}  # tx hash -> its call frame, replayed once
        self.forks_started = 0

    def __repr__(self) -> str:
        return "ForkReplayer()"

    def trace(
        self, block: int, txs: list[Mapping[str, object]], index: int, creates: Callable[[JsonValue], bool]
    ) -> JsonValue:
        """The callTracer frame of `txs[index]` (full transaction objects of `block`, in order):
        traced as a call on the state before the block; when that frame does not satisfy
        `creates`, and earlier transactions of the block may have changed the state it ran on,
        the block is replayed up to it. The frame is as the fork answered it: callers check its shape."""
        tx_hash = str(txs[index].get("hash", "")).lower()
        with self._lock:
            if tx_hash and tx_hash in self._traces:
                return self._traces[tx_hash]
            self._fork_at(max(block - 1, 0))
            frame = self.call("debug_traceCall", _call_of(txs[index]), "latest", {"tracer": "callTracer"})
            if index and not creates(frame):
                frame = self._replay(txs, index)
            if tx_hash:
                self._traces[tx_hash] = frame
            return frame

    def _replay(self, txs: list[Mapping[str, object]], index: int) -> JsonValue:
        snapshot = self.call("evm_snapshot")
        try:
            local: JsonValue = None
            for tx in txs[: index + 1]:
                self.call("anvil_impersonateAccount", tx.get("from"))
                call = _call_of(tx)
                call["nonce"] = tx.get("nonce")
                local = self.call("eth_sendTransaction", call)
            self.call("evm_mine")
            return self.call("debug_traceTransaction", local, {"tracer": "callTracer"})
        finally:
            self.call("evm_revert", snapshot)

    def _fork_at(self, block: int) -> None:
        """The process forked at `block`: the running one reset, else a new one started."""
        if self.proc is not None and self.proc.poll() is not None:
            self._stop()
        if self.proc is None:
            self._start()
        if self.block != block:
            try:
                self.call("anvil_reset", {"forking": {"jsonRpcUrl": self.node_url, "blockNumber": block}})
            except ForkUnavailable as err:
                # anvil's error may quote the URL: say what failed without it.
                detail = "" if self.node_url in str(err) else f" ({err})"
                raise ForkUnavailable(f"anvil could not fork the node at block {block}{detail}") from None
            self.block = block
            self.forks_started += 1

    def _start(self) -> None:
        anvil = self.anvil or find_anvil()
        if not anvil:
            raise ForkUnavailable(f"anvil was not found (install Foundry, or set {ANVIL_ENV})")
        with socket.socket() as sock:  # a free port
            sock.bind(("127.0.0.1", 0))
            port: int = sock.getsockname()[1]
        self.block, self.rpc = None, JsonRpcChain(f"http://127.0.0.1:{port}", self.timeout, fork=False)
        # The node URL goes by JSON-RPC (anvil_reset), not argv: hosted URLs carry the API key, and
        # anyone on the machine can read a process's arguments. No dev accounts: a fork reads each
        # one's state from the node at every reset (four reads each, ten accounts), and the replay
        # impersonates the real senders.
        try:
            proc = self.proc = subprocess.Popen(
                [anvil, "--host", "127.0.0.1", "--port", str(port), "--silent", "--no-mining", "--accounts", "0"],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
            )
        except OSError as err:
            raise ForkUnavailable(f"anvil could not run ({anvil}: {err.strerror or type(err).__name__})") from None
        self._reaper = weakref.finalize(self, _end, proc)
        deadline = time.monotonic() + self.startup_timeout
        while True:
            try:
                self.call("eth_chainId")
                return
            except ForkUnavailable:
                if proc.poll() is not None:
                    said = proc.stderr.read() if proc.stderr else b""
                    detail = said.decode(errors="replace").strip().splitlines()
                    self._stop()
                    raise ForkUnavailable("anvil did not start" + (f": {detail[-1][:200]}" if detail else ""))
                if time.monotonic() > deadline:
                    self._stop()
                    raise ForkUnavailable(f"anvil did not start within {self.startup_timeout:g} s")
                time.sleep(0.05)

    def call(self, method: str, *params: object) -> JsonValue:
        """One JSON-RPC call to the fork; ForkUnavailable when it fails."""
        try:
            return self.rpc.request(method, list(params))
        except ChainError as err:
            raise ForkUnavailable(str(err).replace(self.rpc.who, "the fork")) from None

    def _stop(self) -> None:
        if self.proc is not None:
            self.proc = None
            self._reaper()

    def close(self) -> None:
        with self._lock:
            self._stop()


class CreationFinder:
    """The search both readers share, and the reads it makes over JSON-RPC (`request`): a block's
    transactions, receipts, and create frames from the node's trace APIs (debug's callTracer, else
    parity's trace_block); a provider's rate limits waited out. Subclasses answer the
    primitive questions."""

    _chain_id: int | None = None
    _traces: str | None = None  # which trace API the node answered, once known ("" none)

    def __init__(self, max_scan_blocks: int = DEFAULT_SCAN_BLOCKS, fork: bool | ForkReplayer = True):
        """`fork`: True replays on a fork of the node (when its URL is known and it has no
        traces), False never, or a `ForkReplayer` to use."""
        self.max_scan_blocks = max_scan_blocks
        self._creations: dict[tuple[str, str], Creation] = {}
        self._creation_lock = threading.Lock()
        self._fork_setting = fork
        self._fork: ForkReplayer | None = None if isinstance(fork, bool) else fork
        self._tried: dict[str, list[str]] = {}  # address -> what the last search tried, in words

    @property
    def who(self) -> str:
        """The reader's source, as its errors name it (no secrets)."""
        raise NotImplementedError

    def request(self, method: str, params: list[object]) -> object:
        """One JSON-RPC request's result."""
        raise NotImplementedError

    def _retrying(self, attempt: Callable[[], T], label: str, gave_up: Callable[[Retry | None], Exception]) -> T:
        """`attempt()` again while it raises a rate limit's `Retry` (`node_retry`'s waits)."""
        return with_retries(
            attempt,
            policy=node_retry(RATE_LIMIT_RETRIES),
            label=label,
            sleep=time.sleep,
            quiet=True,
            gave_up=gave_up,
        )

    # primitives
    def _code_at(self, address: str, block: int) -> bytes | None:
        """Code at a past block, or None when the node keeps no historical state."""
        try:
            return self.get_code(address, block)
        except ChainError:
            return None

    def _frames_source(self) -> str:
        """Where `_block_create_frames` takes its frames: "trace", the node's trace APIs (refused:
        a replay on a fork may follow), or IN_PROCESS_SOURCE, a replay in the in-process chain (no
        fork: there is no node; a failed replay raises ChainError, which says why)."""
        return "trace"

    def _node_url(self) -> str | None:
        """The node's JSON-RPC URL, for a fork; None when there is none (an in-process chain)."""
        return None

    # JSON-RPC reads
    def chain_id(self) -> int:
        if self._chain_id is None:
            self._chain_id = quantity(self.request("eth_chainId", []))
        return self._chain_id

    def get_code(self, address: str, block: int | None = None) -> bytes:
        """The code at `address` now, or at a past `block`."""
        return _hex_bytes(self.request("eth_getCode", [address, "latest" if block is None else hex(block)]))

    def get_storage_at(self, address: str, slot: int) -> bytes:
        return _hex_bytes(self.request("eth_getStorageAt", [address, hex(slot), "latest"])).rjust(32, b"\0")

    def call(self, to: str, data: bytes) -> bytes:
        return _hex_bytes(self.request("eth_call", [{"to": to, "data": "0x" + bytes(data).hex()}, "latest"]))

    def _block_number(self) -> int:
        return quantity(self.request("eth_blockNumber", []))

    def get_transaction(self, tx_hash: str) -> TransactionFacts | None:
        try:
            return read_transaction(self.request, tx_hash)
        except (KeyError, TypeError, ValueError, AttributeError) as err:
            raise ChainError(
                f"{self.who} answered eth_getTransactionByHash with an unexpected body: {type(err).__name__}"
            ) from None

    def _block_deployments(self, block: int) -> Iterator[Deployment]:
        for tx in self._block_transactions(block):
            if not tx.get("to"):
                sender = str(tx.get("from", ""))
                data, created = (
                    _hex_bytes(tx.get("input") or tx.get("data")),
                    created_address(sender, quantity(tx["nonce"])),
                )
                yield to_hex(tx["hash"]), data, sender, created

    def _block_transactions(self, block: int) -> list[NodeObject]:
        block_object = node_object(self.request("eth_getBlockByNumber", [hex(block), True]))
        return [tx for tx in node_list(block_object.get("transactions")) if isinstance(tx, Mapping)]

    def _block_receipts(self, block: int) -> list[object] | None:
        receipts = self.request("eth_getBlockReceipts", [hex(block)])
        return list(receipts) if isinstance(receipts, list) else None

    def _block_create_frames(self, block: int) -> list[CreateFrame] | None:
        if self._traces == "":  # refused before: a hosted node does not change its mind mid-run
            return None
        refusals = 0
        for api in [self._traces] if self._traces else ["debug", "parity"]:
            try:
                frames = self._debug_frames(block) if api == "debug" else self._parity_frames(block)
            except ChainError as err:
                refusals += is_refused(err)
                continue
            self._traces = api
            return frames
        if refusals == 2:
            self._traces = ""
        return None

    def _debug_frames(self, block: int) -> list[CreateFrame]:
        results = node_list(self.request("debug_traceBlockByNumber", [hex(block), {"tracer": "callTracer"}]))
        frames: list[CreateFrame] = []
        tx_hashes: list[str] | None = None
        for index, item in enumerate(map(node_object, results)):
            call = node_object(item.get("result", item))
            tx_hash = as_text(item.get("txHash")) or ""
            if not tx_hash:  # older nodes omit it: take it from the block
                if tx_hashes is None:
                    tx_hashes = [to_hex(tx["hash"]) for tx in self._block_transactions(block)]
                tx_hash = tx_hashes[index] if index < len(tx_hashes) else ""
            frames += [(tx_hash, as_text(call.get("from")) or "", frame) for frame in walk_create_frames(call)]
        return frames

    def _parity_frames(self, block: int) -> list[CreateFrame]:
        frames: list[CreateFrame] = []
        for trace in map(node_object, node_list(self.request("trace_block", [hex(block)]))):
            if trace.get("type") != "create" or trace.get("error"):
                continue
            action, result = node_object(trace.get("action")), node_object(trace.get("result"))
            tx_hash = as_text(trace.get("transactionHash")) or ""
            # The transaction's sender: a top-level create's own, else the transaction's.
            sent = action if not trace.get("traceAddress") else self.request("eth_getTransactionByHash", [tx_hash])
            sender = as_text(node_object(sent).get("from"))
            frame = {
                "type": "CREATE",
                "from": action.get("from"),
                "to": result.get("address"),
                "input": action.get("init"),
            }
            frames.append((tx_hash, sender or "", frame))
        return frames

    def creation_attempts(self, address: str) -> list[str]:
        """What the last search for `address` tried without finding it, in words."""
        return list(self._tried.get(norm_address(address), []))

    def fork_replayer(self) -> ForkReplayer | None:
        """The fork replayer, made on first use; None when forking is off or there is no URL."""
        if self._fork is None and self._fork_setting is True and (url := self._node_url()):
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
        for tx_hash, data, sender, created in self._block_deployments(block):
            if norm_address(created) == target:
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
        except ChainError as err:  # ForkUnavailable among them
            tried.append(f"a replay on a local fork ({err})")
            return None
        tried.append(f"a replay on a local fork of block {block} (no transaction of it created the address)")
        return None

    @property
    def traced(self) -> bool:
        """Whether the node's trace APIs answered (`create_frames` then replays nothing)."""
        return bool(self._traces)

    def create_frames(self, block: int, tx_hashes: Iterable[str]) -> list[CreateFrame]:
        """(tx hash, tx sender, frame) of every CREATE/CREATE2 of the given transactions of `block`
        (each one's own deployment too): the node's traces of the block, or the in-process replay
        of it; for a node without traces, each transaction traced on a fork (`ForkReplayer`, which
        keeps the trace for a later creation search). A traced call is kept when it ran as the
        transaction did (no error; a deployment at the address its sender's nonce gives), else the
        block is replayed up to it. Raises ChainError (ForkUnavailable: why there is no fork, in words)."""
        wanted = {norm_address(h) for h in tx_hashes}
        frames = self._block_create_frames(block)
        if frames is not None:
            return [f for f in frames if norm_address(f[0]) in wanted]
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


class JsonRpcChain(CreationFinder):
    """A ChainReader over JSON-RPC (requests); one HTTP session per thread."""

    def __init__(
        self,
        url: str,
        timeout: float = 15.0,
        max_scan_blocks: int = DEFAULT_SCAN_BLOCKS,
        fork: bool | ForkReplayer = True,
    ):
        super().__init__(max_scan_blocks, fork)
        self.url = url
        self.timeout = timeout
        self._local = threading.local()
        self._ids = itertools.count(1)  # next() on a count is atomic: ids unique across threads

    def __repr__(self) -> str:
        return f"JsonRpcChain({self.safe_url!r})"

    @property
    def safe_url(self) -> str:
        """The URL without path, query or credentials: hosted RPC URLs often embed an API key."""
        from urllib.parse import urlsplit

        parts = urlsplit(self.url)
        host = parts.hostname or ""
        return f"{parts.scheme}://{host}" + (f":{parts.port}" if parts.port else "")

    @property
    def who(self) -> str:
        return f"the node at {self.safe_url}"

    def _session(self) -> requests.Session:
        """This thread's requests session."""
        session: requests.Session | None = getattr(self._local, "session", None)
        if session is None:
            import requests

            session = self._local.session = requests.Session()
        return session

    def request(self, method: str, params: list[object]) -> JsonValue:
        import requests

        session = self._session()
        request_id = next(self._ids)

        def attempt() -> JsonValue:
            try:
                response = session.post(
                    self.url,
                    json={"jsonrpc": "2.0", "id": request_id, "method": method, "params": params},
                    timeout=self.timeout,
                )
                limited = response.status_code == 429
                body: JsonValue = None if limited else response.json()
            except (requests.RequestException, ValueError) as err:
                detail = type(err).__name__ if self.safe_url != self.url.rstrip("/") else err
                failure = ChainError(f"the node at {self.safe_url} did not answer {method}: {detail}")
            else:
                if limited or is_rate_limited(body):
                    wait = node_retry().retry_after(response.headers.get("Retry-After"))
                    raise Retry(f"{method}: rate limited", delay=wait, rate_limited=True)
                return body
            raise failure  # outside the except: requests' message may hold the URL's key

        body = self._retrying(
            attempt,
            f"the node at {self.safe_url}",
            lambda last: ChainError(
                f"the node at {self.safe_url} kept answering {method} with its rate limit ({RATE_LIMIT_RETRIES} retries)"
            ),
        )
        if not isinstance(body, dict):
            raise ChainError(f"the node at {self.safe_url} answered {method} with an unexpected body")
        if error := body.get("error"):
            message = error.get("message") if isinstance(error, dict) else error
            text = f"the node at {self.safe_url} rejected {method}: {message}"
            if method == "eth_call" and "revert" in str(message).lower():
                raise CallReverted(text, revert_data(error))
            raise ChainError(text)
        return body.get("result")

    def code_and_slots(self, address: str, slots: tuple[int, ...]) -> tuple[bytes, list[bytes]]:
        """The code and storage words at `address` in one JSON-RPC batch (one round trip instead of
        one per read). A node that refuses batches, or any error in one, is read call by call."""
        import requests

        calls = [("eth_getCode", [address, "latest"])] + [
            ("eth_getStorageAt", [address, hex(s), "latest"]) for s in slots
        ]
        ids = [next(self._ids) for _ in calls]
        batch = [{"jsonrpc": "2.0", "id": i, "method": m, "params": p} for i, (m, p) in zip(ids, calls)]
        try:
            response = self._session().post(self.url, json=batch, timeout=self.timeout)
            answers: dict[object, JsonValue] = (
                {item.get("id"): item for item in response.json()} if response.status_code == 200 else {}
            )
        except (requests.RequestException, ValueError, TypeError, AttributeError):
            answers = {}
        results = [answers.get(i) for i in ids]
        read = [r["result"] for r in results if isinstance(r, dict) and "result" in r and not r.get("error")]
        if len(read) != len(results):
            return self.get_code(address), [self.get_storage_at(address, s) for s in slots]
        return _hex_bytes(read[0]), [_hex_bytes(r).rjust(32, b"\0") for r in read[1:]]

    def _node_url(self) -> str | None:
        return self.url


class ApeProviderChain(CreationFinder):
    """A ChainReader through an Ape provider (calls serialised: eth-tester is not thread-safe)."""

    def __init__(
        self, provider: ProviderAPI, max_scan_blocks: int = DEFAULT_SCAN_BLOCKS, fork: bool | ForkReplayer = True
    ):
        super().__init__(max_scan_blocks, fork)
        self.provider = provider
        self._lock = threading.RLock()

    def __repr__(self) -> str:
        return f"ApeProviderChain({type(self.provider).__name__})"

    who = "the Ape provider"

    def _guard(self, what: str, fn: Callable[[], T]) -> T:
        def attempt() -> T:
            with self._lock:
                try:
                    return fn()
                except ChainError:
                    raise
                except Exception as err:  # provider errors come in many types
                    if not rate_limit_text(err):
                        raise ChainError(f"the Ape provider could not {what}: {err}") from err
                    limited = Retry(f"{what}: rate limited ({err})", rate_limited=True, answer=err)
            raise limited  # the wait is outside the lock

        def gave_up(last: Retry | None) -> Exception:
            cause = last.answer if last is not None and isinstance(last.answer, BaseException) else None
            error = ChainError(f"the Ape provider could not {what}: {cause}")
            error.__cause__ = cause
            return error

        return self._retrying(attempt, "the Ape provider", gave_up)

    def _node_url(self) -> str | None:
        # The URL web3 is connected to: a provider's configured or default URI may be no node at all
        # (eth-tester's is a placeholder).
        try:
            web3 = provider_web3(self.provider)
        except Exception:  # not connected
            return None
        # getattr: only web3's HTTP providers have endpoint_uri (IPC, WebSocket and eth-tester's have not)
        url = getattr(web3.provider, "endpoint_uri", None) if web3 is not None else None
        return str(url) if isinstance(url, str) and url.startswith(("http://", "https://")) else None

    def request(self, method: str, params: list[object]) -> object:
        """A JSON-RPC request through the provider's web3 (its manager formats an in-process
        eth-tester's answers as a node's: hex text in, camelCase out), else the provider's own."""

        def ask() -> object:
            from web3.types import RPCEndpoint

            web3 = provider_web3(self.provider)
            if web3 is None:
                return self.provider.make_request(method, params)
            return web3.manager.request_blocking(RPCEndpoint(method), params)

        return self._guard(f"answer {method}", ask)

    def call(self, to: str, data: bytes) -> bytes:
        def send() -> bytes:
            from ape.exceptions import ContractLogicError

            ecosystem = self.provider.network.ecosystem
            txn = ecosystem.create_transaction(receiver=ape_address(to), data=bytes(data))
            try:
                return _hex_bytes(self.provider.send_call(txn))
            except ContractLogicError as err:  # a revert: Ape keeps custom errors' data as hex text
                message = str(err.revert_message or err)
                revert = message if message.startswith("0x") and len(message) % 2 == 0 else ""
                raise CallReverted(f"the call reverted: {message}", revert_data({"data": revert})) from None

        return self._guard("call a contract", send)

    def _frames_source(self) -> str:
        in_process = self._guard("reach its chain", lambda: tester_chain(self.provider)) is not None
        return IN_PROCESS_SOURCE if in_process else "trace"

    def _block_create_frames(self, block: int) -> list[CreateFrame] | None:
        # Ape's test provider (eth-tester) runs in this process: no traces, no node to fork, but
        # its chain can replay the block with py-evm. Providers backed by a real node (ape-foundry,
        # ape-node) pass JSON-RPC through to its trace APIs.
        if self._frames_source() != IN_PROCESS_SOURCE:
            return super()._block_create_frames(block)
        # in the in-process chain (eth-tester's py-evm), under the lock; its failure, ReplayFailed, is a ChainError
        return self._guard("replay a block", lambda: create_frames(tester_chain(self.provider), block))
