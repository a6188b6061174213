"""Read-only access to the chain the local explorer verifies against.

`ChainReader` is all the verifier and proxy detection need (and `get_transaction`, the explorer's
transaction page). `JsonRpcChain` talks JSON-RPC to any
node (anvil, for `ape verify serve --rpc URL`); `ApeProviderChain` reads through an Ape provider,
including the in-process `ethereum:local:test` one, which has no JSON-RPC endpoint.

Finding a creation transaction: a binary search on historical `eth_getCode` finds the block in
which the code appeared (log2(height) calls), then that block's transactions are checked for a
direct deployment, and its traces for a factory CREATE/CREATE2 frame. Nodes without historical
state fall back to a bounded backwards scan. Both implementations are safe to call from several
worker threads.
"""

from __future__ import annotations

import hashlib
import threading
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Optional, Protocol, runtime_checkable
from ape_contract_verify.exceptions import ContractVerifyError
from ape_contract_verify.protocol.values import checksum as _checksum, hex_to_bytes as _hex_bytes

DEFAULT_SCAN_BLOCKS = 5_000
# A node that prunes state keeps the last 128 blocks' (geth's default): the creation block is
# searched there when older blocks' code cannot be read.
RECENT_STATE_BLOCKS = 128
# Without historical code the block is not known: a fork replays only the most recent blocks.
FORK_SCAN_BLOCKS = 16
# Transactions of one block traced on a fork, at most (those whose logs name the address first).
FORK_MAX_TXS = 32
_TOO_OLD = -1


class ChainError(ContractVerifyError):
    """The node could not be read (unreachable, or it rejected a request)."""


class CallReverted(ChainError):
    """The node ran an eth_call and it reverted: an answer about the contract, not a fault of the
    node. `data` is the revert data (a custom error, `Error(string)` or `Panic(uint256)`), when given."""

    def __init__(self, message: str, data: bytes = b""):
        super().__init__(message)
        self.data = data


@dataclass(frozen=True)
class Creation:
    """How a contract came to be: the transaction, its creation input (init code + constructor
    arguments), who sent it, and whether a factory contract ran the CREATE/CREATE2."""

    tx_hash: str
    input: bytes = field(repr=False)
    deployer: str = ""
    factory: bool = False
    block: Optional[int] = None
    creator: Optional[str] = None  # the factory contract, when factory is True
    # Where the input came from: "transaction" (a to-less one), "trace" (the node's trace API),
    # "fork replay" (the transaction traced on a local fork); "" when the caller did not say.
    source: str = ""


@dataclass(frozen=True)
class LogEntry:
    """One log of a receipt: the emitter, its topics (0x hex) and data."""

    address: str
    topics: tuple[str, ...] = ()
    data: bytes = field(default=b"", repr=False)


@dataclass(frozen=True)
class TransactionFacts:
    """What a transaction page shows. Addresses and the hash are lowercase 0x hex; `block`,
    `status` and the gas figures are None while the transaction is pending."""

    hash: str
    sender: str
    to: Optional[str]  # None for a contract creation
    value: int  # wei
    input: bytes = field(repr=False)
    nonce: int
    block: Optional[int] = None
    timestamp: Optional[int] = None  # the block's, in seconds
    created: Optional[str] = None  # the receipt's contractAddress
    status: Optional[int] = None  # 1 success, 0 reverted
    gas_used: Optional[int] = None
    gas_price: Optional[int] = None  # the effective price paid, when the receipt says it
    gas_limit: Optional[int] = None
    logs: tuple[LogEntry, ...] = ()

    @property
    def fee(self) -> Optional[int]:
        """Wei paid for gas, when both figures are known."""
        return None if self.gas_used is None or self.gas_price is None else self.gas_used * self.gas_price


@runtime_checkable
class ChainReader(Protocol):
    def chain_id(self) -> int: ...

    def get_code(self, address: str) -> bytes: ...

    def get_storage_at(self, address: str, slot: int) -> bytes: ...

    def call(self, to: str, data: bytes) -> bytes: ...

    def find_creation(self, address: str) -> Optional[Creation]: ...

    def get_transaction(self, tx_hash: str) -> Optional[TransactionFacts]:
        """The transaction, or None when the node does not know the hash. (Readers written before
        it may lack it: the pages check with getattr.)"""
        ...


