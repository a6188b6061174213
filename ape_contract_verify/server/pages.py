"""The explorer's HTML pages (the contract list, an address's page) and the JSON endpoints their forms call.

Verified Contracts (`/`), a contract (`/address/0x…`) with its code, ABI, Read/Write and, for a proxy,
Read/Write as Proxy; the forms' endpoints are `/page-api/read` (eth_call through the ChainReader) and
`/page-api/calldata` (no chain at all).

Rendered from templates/ by jinja2 with autoescape (`rendering.py`): every value from a submission
is escaped, nothing from a submission is ever placed inside a <script>, and a Content-Security-Policy
allows only the app's own /static files, so even a missed escape could not run a script.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING
from urllib.parse import urlencode

from markupsafe import Markup
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse, Response
from starlette.routing import BaseRoute, Mount, Route
from starlette.staticfiles import StaticFiles

from ape_contract_verify.evm.reads import CallReverted
from ape_contract_verify.json_types import JsonValue
from ape_contract_verify.protocol.values import ADDRESS, TX_HASH
from ape_contract_verify.protocol.values import checksum as _checksum
from ape_contract_verify.server import abi_io, code_tab
from ape_contract_verify.server.contract_facts import ContractFacts
from ape_contract_verify.server.params import MAX_JSON_DEPTH, json_too_deep
from ape_contract_verify.server.rendering import HEADERS, STATIC, fragment, page

if TYPE_CHECKING:
    from ape_contract_verify.explorer.contract_api import ExplorerService

PAGE_SIZE = 25
MAX_SEARCH = 100
MAX_PAGE = 1_000_000  # SQLite's offset must stay a 64-bit integer


def routes() -> list[BaseRoute]:
    """The pages' routes, registered by app.create_app beside the API."""
    return [
        Route("/", index, methods=["GET"]),
        Route("/address/{address}", address_page, methods=["GET"]),
        Route("/tx/{txhash}", transaction_page, methods=["GET"]),
        Route("/page-api/read", read_call, methods=["POST"]),
        Route("/page-api/calldata", build_calldata, methods=["POST"]),
        Mount("/static", app=StaticFiles(directory=STATIC), name="static"),
    ]


def _service(request: Request) -> ExplorerService:
    service: ExplorerService = request.app.state.service
    return service


# -- Verified Contracts ------------------------------------------------------------------------


@dataclass(frozen=True)
class ListedContract:
    facts: ContractFacts
    proxied: bool


@dataclass(frozen=True)
class PagerLink:
    text: str
    query: str | None  # None: the current page, not a link


