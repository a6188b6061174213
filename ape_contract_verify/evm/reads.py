"""What a chain read is: its errors, facts and protocol, shared by every reader, and the wrappers of a reader.

The errors, the facts a read returns (`Creation`, `TransactionFacts`), the `ChainReader`
protocol, and how a node's answer is read (JSON-RPC's hex text or web3's ints and HexBytes).

Wrapping a ChainReader: `MemoizingChain` remembers every read: `ape run`'s deploy hook warms it on
the script's thread, so verification workers are served from memory and never touch a provider
that is busy with the script. `SerializedChain` lets one call at a time through: Ape providers
and requests sessions are not promised to be thread-safe, and the local explorer's handlers and
workers share one reader.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, TypeVar, runtime_checkable

from ape_contract_verify.evm.bytecode import to_hex as hex_hash
from ape_contract_verify.exceptions import ContractVerifyError
from ape_contract_verify.protocol.values import hex_to_bytes as _hex_bytes

if TYPE_CHECKING:
    from ape.api import ProviderAPI
    from ape.types import AddressType
    from web3 import Web3

V = TypeVar("V")


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
    block: int | None = None
    creator: str | None = None  # the factory contract, when factory is True
    # Where the input came from: "transaction" (a to-less one), "trace" (the node's trace API),
    # "fork replay" (the transaction traced on a local fork), "in-process replay" (the block replayed
    # in an in-process chain, `evm/tester_replay.py`); "" when the caller did not say.
    source: str = ""


@dataclass(frozen=True)
class CreationRecord:
    """The creation input (init code + constructor arguments) a target recorded, or why not."""

    input: bytes | None = field(default=None, repr=False)
    tx_hash: str | None = None
    factory: bool = False
    source: str = ""  # e.g. "etherscan's creation record", for the summary and -v
    note: str = ""  # when `input` is None: what was asked, and its answer, in words


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
    to: str | None  # None for a contract creation
    value: int  # wei
    input: bytes = field(repr=False)
    nonce: int
    block: int | None = None
    timestamp: int | None = None  # the block's, in seconds
    created: str | None = None  # the receipt's contractAddress
    status: int | None = None  # 1 success, 0 reverted
    gas_used: int | None = None
    gas_price: int | None = None  # the effective price paid, when the receipt says it
    gas_limit: int | None = None
    logs: tuple[LogEntry, ...] = ()

    @property
    def fee(self) -> int | None:
        """Wei paid for gas, when both figures are known."""
        return None if self.gas_used is None or self.gas_price is None else self.gas_used * self.gas_price


@runtime_checkable
class ChainReader(Protocol):
    def chain_id(self) -> int: ...

    def get_code(self, address: str) -> bytes: ...

    def get_storage_at(self, address: str, slot: int) -> bytes: ...

    def call(self, to: str, data: bytes) -> bytes: ...

    def find_creation(self, address: str) -> Creation | None: ...

    def get_transaction(self, tx_hash: str) -> TransactionFacts | None:
        """The transaction, or None when the node does not know the hash. (Readers written before
        it may lack it: the pages check with getattr.)"""
        ...


class SearchingReader(ChainReader, Protocol):
    """A ChainReader that searches creations (`evm/chain.CreationFinder`): what it tried, and
    a fork to stop."""

    def creation_attempts(self, address: str) -> list[str]: ...

    def close(self) -> None: ...


# A node's answer, read by key: a JSON-RPC object (hex text) or web3's AttributeDict (ints, HexBytes).
NodeObject = Mapping[str, object]


# (tx hash, tx sender, frame) of one CREATE/CREATE2: the frame in callTracer's shape (type, from,
# to, input), from a node's trace, a fork's or an in-process replay.
CreateFrame = tuple[str, str, NodeObject]


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


def creation_input(chain: ChainReader, address: str) -> bytes | None:
    """The input of the transaction that created `address`, or None where the node can't tell
    (identifying by code goes on without it)."""
    try:
        creation = chain.find_creation(address)
    except Exception:
        return None
    return bytes(creation.input) if creation is not None and creation.input else None


def attempts_of(reader: ChainReader, address: str) -> list[str]:
    """What the reader's last creation search tried, in words; [] from a reader that does not say."""
    # getattr: `creation_attempts` is evm.chain.CreationFinder's, not ChainReader's (a reader
    # written to the protocol alone lacks it).
    attempts = getattr(reader, "creation_attempts", None)
    return list(attempts(address)) if callable(attempts) else []