def _revert_data(error: Any) -> bytes:
    """The revert data of a JSON-RPC error: anvil and geth put it in `data` as hex."""
    data = error.get("data") if isinstance(error, dict) else None
    if isinstance(data, dict):  # some nodes nest it
        data = data.get("data")
    try:
        return _hex_bytes(data) if isinstance(data, str) else b""
    except ValueError:
        return b""


# A provider's rate limit: HTTP 429, or JSON-RPC -32005 (limit exceeded) / -32029 (too many requests).
RATE_LIMIT_CODES = (-32005, -32029, 429)
RATE_LIMIT_RETRIES = 8
RATE_LIMIT_MAX_WAIT = 8.0


def _rate_limited(body: Any) -> bool:
    error = body.get("error") if isinstance(body, dict) else None
    if not isinstance(error, dict):
        return False
    message = str(error.get("message", "")).lower()
    return error.get("code") in RATE_LIMIT_CODES or "rate limit" in message or "too many requests" in message


def rate_limit_text(err: BaseException) -> bool:
    """Whether an error raised by a provider (web3, Ape) is a rate limit, by its words."""
    text = str(err).lower()
    return any(word in text for word in ("429", "too many requests", "rate limit", "-32005", "-32029"))


def _refused(err: BaseException) -> bool:
    """Whether the node refused the method itself (JSON-RPC -32601, as hosted plans answer)."""
    text = str(err).lower()
    return any(word in text for word in ("does not exist", "not available", "method not found", "not supported", "-32601", "unsupported method"))


def _backoff(attempt: int, retry_after: Optional[str] = None) -> float:
    """Seconds before retry `attempt` (0-based): the server's Retry-After, else doubling from 0.25 s."""
    try:
        if retry_after is not None:
            return min(RATE_LIMIT_MAX_WAIT, max(0.0, float(retry_after)))
    except ValueError:
        pass
    return min(RATE_LIMIT_MAX_WAIT, 0.25 * (2**attempt))


def _hex_hash(value: Any) -> str:
    return "0x" + _hex_bytes(value).hex()


def _number(value: Any) -> Optional[int]:
    """A JSON-RPC quantity (0x hex text) or web3's int, as an int."""
    if value is None or value == "":
        return None
    if isinstance(value, int):
        return int(value)
    text = str(value).strip()
    return int(text, 16) if text[:2].lower() == "0x" else int(text)


def _address(value: Any) -> Optional[str]:
    if not value:
        return None
    text = "0x" + _hex_bytes(value).hex() if isinstance(value, (bytes, bytearray)) else str(value)
    return text.lower()


def transaction_facts(tx: Any, receipt: Any, timestamp: Any = None) -> TransactionFacts:
    """TransactionFacts from a node's transaction and receipt, as JSON-RPC (hex text) or web3
    (ints, HexBytes) gives them; `timestamp` is the block's when the caller read it."""
    receipt = receipt or {}
    logs = tuple(
        LogEntry(_address(log.get("address")) or "", tuple(_hex_hash(t) for t in log.get("topics") or []), _hex_bytes(log.get("data")))
        for log in receipt.get("logs") or []
    )
    created = _address(receipt.get("contractAddress"))
    to = _address(tx.get("to"))
    if created and to == "0x" + "00" * 20:  # some tools spell a creation's `to` as the zero address
        to = None
    price = receipt.get("effectiveGasPrice")
    stamp = timestamp if timestamp is not None else tx.get("blockTimestamp", receipt.get("blockTimestamp"))
    return TransactionFacts(
        hash=_hex_hash(tx["hash"]),
        sender=_address(tx.get("from")) or "",
        to=to,
        value=_number(tx.get("value")) or 0,
        input=_hex_bytes(tx.get("input", tx.get("data"))),  # eth-tester says "data"
        nonce=_number(tx.get("nonce")) or 0,
        block=_number(tx.get("blockNumber")),
        timestamp=_number(stamp),
        created=created,
        status=_number(receipt.get("status")),
        gas_used=_number(receipt.get("gasUsed")),
        gas_price=_number(price if price is not None else tx.get("gasPrice")),
        gas_limit=_number(tx.get("gas")),
        logs=logs,
    )


