"""The two chain readers: JSON-RPC to a node (`JsonRpcChain`), or through an Ape provider.

`ChainReader` (`evm/reads.py`) is all the verifier and proxy detection need (and `get_transaction`,
the explorer's transaction page). `JsonRpcChain` talks JSON-RPC to any node (anvil, for
`ape verify serve --rpc URL`); `ApeProviderChain` reads through an Ape provider, including the
in-process `ethereum:local:test` one, which has no JSON-RPC endpoint (a factory's children are
found there by replaying the block in the process: `evm/tester_replay.py`). Both find creations
with `evm/creation.py`'s search and are safe to call from several worker threads.
"""

from __future__ import annotations

import itertools
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from functools import partial
from typing import TYPE_CHECKING, TypeVar

from ape_contract_verify.evm.bytecode import to_hex
from ape_contract_verify.evm.creation import (
    DEFAULT_SCAN_BLOCKS,
    IN_PROCESS_SOURCE,
    CreateFrame,
    CreationFinder,
    Deployment,
    walk_create_frames,
)
from ape_contract_verify.evm.reads import (
    RATE_LIMIT_RETRIES,
    CallReverted,
    ChainError,
    NodeObject,
    TransactionFacts,
    ape_address,
    is_rate_limited,
    is_refused,
    node_list,
    node_object,
    node_retry,
    provider_web3,
    rate_limit_text,
    read_transaction,
    revert_data,
)
from ape_contract_verify.evm.tester_replay import create_frames, tester_chain
from ape_contract_verify.json_types import JsonValue, as_text
from ape_contract_verify.protocol.values import hex_to_bytes as _hex_bytes
from ape_contract_verify.retry import Retry, with_retries

if TYPE_CHECKING:
    import requests
    from ape.api import ProviderAPI

    from ape_contract_verify.evm.fork import ForkReplayer

T = TypeVar("T")


def _quantity(value: object) -> int:
    """A JSON-RPC quantity (0x hex text) as an int."""
    if not isinstance(value, str):
        raise TypeError(f"a hex quantity was expected, not {type(value).__name__}")
    return int(value, 16)


class _NodeReader(CreationFinder):
    """What both readers share: a provider's rate limits waited out and counted, and the block
    reads the creation search makes over JSON-RPC (`request`): transactions, receipts, and create
    frames from the node's trace APIs (debug's callTracer, else parity's trace_block)."""

    rate_limited = 0  # answers that were the provider's rate limit, waited out
    _traces: str | None = None  # which trace API the node answered, once known ("" none)

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
            on_retry=self._count_limit,
            gave_up=gave_up,
        )

    def _count_limit(self, _: Retry) -> None:
        self.rate_limited += 1

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
                tx_hash = to_hex(tx["hash"])
                data, sender = _hex_bytes(tx.get("input") or tx.get("data")), str(tx.get("from", ""))
                yield tx_hash, data, sender, partial(self._receipt_address, tx_hash)

    def _receipt_address(self, tx_hash: str) -> object:
        return node_object(self.request("eth_getTransactionReceipt", [tx_hash])).get("contractAddress")

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
                    listed = node_object(self.request("eth_getBlockByNumber", [hex(block), False])).get("transactions")
                    tx_hashes = [t if isinstance(t, str) else str(node_object(t)["hash"]) for t in node_list(listed)]
                tx_hash = tx_hashes[index] if index < len(tx_hashes) else ""
            frames += [(tx_hash, as_text(call.get("from")) or "", frame) for frame in walk_create_frames(call)]
        return frames

    def _parity_frames(self, block: int) -> list[CreateFrame]:
        senders: dict[str, str] = {}
        frames: list[CreateFrame] = []
        for trace in map(node_object, node_list(self.request("trace_block", [hex(block)]))):
            if trace.get("type") != "create" or trace.get("error"):
                continue
            action, result = node_object(trace.get("action")), node_object(trace.get("result"))
            tx_hash = as_text(trace.get("transactionHash")) or ""
            if not trace.get("traceAddress"):
                senders[tx_hash] = as_text(action.get("from")) or ""
            sender = senders.get(tx_hash) or as_text(
                node_object(self.request("eth_getTransactionByHash", [tx_hash])).get("from")
            )
            frame = {
                "type": "CREATE",
                "from": action.get("from"),
                "to": result.get("address"),
                "input": action.get("init"),
            }
            frames.append((tx_hash, sender or "", frame))
        return frames


class JsonRpcChain(_NodeReader):
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
        self._chain_id: int | None = None

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

    def chain_id(self) -> int:
        if self._chain_id is None:
            self._chain_id = _quantity(self.request("eth_chainId", []))
        return self._chain_id

    def get_code(self, address: str, block: int | None = None) -> bytes:
        return _hex_bytes(self.request("eth_getCode", [address, "latest" if block is None else hex(block)]))

    def get_storage_at(self, address: str, slot: int) -> bytes:
        return _hex_bytes(self.request("eth_getStorageAt", [address, hex(slot), "latest"])).rjust(32, b"\0")

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

    def call(self, to: str, data: bytes) -> bytes:
        return _hex_bytes(self.request("eth_call", [{"to": to, "data": "0x" + bytes(data).hex()}, "latest"]))

    def _block_number(self) -> int:
        return _quantity(self.request("eth_blockNumber", []))

    def _node_url(self) -> str | None:
        return self.url


class ApeProviderChain(_NodeReader):
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

    def chain_id(self) -> int:
        return int(self._guard("read the chain id", lambda: self.provider.chain_id))

    def get_code(self, address: str, block: int | None = None) -> bytes:
        return _hex_bytes(
            self._guard("read code", lambda: self.provider.get_code(ape_address(address), block_id=block))
        )

    def get_storage_at(self, address: str, slot: int) -> bytes:
        word = self._guard("read storage", lambda: self.provider.get_storage(ape_address(address), slot))
        return _hex_bytes(word).rjust(32, b"\0")

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

    def _block_number(self) -> int:
        return int(self._guard("read the block number", lambda: self.provider.get_block("latest").number))

    def _frames_source(self) -> str:
        in_process = self._guard("reach its chain", lambda: tester_chain(self.provider)) is not None
        return IN_PROCESS_SOURCE if in_process else "trace"

    def _block_create_frames(self, block: int) -> list[CreateFrame] | None:
        # Ape's test provider (eth-tester) runs in this process: no traces, no node to fork, but
        # its chain can replay the block with py-evm. Providers backed by a real node (ape-foundry,
        # ape-node) pass JSON-RPC through to its trace APIs.
        if self._frames_source() != IN_PROCESS_SOURCE:
            return super()._block_create_frames(block)

        def replay() -> list[CreateFrame]:  # in the in-process chain (eth-tester's py-evm), under the lock
            chain = tester_chain(self.provider)
            if chain is None:
                raise ChainError("the provider's in-process chain is gone")
            return create_frames(chain, block)  # its failure, ReplayFailed, is a ChainError

        return self._guard("replay a block", replay)