def node_object(value: object) -> NodeObject:
    """`value` when it is an object (a dict, web3's AttributeDict); {} for null or anything else."""
    return value if isinstance(value, Mapping) else {}


def node_list(value: object) -> list[object]:
    """`value` when it is a list (JSON's, or web3's tuple); [] for null or anything else."""
    return list(value) if isinstance(value, (list, tuple)) else []


def provider_web3(provider: ProviderAPI) -> Web3 | None:
    """The web3 behind an Ape provider, or None. Raises what the provider raises when it is not
    connected."""
    # getattr: only Ape's Web3Provider subclasses (test, node, foundry) have `web3`; ProviderAPI has not
    web3: Web3 | None = getattr(provider, "web3", None)
    return web3


def ape_address(address: str) -> AddressType:
    """EIP-55 form, typed as the address Ape's providers take (`protocol.values.checksum`'s rule)."""
    from eth_utils.address import to_checksum_address

    return to_checksum_address(address)


def quantity(value: object) -> int:
    """A JSON-RPC quantity (0x hex text, or decimal) or web3's int, as an int."""
    if isinstance(value, int):
        return int(value)
    if not isinstance(value, str):
        raise TypeError(f"a hex quantity was expected, not {type(value).__name__}")
    return int(value.strip(), 16) if value.strip()[:2].lower() == "0x" else int(value)


def _number(value: object) -> int | None:
    return None if value is None or value == "" else quantity(value)


def _address(value: object) -> str | None:
    if not value:
        return None
    text = "0x" + _hex_bytes(value).hex() if isinstance(value, (bytes, bytearray)) else str(value)
    return text.lower()


