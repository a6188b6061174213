"""The transaction page, `/tx/0x…`: Etherscan's Transaction Details, read from the chain through
the ChainReader's `get_transaction`. When the called contract is verified here (for a proxy: its
implementation), the method and its arguments are decoded from the verified ABI, and so are the
names of the events its logs carry.

Every value shown goes through `escape`, as on the other pages: a verified ABI's names and a
call's string arguments are anyone's text. This module writes a page's (title, body, status);
pages.py, which routes `/tx/`, puts them in its frame (so this module does not import it back).
"""

from __future__ import annotations

from html import escape
from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request

from ape_contract_verify.evm.abi import event_topic
from ape_contract_verify.evm.chain import ChainError, TransactionFacts
from ape_contract_verify.protocol.values import TX_HASH
from ape_contract_verify.protocol.values import checksum as _checksum
from ape_contract_verify.server import abi_io
from ape_contract_verify.server.page_text import short_name as _short_name
from ape_contract_verify.server.page_text import text as _text
from ape_contract_verify.server.page_text import when as _when

MAX_LOGS_SHOWN = 200
_BACK = "<p><a href='/'>Back to Verified Contracts</a></p>"
Page = tuple[str, str, int]  # title, body, HTTP status


async def transaction_details(request: Request) -> Page:
    service = request.app.state.service
    raw = request.path_params["txhash"]
    if not TX_HASH.fullmatch(raw):
        return (
            "Not a transaction hash",
            f"<h1>Not a transaction hash</h1><p class='notice' id='bad-txhash'>txhash: <q>{escape(raw[:100])}</q> is not a "
            "transaction hash. Give 0x followed by 64 hex digits.</p>" + _BACK,
            400,
        )
    tx_hash = raw.lower()
    reader = getattr(service.chain, "get_transaction", None)
    try:
        if reader is None:
            raise NotImplementedError
        facts = await run_in_threadpool(reader, tx_hash)  # a node read: never on the event loop
    except NotImplementedError:
        return (
            "Transactions not available",
            "<h1>Transactions not available</h1><p class='notice' id='no-tx-reader'>This explorer's chain reader cannot "
            "read transactions, so it has no transaction pages. Addresses and verified contracts still have theirs.</p>"
            + _BACK,
            501,
        )
    except Exception as err:  # node down or refusing: a gateway failure, never a traceback
        detail = str(err) if isinstance(err, ChainError) else type(err).__name__  # ChainError's text hides URL secrets
        return (
            "Node did not answer",
            f"<h1>Node did not answer</h1><p class='notice' id='node-down'>The node did not answer for transaction "
            f"<span class='addr'>{escape(tx_hash)}</span>: {escape(detail)}. Check that it is running, then reload.</p>",
            502,
        )
    if facts is None:
        return (
            "Transaction not found",
            f"<h1>Transaction not found</h1><p class='notice' id='tx-not-found'>The chain this explorer reads does not know "
            f"the transaction <span class='addr'>{escape(tx_hash)}</span>. A restarted dev chain forgets its "
            "transactions; check the hash and the network.</p>" + _BACK,
            404,
        )
    body = await run_in_threadpool(_details, service.store, facts)  # SQLite reads and ABI decoding
    return f"Transaction {tx_hash[:10]}…", body, 200


# -- the details -------------------------------------------------------------------------------


def _details(store: Any, facts: TransactionFacts) -> str:
    rows: list[tuple[str, str]] = [("Transaction Hash", f"<code id='tx-hash'>{escape(facts.hash)}</code>")]
    rows.append(("Status", _status(facts)))
    rows.append(("Block", escape(str(facts.block)) if facts.block is not None else "Pending"))
    if facts.timestamp is not None:
        rows.append(("Timestamp", escape(_when(facts.timestamp))))
    rows.append(("From", _address_link(facts.sender, "from")))
    if facts.to is not None:
        to_name = _name_of(store, facts.to)
        rows.append(
            (
                "To",
                _address_link(facts.to, "to") + (f" <span id='to-name'>({escape(to_name)})</span>" if to_name else ""),
            )
        )
    else:
        rows.append(("To", _creation(store, facts)))
    rows.append(("Value", escape(_units(facts.value, 18, "ETH"))))
    if facts.fee is not None:
        rows.append(("Transaction Fee", escape(_units(facts.fee, 18, "ETH"))))
    if facts.gas_price is not None:
        rows.append(("Gas Price", escape(_units(facts.gas_price, 9, "Gwei"))))
    if facts.gas_used is not None:
        usage = f"{facts.gas_used:,}"
        if facts.gas_limit:
            usage = f"{facts.gas_limit:,} | {facts.gas_used:,} ({facts.gas_used * 100 / facts.gas_limit:.2f}%)"
        rows.append(("Gas Limit & Usage" if facts.gas_limit else "Gas Used", escape(usage)))
    rows.append(("Nonce", escape(str(facts.nonce))))
    method, decoded = _method(store, facts)
    if method:
        rows.append(("Method", method))
    rows.append(("Input Data", decoded + f"<pre class='hex' id='input-data'>0x{escape(facts.input.hex())}</pre>"))
    table = "".join(f"<tr><th>{escape(label)}</th><td>{html}</td></tr>" for label, html in rows)
    return (
        "<h1>Transaction Details</h1>"
        f"<div class='table-wrap'><table class='facts' id='tx-details'>{table}</table></div>" + _logs(store, facts)
    )