def _read_transaction(request: Callable[[str, list], Any], tx_hash: str) -> Optional[TransactionFacts]:
    """A transaction over JSON-RPC: the transaction, its receipt once mined, and the block's
    timestamp when neither carries it (anvil puts `blockTimestamp` in both)."""
    tx = request("eth_getTransactionByHash", [tx_hash])
    if not tx:
        return None
    receipt, timestamp = None, None
    if tx.get("blockNumber") is not None:
        receipt = request("eth_getTransactionReceipt", [tx_hash])
        if tx.get("blockTimestamp") is None and (receipt or {}).get("blockTimestamp") is None:
            if tx.get("blockHash"):
                block = request("eth_getBlockByHash", [tx["blockHash"], False])
            else:
                block = request("eth_getBlockByNumber", [tx["blockNumber"], False])
            timestamp = (block or {}).get("timestamp")
    return transaction_facts(tx, receipt, timestamp)


def _created_address(sender: str, nonce: int) -> str:
    """Where a to-less transaction from `sender` with `nonce` puts its contract (CREATE's rule)."""
    import rlp
    from eth_utils import keccak

    return "0x" + keccak(rlp.encode([_hex_bytes(sender), nonce]))[12:].hex()


def _norm(address: Optional[str]) -> str:
    return (address or "").lower()


def _walk_create_frames(frame: dict) -> Iterable[dict]:
    """CREATE/CREATE2 frames of a callTracer tree, depth first (failed subtrees skipped)."""
    if not isinstance(frame, dict):
        return
    if str(frame.get("type", "")).upper() in ("CREATE", "CREATE2") and "error" not in frame:
        yield frame
    if "error" in frame:
        return
    for sub in frame.get("calls") or []:
        yield from _walk_create_frames(sub)


