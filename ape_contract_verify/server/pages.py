"""The local explorer's pages for people: Verified Contracts (`/`), a contract (`/address/0x…`) with
its code, ABI, Read/Write and, for a proxy, Read/Write as Proxy; and the two JSON endpoints the
forms use (`/page-api/read`: eth_call through the ChainReader; `/page-api/calldata`: no chain at all).

Server-rendered HTML: every value from a submission goes through `escape` (or Pygments, which
escapes), nothing from a submission is ever placed inside a <script>, and a Content-Security-Policy
allows only the app's own /static files, so even a missed escape could not run a script.
"""

from __future__ import annotations

import json
from html import escape
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from ape_contract_verify.evm.chain import CallReverted
from ape_contract_verify.protocol.values import ADDRESS, TX_HASH
from ape_contract_verify.protocol.values import checksum as _checksum
from ape_contract_verify.request import CodeFormat
from ape_contract_verify.server import abi_io, code_tab
from ape_contract_verify.server.page_text import short_name as _short_name
from ape_contract_verify.server.page_text import when as _when
from ape_contract_verify.server.params import MAX_JSON_DEPTH, json_too_deep
from ape_contract_verify.server.store import VerifiedContract

STATIC = Path(__file__).with_name("static")
PAGE_SIZE = 25
MAX_SEARCH = 100
MAX_PAGE = 1_000_000  # SQLite's offset must stay a 64-bit integer
_HEADERS = {
    "Content-Security-Policy": (
        "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
        "base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
    ),
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
}


def routes() -> list:
    """The pages' routes, registered by app.create_app beside the API."""
    return [
        Route("/", index, methods=["GET"]),
        Route("/address/{address}", address_page, methods=["GET"]),
        Route("/tx/{txhash}", transaction_page, methods=["GET"]),
        Route("/page-api/read", read_call, methods=["POST"]),
        Route("/page-api/calldata", build_calldata, methods=["POST"]),
        Mount("/static", app=StaticFiles(directory=STATIC), name="static"),
    ]


# -- layout ------------------------------------------------------------------------------------


def _page(title: str, body: str, status: int = 200) -> HTMLResponse:
    html = (
        "<!doctype html><html lang='en'><head><meta charset='utf-8'>"
        "<meta name='viewport' content='width=device-width, initial-scale=1'>"
        f"<title>{escape(title)} · Local explorer</title>"
        "<link rel='icon' href='data:,'>"  # no favicon request (and no 404 in the console)
        "<link rel='stylesheet' href='/static/explorer.css'><link rel='stylesheet' href='/static/highlight.css'>"
        "<script src='/static/explorer.js' defer></script></head><body>"
        "<header class='top'><a class='brand' href='/'>Local explorer</a>"
        "<form class='jump' action='/' method='get' role='search'>"
        "<input name='q' placeholder='Search by address or contract name' aria-label='Search by address or name'>"
        "<button type='submit'>Search</button></form></header>"
        f"<main>{body}</main>"
        "<footer>Served from this machine by <code>ape verify serve</code>: no keys, reads are <code>eth_call</code> only."
        " API: <code>/api?module=contract&amp;action=…</code></footer></body></html>"
    )
    return HTMLResponse(html, status_code=status, headers=_HEADERS)


