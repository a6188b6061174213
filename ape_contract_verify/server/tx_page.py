"""The transaction page (`/tx/0x…`): a transaction's details, its call decoded through the verified ABI.

Read from the chain through the ChainReader's `get_transaction`. When the called contract is verified
here (for a proxy: its implementation), the method and its arguments are decoded from the verified
ABI, and so are the names of the events its logs carry.

Rendered from templates/tx.html with autoescape, as the other pages: a verified ABI's names and a
call's string arguments are anyone's text.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response

from ape_contract_verify.evm.abi import event_topic
from ape_contract_verify.evm.reads import ChainError, LogEntry, TransactionFacts
from ape_contract_verify.json_types import JsonValue
from ape_contract_verify.protocol.values import TX_HASH
from ape_contract_verify.server import abi_io
from ape_contract_verify.server.page_text import short_name
from ape_contract_verify.server.rendering import page

if TYPE_CHECKING:
    from ape_contract_verify.explorer.contract_api import ExplorerService
    from ape_contract_verify.explorer.store import Store

MAX_LOGS_SHOWN = 200


async def transaction_page(request: Request) -> Response:
    service: ExplorerService = request.app.state.service
    raw = request.path_params["txhash"]
    if not TX_HASH.fullmatch(raw):
        return _problem(request, "Not a transaction hash", "bad-txhash", 400, raw=raw[:100])
    tx_hash = raw.lower()
    # getattr: get_transaction is optional for a ChainReader (a reader of code only has none)
    reader = getattr(service.chain, "get_transaction", None)
    try:
        if reader is None:
            raise NotImplementedError
        facts = await run_in_threadpool(reader, tx_hash)  # a node read: never on the event loop
    except NotImplementedError:
        return _problem(request, "Transactions not available", "no-tx-reader", 501)
    except Exception as err:  # node down or refusing: a gateway failure, never a traceback
        detail = str(err) if isinstance(err, ChainError) else type(err).__name__  # ChainError's text hides URL secrets
        return _problem(request, "Node did not answer", "node-down", 502, tx_hash=tx_hash, detail=detail)
    if facts is None:
        return _problem(request, "Transaction not found", "tx-not-found", 404, tx_hash=tx_hash)
    context = await run_in_threadpool(details, service.store, facts)  # SQLite reads and ABI decoding
    return page(request, "tx.html", {"title": f"Transaction {tx_hash[:10]}…", **context})


def _problem(request: Request, title: str, problem: str, status: int, **context: str) -> Response:
    return page(request, "tx_problem.html", {"title": title, "problem": problem, **context}, status)


# -- the details -------------------------------------------------------------------------------


@dataclass(frozen=True)
class DecodedCall:
    """The Method row and what sits above the raw input: the function, or only its selector."""

    signature: str = ""  # empty: no verified function has the selector
    selector: str = ""  # hex, no 0x; empty with no input (a transfer)
    via: str | None = None  # the implementation whose ABI named it (the call went to its proxy)
    arguments: list[dict[str, JsonValue]] | None = None
    problem: str | None = None  # "not-decoded", "not-in-abi"


@dataclass(frozen=True)
class ShownLog:
    entry: LogEntry
    event: str | None  # the event's signature, when the emitter's verified ABI has it


def details(store: Store, facts: TransactionFacts) -> dict[str, object]:
    """tx.html's context for a transaction the chain knows."""
    usage = None
    if facts.gas_used is not None:
        usage = f"{facts.gas_used:,}"
        if facts.gas_limit:
            usage = f"{facts.gas_limit:,} | {facts.gas_used:,} ({facts.gas_used * 100 / facts.gas_limit:.2f}%)"
    return {
        "tx": facts,
        "to_name": _name_of(store, facts.to) if facts.to is not None else "",
        "created_name": _name_of(store, facts.created) if facts.created else "",
        "value": units(facts.value, 18, "ETH"),
        "fee": units(facts.fee, 18, "ETH") if facts.fee is not None else None,
        "gas_price": units(facts.gas_price, 9, "Gwei") if facts.gas_price is not None else None,
        "gas_usage": usage,
        "call": decoded_call(store, facts),
        "logs": shown_logs(store, facts),
    }


def _name_of(store: Store, address: str) -> str:
    contract = store.get_contract(address)
    return short_name(contract.contract_name) if contract else ""


def units(amount: int, decimals: int, unit: str) -> str:
    """An exact decimal: wei as ETH (18), or as Gwei (9); no float rounding."""
    whole, fraction = divmod(amount, 10**decimals)
    text = f"{whole:,}" + (("." + f"{fraction:0{decimals}d}".rstrip("0")) if fraction else "")
    return f"{text} {unit}"


def _abis(store: Store, address: str) -> list[tuple[list[JsonValue], str | None]]:
    """The verified ABIs that can describe calls to `address`: its own, then (a proxy) its
    implementation's, with the implementation's address."""
    found: list[tuple[list[JsonValue], str | None]] = []
    contract = store.get_contract(address)
    if contract:
        found.append((abi_io.load_abi(contract.abi), None))
    proxy = store.get_proxy(address)
    implementation = store.get_contract(proxy.implementation) if proxy else None
    if proxy and implementation:
        found.append((abi_io.load_abi(implementation.abi), proxy.implementation))
    return found


def decoded_call(store: Store, facts: TransactionFacts) -> DecodedCall | None:
    """The call decoded through the receiver's verified ABI; None for a contract creation."""
    if facts.to is None:
        return None
    data = facts.input
    if not data:
        return DecodedCall()
    abis = _abis(store, facts.to)
    selector = data[:4]
    for abi, via in abis:
        for item in abi_io.functions(abi):
            if abi_io.selector(item) != selector:
                continue
            signature = abi_io.signature(item)
            try:
                args = abi_io.decode_outputs({"outputs": item.get("inputs") or []}, data[4:])
            except abi_io.InputError:
                return DecodedCall(signature, selector.hex(), via, problem="not-decoded")
            return DecodedCall(signature, selector.hex(), via, arguments=args)
    return DecodedCall(selector=selector.hex(), problem="not-in-abi" if abis else None)


def shown_logs(store: Store, facts: TransactionFacts) -> list[ShownLog]:
    """The first MAX_LOGS_SHOWN logs, each named by its emitter's verified event where there is one."""
    events: dict[str, Mapping[bytes, str]] = {}  # emitter -> topic0 -> event signature
    shown = []
    for log in facts.logs[:MAX_LOGS_SHOWN]:
        if log.address not in events:
            events[log.address] = _events(store, log.address)
        topic0 = bytes.fromhex(log.topics[0][2:]) if log.topics else b""
        shown.append(ShownLog(log, events[log.address].get(topic0)))
    return shown


def _events(store: Store, address: str) -> dict[bytes, str]:
    found: dict[bytes, str] = {}
    for abi, _ in _abis(store, address):
        for item in abi:
            if (
                isinstance(item, dict)
                and item.get("type") == "event"
                and item.get("name")
                and not item.get("anonymous")
            ):
                found.setdefault(event_topic(item), abi_io.signature(item))
    return found
