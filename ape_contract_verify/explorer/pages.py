"""Two plain HTML pages for people: the verified-contracts list (`/`) and a contract (`/address/0x…`),
so the browser links that clients print (Etherscan's `/address/<addr>` form) lead somewhere."""

from __future__ import annotations

import json
import time
from html import escape

from starlette.requests import Request
from starlette.responses import HTMLResponse

from ape_contract_verify.request import CodeFormat

_STYLE = (
    "body{font-family:system-ui,sans-serif;margin:2rem;max-width:70rem}"
    "pre{background:#f4f4f4;padding:1rem;overflow:auto;max-height:30rem}"
    "table{border-collapse:collapse}td,th{padding:.25rem .75rem;border-bottom:1px solid #ddd;text-align:left}"
)


def _page(title: str, body: str, status: int = 200) -> HTMLResponse:
    html = (
        f"<!doctype html><html><head><meta charset='utf-8'><title>{escape(title)}</title>"
        f"<style>{_STYLE}</style></head><body><p><a href='/'>Local explorer</a></p>{body}</body></html>"
    )
    return HTMLResponse(html, status_code=status)


def _when(timestamp: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(timestamp))


async def index(request: Request) -> HTMLResponse:
    service = request.app.state.service
    rows = "".join(
        f"<tr><td><a href='/address/{escape(address)}'>{escape(address)}</a></td>"
        f"<td>{escape(name.rsplit(':', 1)[-1])}</td><td>{escape(compiler)}</td><td>{escape(match)}</td>"
        f"<td>{_when(at)}</td></tr>"
        for address, name, compiler, match, at in service.store.list_contracts()
    )
    table = (
        "<table><tr><th>Address</th><th>Contract</th><th>Compiler</th><th>Match</th><th>Verified</th></tr>"
        f"{rows}</table>"
        if rows
        else "<p>No contract verified yet.</p>"
    )
    body = f"<h1>Verified contracts</h1>{table}<p>API: <code>/api?module=contract&amp;action=…</code></p>"
    return _page("Verified contracts", body)


async def address(request: Request) -> HTMLResponse:
    service = request.app.state.service
    raw = request.path_params["address"]
    if len(raw) != 42 or not raw.startswith("0x"):
        return _page("Not an address", f"<p>{escape(raw)} is not an address (0x and 40 hex digits).</p>", 404)
    contract = service.store.get_contract(raw)
    proxy = service.store.get_proxy(raw)
    parts = [f"<h1>Contract {escape(raw)}</h1>"]
    if proxy is not None:
        parts.append(
            f"<p>Proxy ({escape(proxy.kind or 'detected')}): implementation at "
            f"<a href='/address/{escape(proxy.implementation)}'>{escape(proxy.implementation)}</a></p>"
        )
    if contract is None:
        parts.append("<p><strong>Contract source code not verified.</strong></p>")
        return _page(raw, "".join(parts))
    parts.append(
        f"<p><strong>Verified</strong> ({escape(contract.match)} match) on {_when(contract.verified_at)}</p>"
        f"<table><tr><th>Contract</th><td>{escape(contract.contract_name)}</td></tr>"
        f"<tr><th>Compiler</th><td>{escape(contract.compiler_version)}</td></tr>"
        f"<tr><th>Format</th><td>{escape(contract.code_format)}</td></tr>"
        f"<tr><th>Constructor arguments</th><td><code>{escape(contract.constructor_arguments) or '-'}</code></td></tr>"
        "</table>"
    )
    if contract.code_format == CodeFormat.SINGLE_FILE.value:
        sources = {contract.contract_name.rsplit(":", 1)[-1] + ".sol": contract.source_code}
    else:
        try:
            sources = {k: v.get("content", "") for k, v in json.loads(contract.source_code)["sources"].items()}
        except (ValueError, KeyError, AttributeError):
            sources = {"input.json": contract.source_code}
    for name, content in sources.items():
        parts.append(f"<h2>{escape(name)}</h2><pre>{escape(content)}</pre>")
    try:
        abi = json.dumps(json.loads(contract.abi), indent=2)
    except ValueError:
        abi = contract.abi
    parts.append(f"<h2>ABI</h2><pre>{escape(abi)}</pre>")
    return _page(raw, "".join(parts))