class Facts:
    """What the pages show about a verified contract, in Etherscan's terms."""

    def __init__(self, contract: VerifiedContract):
        from ape_contract_verify.protocol.licenses import code_from_source, license_name

        self.contract = contract
        self.is_vyper = (
            contract.compiler_version.startswith("vyper:") or contract.code_format == CodeFormat.VYPER_JSON.value
        )
        settings = dict(contract.settings or {})
        if contract.code_format != CodeFormat.SINGLE_FILE.value:
            try:  # what the submitted input asked for, over what the compile recorded
                settings.update(json.loads(contract.source_code).get("settings") or {})
            except (ValueError, AttributeError):
                pass
        self.settings = settings
        optimizer = settings.get("optimizer") or {}
        if self.is_vyper:
            mode = settings.get("optimize", "gas")
            self.optimizer = "No" if mode == "none" else f"Yes ({mode})"
        elif optimizer.get("enabled"):
            self.optimizer = f"Yes, {optimizer.get('runs', 200)} runs"
        else:
            self.optimizer = "No"
        self.evm_version = settings.get("evmVersion") or "Default"
        self.via_ir = bool(settings.get("viaIR"))
        self.license = license_name(contract.license_type or code_from_source(contract.source_code))
        self.abi = abi_io.load_abi(contract.abi)

    def sources(self) -> dict[str, str]:
        contract = self.contract
        if contract.code_format == CodeFormat.SINGLE_FILE.value:
            return {_short_name(contract.contract_name) + (".vy" if self.is_vyper else ".sol"): contract.source_code}
        try:
            sources = json.loads(contract.source_code)["sources"]
            return {str(k): str((v or {}).get("content", "")) for k, v in sources.items()}
        except (ValueError, KeyError, AttributeError, TypeError):
            return {"input.json": contract.source_code}


# -- Verified Contracts ------------------------------------------------------------------------