class _CreationFinder:
    """The search shared by both readers; subclasses answer the primitive questions."""

    def __init__(self, max_scan_blocks: int = DEFAULT_SCAN_BLOCKS, fork: Any = True):
        """`fork`: True replays on a fork of the node (when its URL is known and it has no
        traces), False never, or a `fork.ForkReplayer` to use."""
        self.max_scan_blocks = max_scan_blocks
        self._creations: dict[tuple[str, str], Creation] = {}
        self._creation_lock = threading.Lock()
        self._fork_setting = fork
        self._fork: Any = None
        self._tried: dict[str, list[str]] = {}  # address -> what the last search tried, in words

    # primitives
    def _block_number(self) -> int:
        raise NotImplementedError

    def _code_at(self, address: str, block: int) -> Optional[bytes]:
        """Code at a past block, or None when the node keeps no historical state."""
        raise NotImplementedError

    def _block_deployments(self, block: int) -> Iterable[tuple[str, bytes, str, Callable[[], Optional[str]]]]:
        """(tx hash, input, sender, lazy receipt contract address) for each to-less transaction."""
        raise NotImplementedError

    def _block_create_frames(self, block: int) -> Optional[list[tuple[str, str, dict]]]:
        """(tx hash, tx sender, frame) of each CREATE/CREATE2 frame in the block; None without traces."""
        raise NotImplementedError

    def get_code(self, address: str) -> bytes:
        raise NotImplementedError

    def _node_url(self) -> Optional[str]:
        """The node's JSON-RPC URL, for a fork; None when there is none (an in-process chain)."""
        return None

    def _block_transactions(self, block: int) -> list[dict]:
        """The block's transactions as JSON-RPC objects (hex quantities), in order."""
        raise NotImplementedError

    def _block_receipts(self, block: int) -> Optional[list[dict]]:
        """The block's receipts in one call (eth_getBlockReceipts), or None."""
        return None

    def creation_attempts(self, address: str) -> list[str]:
        """What the last search for `address` tried without finding it, in words."""
        return list(self._tried.get(_norm(address), []))

    def fork_replayer(self) -> Any:
        """The fork replayer, made on first use; None when forking is off or there is no URL."""
        if self._fork is None and self._fork_setting:
            if self._fork_setting is True:
                url = self._node_url()
                if url:
                    from ape_contract_verify.evm.fork import ForkReplayer

                    self._fork = ForkReplayer(url)
            else:
                self._fork = self._fork_setting
        return self._fork

    def close(self) -> None:
        """Stop the fork, if one runs."""
        if self._fork is not None:
            self._fork.close()

    # search
    def find_creation(self, address: str) -> Optional[Creation]:
        key = _norm(address)
        code = self.get_code(address)
        if not code:
            return None
        # Keyed by the code too: a restarted dev chain can hold other code at the same address.
        key = (key, hashlib.sha256(code).hexdigest())
        with self._creation_lock:
            if key in self._creations:
                return self._creations[key]
        tried = self._tried[_norm(address)] = []
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
        blocks = [block] if block is not None else range(latest, lowest - 1, -1)
        for number in blocks:
            creation = self._creation_in_block(address, number, fork=block is not None or number > latest - FORK_SCAN_BLOCKS)
            if creation:
                with self._creation_lock:
                    self._creations[key] = creation
                return creation
        tried[:] = list(dict.fromkeys(tried))  # a scan tries each source once per block: say it once
        return None

    def _creation_block(self, address: str, lo: int, hi: int) -> Optional[int]:
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

    def _creation_in_block(self, address: str, block: int, fork: bool = True) -> Optional[Creation]:
        target = _norm(address)
        for tx_hash, data, sender, contract_address in self._block_deployments(block):
            if _norm(contract_address()) == target:
                return Creation(tx_hash, data, sender, factory=False, block=block, source="transaction")
        frames = self._block_create_frames(block)
        source = "trace"
        if frames is None:
            self._tried.setdefault(target, []).append("the node's trace APIs (refused)")
            frames = self._fork_frames(target, block) if fork else None
            source = "fork replay"
        for tx_hash, sender, frame in frames or []:
            if _norm(frame.get("to")) == target:
                return Creation(
                    tx_hash,
                    _hex_bytes(frame.get("input")),
                    sender,
                    factory=_norm(frame.get("from")) != _norm(sender),
                    block=block,
                    creator=frame.get("from"),
                    source=source,
                )
        return None

    def _fork_frames(self, target: str, block: int) -> Optional[list[tuple[str, str, dict]]]:
        """The block's transactions replayed on a local fork, until one creates `target`."""
        from ape_contract_verify.evm.fork import ForkUnavailable

        tried = self._tried.setdefault(target, [])
        replayer = self.fork_replayer()
        if replayer is None:
            tried.append("a replay on a local fork (off)" if not self._fork_setting else "a replay on a local fork (no node URL to fork)")
            return None
        try:
            txs = [tx for tx in self._block_transactions(block) if isinstance(tx, dict)]
            order = self._candidates(target, block, txs)
            for index in order[:FORK_MAX_TXS]:
                frame = replayer.trace(block, txs, index, lambda f: any(_norm(c.get("to")) == target for c in _walk_create_frames(f)))
                found = [(str(txs[index]["hash"]), str(txs[index].get("from", "")), c) for c in _walk_create_frames(frame)]
                if any(_norm(c.get("to")) == target for _, _, c in found):
                    return found
        except (ForkUnavailable, ChainError) as err:
            tried.append(f"a replay on a local fork ({err})")
            return None
        tried.append(f"a replay on a local fork of block {block} (no transaction of it created the address)")
        return None

    def _candidates(self, target: str, block: int, txs: list[dict]) -> list[int]:
        """Indexes of the block's transactions worth replaying, those whose logs name the address first."""
        bare = target.removeprefix("0x")
        named: set[int] = set()
        try:
            receipts = self._block_receipts(block) or []
        except ChainError:
            receipts = []
        for index, receipt in enumerate(receipts):
            for log in (receipt or {}).get("logs") or []:
                text = " ".join([str(log.get("address", "")), *map(str, log.get("topics") or []), str(log.get("data", ""))]).lower()
                if bare in text:
                    named.add(index)
        return sorted(range(len(txs)), key=lambda i: (i not in named, i))