def _status(facts: TransactionFacts) -> str:
    if facts.block is None:
        return "<span class='badge warn' id='tx-status'>Pending</span>"
    if facts.status == 1:
        return "<span class='badge ok' id='tx-status'>Success</span>"
    if facts.status == 0:
        return "<span class='badge warn' id='tx-status'>Failed</span>"
    return "<span class='badge warn' id='tx-status'>Unknown</span>"  # pre-Byzantium receipts have no status


def _address_link(address: str, role: str) -> str:
    shown = _checksum(address) if address else ""
    return f"<a class='addr' id='{role}-link' href='/address/{escape(address)}'>{escape(shown)}</a>"


def _name_of(store: Any, address: str) -> str:
    contract = store.get_contract(address)
    return _short_name(contract.contract_name) if contract else ""


def _creation(store: Any, facts: TransactionFacts) -> str:
    if not facts.created:
        why = "pending" if facts.block is None else "no contract was created"
        return f"<span id='contract-creation'>Contract Creation</span> ({why})"
    name = _name_of(store, facts.created)
    verified = f" <span id='created-name'>{escape(name)}</span> <span class='badge ok'>Verified</span>" if name else ""
    return f"<span id='contract-creation'>Contract Creation</span>: {_address_link(facts.created, 'created')}{verified}"


def _units(amount: int, decimals: int, unit: str) -> str:
    """An exact decimal: wei as ETH (18), or as Gwei (9); no float rounding."""
    whole, fraction = divmod(amount, 10**decimals)
    text = f"{whole:,}" + (("." + f"{fraction:0{decimals}d}".rstrip("0")) if fraction else "")
    return f"{text} {unit}"


def _abis(store: Any, address: str) -> list[tuple[list, str | None]]:
    """The verified ABIs that can describe calls to `address`: its own, then (a proxy) its
    implementation's, with the implementation's address."""
    found: list[tuple[list, str | None]] = []
    contract = store.get_contract(address)
    if contract:
        found.append((abi_io.load_abi(contract.abi), None))
    proxy = store.get_proxy(address)
    implementation = store.get_contract(proxy.implementation) if proxy else None
    if implementation:
        found.append((abi_io.load_abi(implementation.abi), proxy.implementation))
    return found


def _method(store: Any, facts: TransactionFacts) -> tuple[str, str]:
    """(the Method row, the decoded arguments above the raw input) for a call."""
    if facts.to is None:
        return "", ""
    data = facts.input
    if not data:
        return "<span id='method'>Transfer</span>", ""
    abis = _abis(store, facts.to)
    selector = data[:4]
    for abi, via in abis:
        for item in abi_io.functions(abi, read=True) + abi_io.functions(abi, read=False):
            if abi_io.selector(item) != selector:
                continue
            method = f"<code id='method'>{escape(abi_io.signature(item))}</code>"
            if via:
                method += f" <small>(the implementation's ABI, at {_address_link(via, 'via')})</small>"
            try:
                args = abi_io.decode_outputs({"outputs": item.get("inputs") or []}, data[4:])
            except abi_io.InputError:
                return (
                    method,
                    "<p class='notice' id='not-decoded'>The input does not decode with this method's arguments.</p>",
                )
            return method, _arguments(args)
    method = f"<code id='method'>0x{escape(selector.hex())}</code>"
    if abis:
        return method, "<p class='notice' id='not-decoded'>This selector is not a function of the verified ABI.</p>"
    return method, ""


def _arguments(args: list[dict]) -> str:
    if not args:
        return ""
    rows = []
    for index, arg in enumerate(args):
        value = arg["value"]
        shown = (
            _address_link(str(value).lower(), f"arg{index}")
            if arg["type"] == "address"
            else f"<code>{escape(_text(value))}</code>"
        )
        rows.append(
            f"<tr><th>{escape(arg['name'] or f'arg{index}')} <small>{escape(arg['type'])}</small></th><td>{shown}</td></tr>"
        )
    return f"<div class='table-wrap'><table class='facts' id='decoded-input'>{''.join(rows)}</table></div>"


def _logs(store: Any, facts: TransactionFacts) -> str:
    if facts.block is None:
        return ""
    if not facts.logs:
        return "<h2>Logs (0)</h2>"
    events: dict[str, dict[bytes, str]] = {}  # emitter -> topic0 -> event signature
    items = []
    for number, log in enumerate(facts.logs[:MAX_LOGS_SHOWN]):
        if log.address not in events:
            events[log.address] = _events(store, log.address)
        topic0 = bytes.fromhex(log.topics[0][2:]) if log.topics else b""
        name = events[log.address].get(topic0)
        topics = "".join(f"<li><code>{escape(topic)}</code></li>" for topic in log.topics)
        items.append(
            f"<li class='log'>{_address_link(log.address, f'log{number}')}"
            + (f" <code class='event'>{escape(name)}</code>" if name else "")
            + f"<ol start='0'>{topics}</ol></li>"
        )
    more = len(facts.logs) - MAX_LOGS_SHOWN
    note = f"<p class='notice'>{more} more logs are not shown.</p>" if more > 0 else ""
    return f"<h2>Logs ({len(facts.logs)})</h2><ol class='logs' start='0'>{''.join(items)}</ol>{note}"


def _events(store: Any, address: str) -> dict[bytes, str]:
    found: dict[bytes, str] = {}
    for abi, _ in _abis(store, address):
        for item in abi:
            if (
                isinstance(item, dict)
                and item.get("type") == "event"
                and item.get("name")
                and not item.get("anonymous")
            ):
                signature = abi_io.signature(item)
                found.setdefault(event_topic(item), signature)
    return found