async def index(request: Request) -> HTMLResponse:
    service = request.app.state.service
    query = (request.query_params.get("q") or "").strip()[:MAX_SEARCH]
    page, bad_page = _page_number(request.query_params.get("page")), ""
    if page is None:  # nonsense is the first page, with a word on why
        page = 1
        bad_page = (
            f"<p class='notice' id='bad-page'>page: <q>{escape(request.query_params['page'][:40])}</q> is not a page "
            f"number, so this is the first page. Give a whole number from 1 to {MAX_PAGE}, or leave it out.</p>"
        )
    if ADDRESS.match(query):  # a whole address: its page, verified or not
        from starlette.responses import RedirectResponse

        return RedirectResponse(f"/address/{query}", status_code=303)
    search = query.lower() if query.lower().startswith("0x") else query
    total, contracts = await run_in_threadpool(
        service.store.search_contracts, search, (page - 1) * PAGE_SIZE, PAGE_SIZE
    )
    pages = max(1, -(-total // PAGE_SIZE))
    rows = []
    for contract in contracts:
        facts = Facts(contract)
        proxy = service.store.get_proxy(contract.address)
        rows.append(
            "<tr>"
            f"<td data-label='Address'><a class='addr' href='/address/{escape(contract.address)}'>"
            f"{escape(_checksum(contract.address))}</a></td>"
            f"<td data-label='Contract'>{escape(_short_name(contract.contract_name))}</td>"
            f"<td data-label='Compiler'>{escape(contract.compiler_version)}</td>"
            f"<td data-label='Optimizer'>{escape(facts.optimizer)}</td>"
            f"<td data-label='Licence'>{escape(facts.license)}</td>"
            f"<td data-label='Match'><span class='badge {'ok' if contract.match == 'full' else 'warn'}'>"
            f"{escape(contract.match.capitalize())}</span></td>"
            f"<td data-label='Proxy'>{'Yes' if proxy else 'No'}</td>"
            f"<td data-label='Verified'><time datetime='{_when(contract.verified_at, iso=True)}'>"
            f"{_when(contract.verified_at, zone=False)}</time></td>"
            "</tr>"
        )
    heading = "<h1>Verified Contracts</h1>"
    if query:
        note = f"{total} contract{'s' if total != 1 else ''} matching <q>{escape(query)}</q> · <a href='/'>show all</a>"
    else:
        note = f"{total} contract{'s' if total != 1 else ''} verified on this explorer, newest first"
    search_form = (
        "<form class='search' action='/' method='get' role='search'>"
        f"<input name='q' value='{escape(query)}' placeholder='Address or contract name' aria-label='Filter by address or name'>"
        "<button type='submit'>Filter</button></form>"
    )
    if rows:
        table = (
            "<div class='table-wrap'><table class='contracts'><thead><tr><th>Address</th><th>Contract</th>"
            "<th>Compiler</th><th>Optimizer</th><th>Licence</th><th>Match</th><th>Proxy</th><th>Verified (UTC)</th></tr>"
            f"</thead><tbody>{''.join(rows)}</tbody></table></div>"
        )
    elif total:
        table = f"<p class='empty'>Page {page} is past the last page. <a href='/'>Back to the first page</a></p>"
    elif query:
        table = "<p class='empty'>No verified contract matches this search.</p>"
    else:
        table = "<p class='empty'>No contract verified yet. Deploy with <code>contract_verify.auto: true</code> or run <code>ape verify all</code>.</p>"
    return _page(
        "Verified Contracts",
        heading + bad_page + f"<p class='lead'>{note}</p>" + search_form + table + _pager(query, page, pages),
    )


def _page_number(text: str | None) -> int | None:
    """`page` as a number from 1 to MAX_PAGE; None when it is not one (ASCII digits only: "²" is a digit to str)."""
    if text is None or text == "":
        return 1
    if not (text.isascii() and text.isdigit()) or len(text) > len(str(MAX_PAGE)) or not 1 <= int(text) <= MAX_PAGE:
        return None
    return int(text)


def _pager(query: str, page: int, pages: int) -> str:
    if pages <= 1:
        return ""

    def link(number: int, text: str) -> str:
        params = urlencode({**({"q": query} if query else {}), "page": number})
        return f"<a href='/?{escape(params)}'>{text}</a>"

    parts = []
    if page > 1:
        parts.append(link(1, "« First") + link(page - 1, "‹ Previous"))
    parts.append(f"<span>Page {page} of {pages}</span>")
    if page < pages:
        parts.append(link(page + 1, "Next ›") + link(pages, "Last »"))
    return f"<nav class='pager' aria-label='Pages'>{''.join(parts)}</nav>"


async def transaction_page(request: Request) -> HTMLResponse:
    """`/tx/0x…`: tx_page.py writes the details, this module's frame holds them."""
    from ape_contract_verify.server import tx_page

    return _page(*await tx_page.transaction_details(request))


# -- contract page -----------------------------------------------------------------------------


async def address_page(request: Request) -> HTMLResponse:
    service = request.app.state.service
    raw = request.path_params["address"]
    if not ADDRESS.match(raw):
        return _page(
            "Not an address",
            f"<h1>Not an address</h1><p class='notice'><q>{escape(raw[:100])}</q> is not an address: "
            "an address is 0x followed by 40 hex digits.</p><p><a href='/'>Back to Verified Contracts</a></p>",
            404,
        )
    address = raw.lower()
    contract = service.store.get_contract(address)
    proxy = service.store.get_proxy(address)
    implementation = service.store.get_contract(proxy.implementation) if proxy else None
    title = f"<h1>{'Contract' if contract else 'Address'} <span class='addr'>{escape(_checksum(address))}</span></h1>"
    badges = []
    if contract:
        badges.append(
            f"<span class='badge ok'>Contract Source Code Verified</span> "
            f"<span class='badge {'ok' if contract.match == 'full' else 'warn'}'>{escape(contract.match.capitalize())} match</span>"
        )
    kept = (contract.details or {}) if contract else {}  # what the verification read from the chain
    creation_tx, deployer = str(kept.get("creation_tx") or ""), str(kept.get("deployer") or "")
    if TX_HASH.fullmatch(creation_tx) and ADDRESS.match(deployer):
        badges.append(
            f"<p id='creator'>Creator: <a class='addr' href='/address/{escape(deployer.lower())}'>{escape(_checksum(deployer))}</a>"
            f" at txn <a class='addr' id='creation-tx-link' href='/tx/{escape(creation_tx.lower())}'>{escape(creation_tx.lower())}</a></p>"
        )
    if proxy:
        badges.append(
            f"<p class='proxy-note'>This contract is a proxy ({escape(proxy.kind or 'detected')}). Implementation: "
            f"<a class='addr' id='implementation-link' href='/address/{escape(proxy.implementation)}'>"
            f"{escape(_checksum(proxy.implementation))}</a>"
            + (f" ({escape(_short_name(implementation.contract_name))})" if implementation else " (not verified)")
            + "</p>"
        )
        badges.append(await _stale_link_note(service, address, proxy.implementation))
    blueprint = bool(kept.get("blueprint"))
    if blueprint:
        badges.append(
            "<p class='proxy-note' id='blueprint-note'><span class='badge'>ERC-5202 blueprint</span> This contract's code is "
            "never run: it holds the creation code below, after the ERC-5202 preamble, for factories to deploy "
            "contracts from (<code>create_from_blueprint</code>). It has no functions to read or write.</p>"
        )
    if contract is None and proxy is None:
        return _page(_checksum(address), title + await _unverified(service, address))
    tabs: list[tuple[str, str, str]] = []
    if contract:
        facts = Facts(contract)
        tabs.append(
            ("code", "Contract", await run_in_threadpool(code_tab.code_tab, facts))
        )  # highlighting takes a while
        if not blueprint:
            tabs.append(("read", "Read Contract", _functions_tab(address, facts.abi, read=True, proxy=False)))
            tabs.append(("write", "Write Contract", _functions_tab(address, facts.abi, read=False, proxy=False)))
    elif implementation is not None:
        # As Blockscout shows a minimal proxy: the linked implementation's verified source.
        note = (
            f"<p class='proxy-note' id='proxy-source-note'>{escape(_proxy_kind_name(proxy.kind))} for "
            f"<a class='addr' href='/address/{escape(proxy.implementation)}'>{escape(_checksum(proxy.implementation))}</a>: "
            "this address's own source is not verified; the source below is its implementation's, verified "
            "at that address.</p>"
        )
        tabs.append(("code", "Contract", note + await run_in_threadpool(code_tab.code_tab, Facts(implementation))))
    else:
        tabs.append(("code", "Contract", await _unverified(service, address)))
    if proxy:
        if implementation:
            impl_abi = Facts(implementation).abi
            read = _functions_tab(address, impl_abi, read=True, proxy=True)
            write = _functions_tab(address, impl_abi, read=False, proxy=True)
        else:
            read = write = (
                "<p class='notice'>The implementation's source is not verified here, so its functions are unknown. "
                f"Verify <span class='addr'>{escape(_checksum(proxy.implementation))}</span> first.</p>"
            )
        link = (
            f"<p class='proxy-note'>Functions of the implementation at <a class='addr' href='/address/{escape(proxy.implementation)}'>"
            f"{escape(_checksum(proxy.implementation))}</a>, called at this proxy's address.</p>"
        )
        tabs.append(("readProxy", "Read as Proxy", link + read))
        tabs.append(("writeProxy", "Write as Proxy", link + write))
    nav = "".join(
        f"<a role='tab' class='tab' href='#{key}' data-tab='{key}' id='tab-{key}'>{escape(label)}</a>"
        for key, label, _ in tabs
    )
    panels = "".join(f"<section class='panel' id='{key}' data-panel='{key}'>{html}</section>" for key, _, html in tabs)
    return _page(_checksum(address), title + "".join(badges) + f"<nav class='tabs' role='tablist'>{nav}</nav>{panels}")


async def _stale_link_note(service: Any, address: str, linked: str) -> str:
    """As Etherscan, the link stays until verifyproxycontract is sent again; unlike it, the page says
    when the chain has moved on (one read of the proxy's slots), and which implementation Read as
    Proxy reads."""
    from ape_contract_verify.evm.proxies import detect_proxy

    try:
        info = await run_in_threadpool(detect_proxy, service.chain, address)
    except Exception:  # the chain's answer is a nicety here, never the page's failure
        return ""
    if info is None or info.implementation.lower() == str(linked).lower():
        return ""
    now = escape(_checksum(info.implementation))
    return (
        "<p class='notice' id='stale-link-note'>The implementation on chain is now "
        f"<a class='addr' href='/address/{escape(info.implementation.lower())}'>{now}</a>: this proxy was upgraded "
        f"after it was linked. Read as Proxy still reads the linked implementation, {escape(_checksum(linked))}, "
        "until the proxy is submitted again (verifyproxycontract, or <code>ape verify proxy</code>).</p>"
    )


def _proxy_kind_name(kind: Any) -> str:
    # evm.proxies' kinds: "EIP-1167", "EIP-1967", …
    if str(kind or "").replace("-", "").lower() == "eip1167":
        return "Minimal Proxy Contract (EIP-1167)"
    return f"Proxy Contract ({kind})" if kind else "Proxy Contract"


async def _unverified(service: Any, address: str) -> str:
    try:
        code = await run_in_threadpool(service.chain.get_code, address)
    except Exception as err:
        return f"<p class='notice'>The explorer could not read this address from the chain ({escape(type(err).__name__)}).</p>"
    if not code:
        return (
            "<p class='notice'><strong>Contract source code not verified</strong>, and there is no contract at this "
            "address: it has no code on the chain the explorer reads.</p>"
        )
    from ape_contract_verify.evm.blueprint import is_blueprint

    kind = (
        " It is an ERC-5202 blueprint (code never run, kept for factories to deploy from)."
        if is_blueprint(code)
        else ""
    )
    return (
        f"<p class='notice'><strong>Contract source code not verified.</strong> The address has {len(code)} bytes of code.{kind} "
        "Verify it with <code>ape verify contract &lt;Name&gt; &lt;address&gt;</code> to see its source and call it here.</p>"
    )


def _functions_tab(address: str, abi: list, read: bool, proxy: bool) -> str:
    items = abi_io.functions(abi, read)
    if not items:
        what = "view or pure functions" if read else "state-changing functions"
        return f"<p class='notice'>This ABI has no {what}.</p>"
    intro = (
        "<p class='lead'>Calls go to the chain as <code>eth_call</code>: nothing is signed or sent.</p>"
        if read
        else "<p class='lead'>The explorer holds no keys: each form builds the calldata a wallet would sign. "
        "Copy it into your wallet or <code>cast send</code>.</p>"
    )
    forms = []
    for number, item in enumerate(items, start=1):
        sig = abi_io.signature(item)
        fields = []
        for i, param in enumerate(item.get("inputs") or []):
            kind = abi_io.canonical_type(param)
            hint = "JSON array, e.g. [1, 2]" if kind.endswith("]") or kind.startswith("(") else kind
            fields.append(
                f"<label>{escape(param.get('name') or f'arg{i}')} <small>{escape(kind)}</small>"
                f"<input name='arg' autocomplete='off' spellcheck='false' placeholder='{escape(hint)}'></label>"
            )
        if not read and item.get("stateMutability") == "payable":
            fields.append(
                "<label>value <small>wei sent with the call</small><input name='value' placeholder='0'></label>"
            )
        outputs = ", ".join(
            abi_io.canonical_type(p) + (f" {p['name']}" if p.get("name") else "") for p in item.get("outputs") or []
        )
        returns = f" <small class='returns'>→ {escape(outputs)}</small>" if read and outputs else ""
        forms.append(
            f"<form class='fn' data-kind='{'read' if read else 'write'}' data-address='{escape(address)}' "
            f"data-proxy='{1 if proxy else 0}' data-function='{escape(sig)}'>"
            f"<h3>{number}. {escape(item['name'])}{returns}</h3>{''.join(fields)}"
            f"<button type='submit'>{'Query' if read else 'Build calldata'}</button>"
            "<div class='out' aria-live='polite'></div></form>"
        )
    return intro + "".join(forms)


# -- JSON endpoints for the forms --------------------------------------------------------------


class _Refused(Exception):
    def __init__(self, text: str, status: int = 400):
        super().__init__(text)
        self.status = status


async def _form_request(request: Request) -> tuple[Any, str, dict, list, dict, list]:
    """(service, address, function ABI item, argument strings, body, the ABI it came from) of a form's JSON POST."""
    service = request.app.state.service
    raw = await request.body()
    if len(raw) > 1_000_000:
        raise _Refused("The request is too large (over 1 MB of arguments).")
    if json_too_deep(raw):
        raise _Refused(f"The body is nested too deeply (over {MAX_JSON_DEPTH} levels); send the arguments as they are.")
    try:
        body = json.loads(raw or b"{}")
    except ValueError:
        raise _Refused('The body must be JSON: {"address": "0x…", "function": "name(types)", "args": [...]}.')
    if not isinstance(body, dict):
        raise _Refused("The body must be a JSON object with address, function and args.")
    address = str(body.get("address") or "")
    if not ADDRESS.match(address):
        raise _Refused("address: expected 0x followed by 40 hex digits.")
    address = address.lower()
    args = body.get("args") or []
    if not isinstance(args, list):
        raise _Refused("args: expected a JSON array with one value per input.")
    if any(isinstance(arg, str) and json_too_deep(arg) for arg in args):  # array arguments are JSON text
        raise _Refused(f"args: an argument is nested too deeply (over {MAX_JSON_DEPTH} levels).")
    abi = _abi_for(service, address, bool(body.get("proxy")))
    item = abi_io.find_function(abi, str(body.get("function") or ""))
    return service, address, item, args, body, abi


def _abi_for(service: Any, address: str, as_proxy: bool) -> list:
    if as_proxy:
        proxy = service.store.get_proxy(address)
        if proxy is None:
            raise _Refused(f"{address} is not a verified proxy on this explorer.", 404)
        target = service.store.get_contract(proxy.implementation)
        if target is None:
            raise _Refused(f"The implementation {proxy.implementation} is not verified here.", 404)
    else:
        target = service.store.get_contract(address)
        if target is None:
            raise _Refused(f"{address} is not verified on this explorer.", 404)
    return abi_io.load_abi(target.abi)


def _refusal(err: Exception) -> JSONResponse:
    status = err.status if isinstance(err, _Refused) else 400
    return JSONResponse({"ok": False, "error": str(err)}, status_code=status, headers=_HEADERS)


async def read_call(request: Request) -> Response:
    """eth_call of a view/pure function at the address (a proxy's: with its implementation's ABI)."""
    try:
        service, address, item, args, _, abi = await _form_request(request)
        if item not in abi_io.functions([item], read=True):
            raise _Refused(f"{abi_io.signature(item)} changes state; use the Write form to build its calldata.")
        data = abi_io.calldata(item, args)
    except (_Refused, abi_io.InputError) as err:
        return _refusal(err)
    try:
        returned = await run_in_threadpool(service.chain.call, address, data)
    except CallReverted as err:  # the contract's answer, not a gateway failure: named through its ABI
        text = abi_io.describe_revert(abi, err.data) if err.data else f"reverted: {err}"
        return JSONResponse({"ok": False, "reverted": True, "error": text}, headers=_HEADERS)
    except Exception as err:  # the node could not be reached or refused the call
        return JSONResponse({"ok": False, "error": f"The call failed: {err}"}, status_code=502, headers=_HEADERS)
    try:
        outputs = abi_io.decode_outputs(item, bytes(returned))
    except abi_io.InputError as err:
        return _refusal(err)
    return JSONResponse(
        {"ok": True, "function": abi_io.signature(item), "outputs": outputs, "data": "0x" + data.hex()},
        headers=_HEADERS,
    )


async def build_calldata(request: Request) -> Response:
    """The transaction a wallet would sign: to, value and data. Nothing is sent."""
    try:
        _, address, item, args, body, _ = await _form_request(request)
        data = abi_io.calldata(item, args)
        value_text = str(body.get("value") or "0").strip() or "0"
        value = abi_io.parse_value({"type": "uint256"}, value_text, "value (wei)")
        if value and item.get("stateMutability") != "payable":
            raise _Refused(f"{abi_io.signature(item)} is not payable: leave value empty or 0.")
    except (_Refused, abi_io.InputError) as err:
        return _refusal(err)
    return JSONResponse(
        {
            "ok": True,
            "function": abi_io.signature(item),
            "to": _checksum(address),
            "value": str(value),
            "data": "0x" + data.hex(),
        },
        headers=_HEADERS,
    )