async def index(request: Request) -> Response:
    service = _service(request)
    query = (request.query_params.get("q") or "").strip()[:MAX_SEARCH]
    page_number, bad_page = _page_number(request.query_params.get("page")), None
    if page_number is None:  # nonsense is the first page, with a word on why
        page_number, bad_page = 1, request.query_params["page"][:40]
    if ADDRESS.match(query):  # a whole address: its page, verified or not
        return RedirectResponse(f"/address/{query}", status_code=303)
    search = query.lower() if query.lower().startswith("0x") else query
    total, contracts = await run_in_threadpool(
        service.store.search_contracts, search, (page_number - 1) * PAGE_SIZE, PAGE_SIZE
    )
    pages = max(1, -(-total // PAGE_SIZE))
    rows = [
        ListedContract(ContractFacts(contract), service.store.get_proxy(contract.address) is not None)
        for contract in contracts
    ]
    context = {
        "title": "Verified Contracts",
        "query": query,
        "total": total,
        "page": page_number,
        "bad_page": bad_page,
        "max_page": MAX_PAGE,
        "rows": rows,
        "pager": _pager(query, page_number, pages),
    }
    return page(request, "index.html", context)


def _page_number(text: str | None) -> int | None:
    """`page` as a number from 1 to MAX_PAGE; None when it is not one (ASCII digits only: "²" is a digit to str)."""
    if text is None or text == "":
        return 1
    if not (text.isascii() and text.isdigit()) or len(text) > len(str(MAX_PAGE)) or not 1 <= int(text) <= MAX_PAGE:
        return None
    return int(text)


def _pager(query: str, page_number: int, pages: int) -> list[PagerLink]:
    if pages <= 1:
        return []

    def link(number: int, text: str) -> PagerLink:
        return PagerLink(text, urlencode({**({"q": query} if query else {}), "page": number}))

    links = []
    if page_number > 1:
        links += [link(1, "« First"), link(page_number - 1, "‹ Previous")]
    links.append(PagerLink(f"Page {page_number} of {pages}", None))
    if page_number < pages:
        links += [link(page_number + 1, "Next ›"), link(pages, "Last »")]
    return links


async def transaction_page(request: Request) -> Response:
    """`/tx/0x…`: tx_page.py's, imported on its first view."""
    from ape_contract_verify.server import tx_page

    return await tx_page.transaction_page(request)


# -- contract page -----------------------------------------------------------------------------


@dataclass(frozen=True)
class Tab:
    key: str  # the panel's id and the URL fragment that opens it
    label: str
    html: Markup


@dataclass(frozen=True)
class Creator:
    deployer: str  # lowercase 0x…
    tx: str


async def address_page(request: Request) -> Response:
    service = _service(request)
    raw = request.path_params["address"]
    if not ADDRESS.match(raw):
        return page(request, "not_an_address.html", {"title": "Not an address", "raw": raw[:100]}, 404)
    address = raw.lower()
    contract = service.store.get_contract(address)
    proxy = service.store.get_proxy(address)
    implementation = service.store.get_contract(proxy.implementation) if proxy else None
    if contract is None and proxy is None:
        context = {"title": _checksum(address), "address": address, "unverified": await _unverified(service, address)}
        return page(request, "unverified_address.html", context)
    kept = (contract.details or {}) if contract else {}  # what the verification read from the chain
    creation_tx, deployer = str(kept.get("creation_tx") or ""), str(kept.get("deployer") or "")
    creator = None
    if TX_HASH.fullmatch(creation_tx) and ADDRESS.match(deployer):
        creator = Creator(deployer.lower(), creation_tx.lower())
    blueprint = bool(kept.get("blueprint"))
    tabs: list[Tab] = []
    if contract:
        facts = ContractFacts(contract)
        tabs.append(Tab("code", "Contract", await run_in_threadpool(code_tab.code_tab, facts)))  # highlighting
        if not blueprint:
            tabs.append(Tab("read", "Read Contract", _functions_tab(address, facts.abi, read=True, proxy=False)))
            tabs.append(Tab("write", "Write Contract", _functions_tab(address, facts.abi, read=False, proxy=False)))
    elif proxy is not None and implementation is not None:
        code = await run_in_threadpool(code_tab.code_tab, ContractFacts(implementation))
        note = fragment(
            "proxy_source.html", kind_name=_proxy_kind_name(proxy.kind), implementation=proxy.implementation, code=code
        )
        tabs.append(Tab("code", "Contract", note))
    else:
        tabs.append(Tab("code", "Contract", await _unverified(service, address)))
    on_chain = None
    if proxy:
        on_chain = await _moved_implementation(service, address, proxy.implementation)
        impl_abi = ContractFacts(implementation).abi if implementation else None
        for key, label, read in (("readProxy", "Read as Proxy", True), ("writeProxy", "Write as Proxy", False)):
            functions = _functions_tab(address, impl_abi, read=read, proxy=True) if impl_abi is not None else None
            html = fragment("proxy_functions.html", implementation=proxy.implementation, functions=functions)
            tabs.append(Tab(key, label, html))
    context = {
        "title": _checksum(address),
        "address": address,
        "contract": contract,
        "proxy": proxy,
        "implementation": implementation,
        "on_chain": on_chain,
        "creator": creator,
        "blueprint": blueprint,
        "tabs": tabs,
    }
    return page(request, "address.html", context)


async def _moved_implementation(service: ExplorerService, address: str, linked: str) -> str | None:
    """As Etherscan, the link stays until verifyproxycontract is sent again; unlike it, the page says
    when the chain has moved on (one read of the proxy's slots), and which implementation Read as
    Proxy reads. The implementation on chain when it is not the linked one, else None."""
    from ape_contract_verify.evm.proxies import detect_proxy

    try:
        info = await run_in_threadpool(detect_proxy, service.chain, address)
    except Exception:  # the chain's answer is a nicety here, never the page's failure
        return None
    if info is None or info.implementation.lower() == str(linked).lower():
        return None
    return info.implementation


def _proxy_kind_name(kind: str | None) -> str:
    # evm.proxies' kinds: "EIP-1167", "EIP-1967", …
    if str(kind or "").replace("-", "").lower() == "eip1167":
        return "Minimal Proxy Contract (EIP-1167)"
    return f"Proxy Contract ({kind})" if kind else "Proxy Contract"


async def _unverified(service: ExplorerService, address: str) -> Markup:
    try:
        code = await run_in_threadpool(service.chain.get_code, address)
    except Exception as err:
        return fragment("unverified.html", read_error=type(err).__name__)
    from ape_contract_verify.evm.blueprint import is_blueprint

    return fragment(
        "unverified.html", read_error=None, code_size=len(code), blueprint=bool(code) and is_blueprint(code)
    )


@dataclass(frozen=True)
class FormField:
    name: str
    kind: str  # the canonical ABI type
    hint: str


@dataclass(frozen=True)
class FunctionForm:
    name: str
    signature: str
    outputs: str  # "uint256 amount, bytes4 tag"
    fields: list[FormField]
    payable: bool


def _functions_tab(address: str, abi: list[JsonValue], read: bool, proxy: bool) -> Markup:
    forms = []
    for item in abi_io.functions(abi, read):
        fields = []
        for i, param in enumerate(abi_io.param_list(item.get("inputs"))):
            kind = abi_io.canonical_type(param)
            hint = "JSON array, e.g. [1, 2]" if kind.endswith("]") or kind.startswith("(") else kind
            fields.append(FormField(str(param.get("name") or f"arg{i}"), kind, hint))
        outputs = ", ".join(
            abi_io.canonical_type(p) + (f" {p['name']}" if p.get("name") else "")
            for p in abi_io.param_list(item.get("outputs"))
        )
        payable = not read and item.get("stateMutability") == "payable"
        forms.append(FunctionForm(str(item["name"]), abi_io.signature(item), outputs, fields, payable))
    return fragment("functions.html", address=address, forms=forms, read=read, proxy=proxy)


# -- JSON endpoints for the forms --------------------------------------------------------------


class _Refused(Exception):
    def __init__(self, text: str, status: int = 400):
        super().__init__(text)
        self.status = status


async def _form_request(
    request: Request,
) -> tuple[ExplorerService, str, dict[str, JsonValue], list[JsonValue], dict[str, JsonValue], list[JsonValue]]:
    """(service, address, function ABI item, argument strings, body, the ABI it came from) of a form's JSON POST."""
    service = _service(request)
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


def _abi_for(service: ExplorerService, address: str, as_proxy: bool) -> list[JsonValue]:
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
    return JSONResponse({"ok": False, "error": str(err)}, status_code=status, headers=HEADERS)


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
        return JSONResponse({"ok": False, "reverted": True, "error": text}, headers=HEADERS)
    except Exception as err:  # the node could not be reached or refused the call
        return JSONResponse({"ok": False, "error": f"The call failed: {err}"}, status_code=502, headers=HEADERS)
    try:
        outputs = abi_io.decode_outputs(item, bytes(returned))
    except abi_io.InputError as err:
        return _refusal(err)
    return JSONResponse(
        {"ok": True, "function": abi_io.signature(item), "outputs": outputs, "data": "0x" + data.hex()},
        headers=HEADERS,
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
        headers=HEADERS,
    )