class JsonRpcChain(_CreationFinder):
    """A ChainReader over JSON-RPC (requests); one HTTP session per thread."""

    def __init__(self, url: str, timeout: float = 15.0, max_scan_blocks: int = DEFAULT_SCAN_BLOCKS, fork: Any = True):
        super().__init__(max_scan_blocks, fork)
        self.url = url
        self.timeout = timeout
        self._local = threading.local()
        self._ids = iter(range(1, 1 << 62))
        self._id_lock = threading.Lock()
        self._chain_id: Optional[int] = None
        self._traces: Optional[str] = None  # which trace API the node answered, once known ("" none)
        self.rate_limited = 0  # answers that were the provider's rate limit, waited out

    def __repr__(self) -> str:
        return f"JsonRpcChain({self.safe_url!r})"

    @property
    def safe_url(self) -> str:
        """The URL without path, query or credentials: hosted RPC URLs often embed an API key."""
        from urllib.parse import urlsplit

        parts = urlsplit(self.url)
        host = parts.hostname or ""
        return f"{parts.scheme}://{host}" + (f":{parts.port}" if parts.port else "")

    def request(self, method: str, params: list) -> Any:
        import requests

        session = getattr(self._local, "session", None)
        if session is None:
            session = self._local.session = requests.Session()
        with self._id_lock:
            request_id = next(self._ids)
        for attempt in range(RATE_LIMIT_RETRIES + 1):
            try:
                response = session.post(
                    self.url, json={"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}, timeout=self.timeout
                )
                limited = response.status_code == 429
                body = None if limited else response.json()
            except (requests.RequestException, ValueError) as err:
                detail = type(err).__name__ if self.safe_url != self.url.rstrip("/") else err
                raise ChainError(f"the node at {self.safe_url} did not answer {method}: {detail}") from None
            limited = limited or _rate_limited(body)
            if not limited:
                break
            if attempt == RATE_LIMIT_RETRIES:
                raise ChainError(f"the node at {self.safe_url} kept answering {method} with its rate limit ({RATE_LIMIT_RETRIES} retries)")
            self.rate_limited += 1
            time.sleep(_backoff(attempt, response.headers.get("Retry-After")))
        if not isinstance(body, dict):
            raise ChainError(f"the node at {self.safe_url} answered {method} with an unexpected body")
        if body.get("error"):
            error = body["error"]
            message = error.get("message") if isinstance(error, dict) else error
            text = f"the node at {self.safe_url} rejected {method}: {message}"
            if method == "eth_call" and "revert" in str(message).lower():
                raise CallReverted(text, _revert_data(error))
            raise ChainError(text)
        return body.get("result")

    def chain_id(self) -> int:
        if self._chain_id is None:
            self._chain_id = int(self.request("eth_chainId", []), 16)
        return self._chain_id

    def get_code(self, address: str) -> bytes:
        return _hex_bytes(self.request("eth_getCode", [address, "latest"]))

    def get_storage_at(self, address: str, slot: int) -> bytes:
        return _hex_bytes(self.request("eth_getStorageAt", [address, hex(slot), "latest"])).rjust(32, b"\0")

    def call(self, to: str, data: bytes) -> bytes:
        return _hex_bytes(self.request("eth_call", [{"to": to, "data": "0x" + bytes(data).hex()}, "latest"]))

    def get_transaction(self, tx_hash: str) -> Optional[TransactionFacts]:
        try:
            return _read_transaction(self.request, tx_hash)
        except (KeyError, TypeError, ValueError, AttributeError) as err:
            raise ChainError(
                f"the node at {self.safe_url} answered eth_getTransactionByHash with an unexpected body: {type(err).__name__}"
            ) from None

    def _block_number(self) -> int:
        return int(self.request("eth_blockNumber", []), 16)

    def _node_url(self) -> Optional[str]:
        return self.url

    def _block_transactions(self, block: int) -> list[dict]:
        return list((self.request("eth_getBlockByNumber", [hex(block), True]) or {}).get("transactions") or [])

    def _block_receipts(self, block: int) -> Optional[list[dict]]:
        return self.request("eth_getBlockReceipts", [hex(block)])

    def _code_at(self, address: str, block: int) -> Optional[bytes]:
        try:
            return _hex_bytes(self.request("eth_getCode", [address, hex(block)]))
        except ChainError:
            return None

    def _block_deployments(self, block: int):
        data = self.request("eth_getBlockByNumber", [hex(block), True]) or {}
        for tx in data.get("transactions") or []:
            if isinstance(tx, dict) and not tx.get("to"):
                tx_hash = tx["hash"]
                yield tx_hash, _hex_bytes(tx.get("input") or tx.get("data")), tx.get("from", ""), (
                    lambda h=tx_hash: (self.request("eth_getTransactionReceipt", [h]) or {}).get("contractAddress")
                )

    def _block_create_frames(self, block: int) -> Optional[list[tuple[str, str, dict]]]:
        if self._traces == "":  # refused before: a hosted node does not change its mind mid-run
            return None
        refusals = 0
        for api in ([self._traces] if self._traces else ["debug", "parity"]):
            try:
                frames = self._debug_frames(block) if api == "debug" else self._parity_frames(block)
            except ChainError as err:
                refusals += _refused(err)
                continue
            self._traces = api
            return frames
        if refusals == 2:
            self._traces = ""
        return None

    def _debug_frames(self, block: int) -> list[tuple[str, str, dict]]:
        results = self.request("debug_traceBlockByNumber", [hex(block), {"tracer": "callTracer"}]) or []
        frames = []
        tx_hashes: Optional[list[str]] = None
        for index, item in enumerate(results):
            call = item.get("result", item) if isinstance(item, dict) else {}
            tx_hash = item.get("txHash") if isinstance(item, dict) else None
            if not tx_hash:  # older nodes omit it: take it from the block
                if tx_hashes is None:
                    tx_hashes = [
                        t if isinstance(t, str) else t["hash"]
                        for t in (self.request("eth_getBlockByNumber", [hex(block), False]) or {}).get("transactions", [])
                    ]
                tx_hash = tx_hashes[index] if index < len(tx_hashes) else ""
            for frame in _walk_create_frames(call):
                frames.append((tx_hash, call.get("from", ""), frame))
        return frames

    def _parity_frames(self, block: int) -> list[tuple[str, str, dict]]:
        traces = self.request("trace_block", [hex(block)]) or []
        senders: dict[str, str] = {}
        frames = []
        for trace in traces:
            if trace.get("type") != "create" or trace.get("error"):
                continue
            action, result = trace.get("action") or {}, trace.get("result") or {}
            tx_hash = trace.get("transactionHash", "")
            if not trace.get("traceAddress"):
                senders[tx_hash] = action.get("from", "")
            sender = senders.get(tx_hash) or (self.request("eth_getTransactionByHash", [tx_hash]) or {}).get("from", "")
            frame = {"type": "CREATE", "from": action.get("from"), "to": result.get("address"), "input": action.get("init")}
            frames.append((tx_hash, sender, frame))
        return frames


class ApeProviderChain(_CreationFinder):
    """A ChainReader through an Ape provider (calls serialised: eth-tester is not thread-safe)."""

    def __init__(self, provider: Any, max_scan_blocks: int = DEFAULT_SCAN_BLOCKS, fork: Any = True):
        super().__init__(max_scan_blocks, fork)
        self.provider = provider
        self._lock = threading.RLock()
        self.rate_limited = 0
        self._traces_refused = False

    def __repr__(self) -> str:
        return f"ApeProviderChain({type(self.provider).__name__})"

    def _guard(self, what: str, fn: Callable[[], Any]) -> Any:
        for attempt in range(RATE_LIMIT_RETRIES + 1):
            with self._lock:
                try:
                    return fn()
                except ChainError:
                    raise
                except Exception as err:  # provider errors come in many types
                    if not rate_limit_text(err) or attempt == RATE_LIMIT_RETRIES:
                        raise ChainError(f"the Ape provider could not {what}: {err}") from err
                    self.rate_limited += 1
            time.sleep(_backoff(attempt))  # a provider's rate limit: wait, outside the lock
        raise AssertionError("unreachable")

    def _node_url(self) -> Optional[str]:
        # The URL web3 is connected to: a provider's configured or default URI may be no node at all
        # (eth-tester's is a placeholder).
        try:
            url = getattr(getattr(self.provider.web3, "provider", None), "endpoint_uri", None)
        except Exception:  # not connected
            return None
        return str(url) if isinstance(url, str) and url.startswith(("http://", "https://")) else None

    def _rpc(self, what: str, method: str, params: list) -> Any:
        return self._guard(what, lambda: self.provider.make_request(method, params))

    def _block_transactions(self, block: int) -> list[dict]:
        return list((self._rpc("read a block", "eth_getBlockByNumber", [hex(block), True]) or {}).get("transactions") or [])

    def _block_receipts(self, block: int) -> Optional[list[dict]]:
        return self._rpc("read a block's receipts", "eth_getBlockReceipts", [hex(block)])

    def chain_id(self) -> int:
        return int(self._guard("read the chain id", lambda: self.provider.chain_id))

    def get_code(self, address: str) -> bytes:
        return _hex_bytes(self._guard("read code", lambda: self.provider.get_code(_checksum(address))))

    def get_storage_at(self, address: str, slot: int) -> bytes:
        def read():
            getter = getattr(self.provider, "get_storage", None) or self.provider.get_storage_at
            return getter(_checksum(address), slot)

        return _hex_bytes(self._guard("read storage", read)).rjust(32, b"\0")

    def call(self, to: str, data: bytes) -> bytes:
        def send():
            from ape.exceptions import ContractLogicError

            ecosystem = self.provider.network.ecosystem
            txn = ecosystem.create_transaction(receiver=_checksum(to), data=bytes(data))
            try:
                return self.provider.send_call(txn)
            except ContractLogicError as err:  # a revert: Ape keeps custom errors' data as hex text
                message = str(getattr(err, "revert_message", "") or err)
                revert = message if message.startswith("0x") and len(message) % 2 == 0 else ""
                raise CallReverted(f"the call reverted: {message}", _revert_data({"data": revert})) from None

        return _hex_bytes(self._guard("call a contract", send))

    def get_transaction(self, tx_hash: str) -> Optional[TransactionFacts]:
        web3 = self._guard("reach its node", lambda: getattr(self.provider, "web3", None))
        if web3 is None:  # a provider without web3: its JSON-RPC passthrough
            return self._guard("read a transaction", lambda: _read_transaction(self.provider.make_request, tx_hash))

        def read() -> Optional[TransactionFacts]:
            # web3, not provider.get_receipt: Ape's waits out its acceptance timeout for an unknown hash.
            from web3.exceptions import TransactionNotFound

            try:
                tx = web3.eth.get_transaction(tx_hash)
            except TransactionNotFound:
                return None
            receipt, timestamp = None, None
            if tx.get("blockNumber") is not None:
                try:
                    receipt = web3.eth.get_transaction_receipt(tx_hash)
                except TransactionNotFound:  # mined, but the node has not indexed its receipt yet
                    receipt = None
                if tx.get("blockTimestamp") is None and (receipt or {}).get("blockTimestamp") is None:
                    timestamp = web3.eth.get_block(tx["blockNumber"]).get("timestamp")
            return transaction_facts(tx, receipt, timestamp)

        return self._guard("read a transaction", read)

    def _block_number(self) -> int:
        return int(self._guard("read the block number", lambda: self.provider.get_block("latest").number))

    def _code_at(self, address: str, block: int) -> Optional[bytes]:
        try:
            return _hex_bytes(self._guard("read old code", lambda: self.provider.get_code(_checksum(address), block_id=block)))
        except ChainError:
            return None

    def _block_deployments(self, block: int):
        web3 = getattr(self.provider, "web3", None)
        if web3 is not None:
            # The raw block carries hashes, senders and nonces: Ape's transaction objects would
            # recompute each hash by re-signing, and its receipts cost a query per transaction.
            raw = self._guard("read a block", lambda: web3.eth.get_block(block, full_transactions=True))
            for txn in raw.get("transactions") or []:
                if txn.get("to"):
                    continue
                sender, nonce = str(txn["from"]), int(txn["nonce"])
                data = txn.get("input", txn.get("data"))  # eth-tester says "data"
                yield _hex_hash(txn["hash"]), _hex_bytes(data), sender, (
                    lambda s=sender, n=nonce: _created_address(s, n)
                )
            return
        txns = self._guard("read a block", lambda: list(self.provider.get_transactions_by_block(block)))
        zero = "0x" + "00" * 20
        for txn in txns:
            receiver = _norm(getattr(txn, "receiver", None))
            if receiver and receiver != zero:
                continue
            raw_hash = txn.txn_hash
            tx_hash = raw_hash if isinstance(raw_hash, str) else "0x" + bytes(raw_hash).hex()
            tx_hash = tx_hash if tx_hash.startswith("0x") else "0x" + tx_hash
            yield tx_hash, _hex_bytes(txn.data), str(getattr(txn, "sender", "") or ""), (
                lambda h=tx_hash: self._guard("read a receipt", lambda: self.provider.get_receipt(h).contract_address)
            )

    def _block_create_frames(self, block: int) -> Optional[list[tuple[str, str, dict]]]:
        # Providers backed by a real node (ape-foundry, ape-node) pass JSON-RPC through.
        if self._traces_refused:  # a hosted node does not change its mind mid-run
            return None
        try:
            results = self._guard(
                "trace a block",
                lambda: self.provider.make_request("debug_traceBlockByNumber", [hex(block), {"tracer": "callTracer"}]),
            )
        except ChainError as err:
            self._traces_refused = _refused(err)
            return None
        frames = []
        for item in results or []:
            call = item.get("result", item) if isinstance(item, dict) else {}
            for frame in _walk_create_frames(call):
                frames.append((item.get("txHash", ""), call.get("from", ""), frame))
        return frames