def transaction_facts(tx: NodeObject, receipt: NodeObject | None, timestamp: object = None) -> TransactionFacts:
    """TransactionFacts from a node's transaction and receipt, as JSON-RPC (hex text) or web3
    (ints, HexBytes) gives them; `timestamp` is the block's when the caller read it."""
    receipt = receipt or {}
    logs = tuple(
        LogEntry(
            _address(log.get("address")) or "",
            tuple(hex_hash(t) for t in _sequence(log.get("topics"))),
            _hex_bytes(log.get("data")),
        )
        for log in (_object(item, "a log") for item in _sequence(receipt.get("logs")))
    )
    created = _address(receipt.get("contractAddress"))
    to = _address(tx.get("to"))
    if created and to == "0x" + "00" * 20:  # some tools spell a creation's `to` as the zero address
        to = None
    price = receipt.get("effectiveGasPrice")
    stamp = timestamp if timestamp is not None else tx.get("blockTimestamp", receipt.get("blockTimestamp"))
    return TransactionFacts(
        hash=hex_hash(tx["hash"]),
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


def _sequence(value: object) -> Sequence[object]:
    """A list in a node's answer (null: empty); anything else is an unexpected body."""
    if not value:
        return ()
    if not isinstance(value, Sequence) or isinstance(value, (str, bytes)):
        raise TypeError(f"a list was expected, not {type(value).__name__}")
    return value


def _object(value: object, what: str = "an object") -> NodeObject:
    """An object in a node's answer; anything else is an unexpected body."""
    if not isinstance(value, Mapping):
        raise TypeError(f"{what} was expected, not {type(value).__name__}")
    return value


def _answer(value: object) -> NodeObject | None:
    """An object answer (null or empty: None); anything else is an unexpected body."""
    return _object(value) if value else None


def read_transaction(request: Callable[[str, list[object]], object], tx_hash: str) -> TransactionFacts | None:
    """A transaction over JSON-RPC (`request(method, params)` gives a result): the transaction,
    its receipt once mined, and the block's timestamp when neither carries it (anvil puts
    `blockTimestamp` in both)."""
    tx = _answer(request("eth_getTransactionByHash", [tx_hash]))
    if tx is None:
        return None
    receipt, timestamp = None, None
    if tx.get("blockNumber") is not None:
        receipt = _answer(request("eth_getTransactionReceipt", [tx_hash]))
        if tx.get("blockTimestamp") is None and (receipt or {}).get("blockTimestamp") is None:
            if tx.get("blockHash"):
                block = _answer(request("eth_getBlockByHash", [tx["blockHash"], False]))
            else:
                block = _answer(request("eth_getBlockByNumber", [tx["blockNumber"], False]))
            timestamp = (block or {}).get("timestamp")
    return transaction_facts(tx, receipt, timestamp)


# --- wrapping a reader ----------------------------------------------------------------------------


class MemoizingChain:
    """A ChainReader that memoises every read; a miss goes to `base` under one lock. A base
    written before `get_transaction`, or one that does not search, is still served (the
    AttributeError cases below)."""

    def __init__(self, base: ChainReader):
        self.base = base
        self._lock = threading.Lock()
        # (the read, its arguments) -> the answer: "code", "slot", "call", "creation", "transaction"
        self._memo: dict[tuple[object, ...], Any] = {}

    def __repr__(self) -> str:
        return f"MemoizingChain({self.base!r})"

    def _read(self, key: tuple[object, ...], fn: Callable[[], V], keep: Callable[[V], bool] = lambda _: True) -> V:
        """The kept answer, else `fn()`'s, kept when `keep` says."""
        with self._lock:
            if key in self._memo:
                kept: V = self._memo[key]
                return kept
            answer = fn()
            if keep(answer):
                self._memo[key] = answer
            return answer

    def chain_id(self) -> int:
        return self._read(("chain id",), self.base.chain_id)

    def get_code(self, address: str) -> bytes:
        return self._read(("code", address.lower()), lambda: self.base.get_code(address))

    def get_storage_at(self, address: str, slot: int) -> bytes:
        return self._read(("slot", address.lower(), slot), lambda: self.base.get_storage_at(address, slot))

    def call(self, to: str, data: bytes) -> bytes:
        return self._read(("call", to.lower(), bytes(data)), lambda: self.base.call(to, data))

    def find_creation(self, address: str) -> Creation | None:
        return self._read(("creation", address.lower()), lambda: self.base.find_creation(address))

    def creation_attempts(self, address: str) -> list[str]:
        """What the base's search tried in vain (not memoised: it follows the last search)."""
        return attempts_of(self.base, address)

    def close(self) -> None:
        # getattr: a reader that does not search has no `close`
        if closer := getattr(self.base, "close", None):
            closer()

    def get_transaction(self, tx_hash: str) -> TransactionFacts | None:
        """Kept once mined (it cannot change then); None and pending ones are asked again."""
        try:
            getter = self.base.get_transaction
        except AttributeError:
            raise NotImplementedError(f"{self.base!r} cannot read transactions") from None
        return self._read(
            ("transaction", tx_hash.lower()),
            lambda: getter(tx_hash),
            lambda facts: bool(facts and facts.block is not None),
        )

    def forget(self, *addresses: str) -> None:
        """Drop what was read of these addresses' storage and calls (an upgrade changed them);
        code and creation stay."""
        gone = {a.lower() for a in addresses}
        with self._lock:
            for key in [k for k in self._memo if k[0] in ("slot", "call") and k[1] in gone]:
                del self._memo[key]

    def remember_creation(self, address: str, creation: Creation | None) -> None:
        """What the deploy receipt already says, so no worker searches blocks for it."""
        with self._lock:
            self._memo[("creation", address.lower())] = creation


class SerializedChain:
    """A reader, one call at a time (re-entrant: a call may make further calls)."""

    def __init__(self, chain: ChainReader):
        self._chain = chain
        self._lock = threading.RLock()

    def __repr__(self) -> str:
        return f"SerializedChain({self._chain!r})"

    def __getattr__(self, name: str) -> Any:  # Any: whatever attribute the wrapped reader has
        # getattr: a transparent proxy, so any reader's extras (get_transaction, safe_url, close) pass
        attr = getattr(self._chain, name)
        if not callable(attr):
            return attr

        def locked(*args: object, **kwargs: object) -> object:
            with self._lock:
                return attr(*args, **kwargs)

        return locked
