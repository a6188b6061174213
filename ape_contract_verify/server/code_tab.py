"""The Contract tab of the local explorer's address page: settings, constructor arguments decoded,
the source files highlighted by Pygments (the latest pages' kept), the ABI. Every value from a
submission goes through `escape` or Pygments, which escapes."""

from __future__ import annotations

import json
import threading
from collections import OrderedDict
from html import escape
from typing import Any

from ape_contract_verify.server import abi_io
from ape_contract_verify.server.page_text import short_name as _short_name
from ape_contract_verify.server.page_text import text as _text
from ape_contract_verify.server.page_text import when as _when


def code_tab(facts: Any) -> str:
    """The Contract tab of a verified contract's page (`facts`: pages.Facts): its settings,
    constructor arguments, sources and ABI."""
    contract = facts.contract
    libraries = ", ".join(f"{name}: {address}" for name, address in sorted(contract.libraries.items())) or "None"
    rows = [
        ("Contract name", _short_name(contract.contract_name)),
        ("Source unit", contract.contract_name if ":" in contract.contract_name else ""),
        ("Compiler", contract.compiler_version),
        ("Optimizer", facts.optimizer),
        ("EVM version", facts.evm_version),
        ("Via IR", "Yes" if facts.via_ir else ""),
        ("Licence", facts.license),
        ("Libraries", libraries),
        ("Source format", contract.code_format),
        ("Match", contract.match.capitalize()),
        ("Verified", _when(contract.verified_at)),
    ]
    summary = "".join(f"<tr><th>{escape(k)}</th><td>{escape(v)}</td></tr>" for k, v in rows if v)
    parts = [f"<h2>Settings</h2><div class='table-wrap'><table class='facts'>{summary}</table></div>"]
    parts.append(_constructor_section(facts))
    parts.append(_sources_section(facts))
    abi_text = json.dumps(facts.abi, indent=2) if facts.abi else contract.abi
    parts.append(
        "<h2>Contract ABI <button type='button' class='copy' data-copy='abi-json'>Copy ABI</button></h2>"
        f"<pre class='abi' id='abi-json'>{escape(abi_text)}</pre>"
    )
    return "".join(parts)


def _constructor_section(facts: Any) -> str:
    raw = facts.contract.constructor_arguments
    if not raw:
        return "<h2>Constructor arguments</h2><p>None.</p>"
    decoded = abi_io.decode_constructor(facts.abi, raw)
    rows = ""
    if decoded:
        rows = (
            "<div class='table-wrap'><table class='facts'>"
            + "".join(
                f"<tr><th>{escape(arg['name'] or f'arg{i}')} <small>{escape(arg['type'])}</small></th>"
                f"<td><code>{escape(_text(arg['value']))}</code></td></tr>"
                for i, arg in enumerate(decoded)
            )
            + "</table></div>"
        )
    else:
        rows = "<p class='notice'>These bytes do not decode with the constructor's ABI.</p>"
    return f"<h2>Constructor arguments</h2>{rows}<pre class='hex'>{escape(raw)}</pre>"


_HIGHLIGHTED: OrderedDict[tuple, str] = OrderedDict()
_HIGHLIGHTED_LOCK = threading.Lock()
HIGHLIGHT_CACHE_SIZE = 32


def _sources_section(facts: Any) -> str:
    """The source files, highlighted; kept for the latest contracts shown (a record changes
    only by re-verification, which moves its updated_at)."""
    key = (
        facts.contract.address,
        facts.contract.updated_at,
        facts.contract.code_format,
        len(facts.contract.source_code),
    )
    with _HIGHLIGHTED_LOCK:
        if key in _HIGHLIGHTED:
            _HIGHLIGHTED.move_to_end(key)
            return _HIGHLIGHTED[key]
    html = _render_sources(facts)
    with _HIGHLIGHTED_LOCK:
        _HIGHLIGHTED[key] = html
        while len(_HIGHLIGHTED) > HIGHLIGHT_CACHE_SIZE:
            _HIGHLIGHTED.popitem(last=False)
    return html


def _render_sources(facts: Any) -> str:
    from pygments import highlight
    from pygments.formatters import HtmlFormatter
    from pygments.lexers import SolidityLexer, TextLexer, VyperLexer

    formatter = HtmlFormatter(nowrap=True)
    sources = facts.sources()
    names, files = [], []
    for number, (name, content) in enumerate(sources.items(), start=1):
        if name.endswith(".vy") or (facts.is_vyper and not name.endswith(".sol")):
            lexer = VyperLexer()
        elif name.endswith(".json"):
            lexer = TextLexer()
        else:
            lexer = SolidityLexer()
        code = highlight(content, lexer, formatter) if len(content) < 2_000_000 else escape(content)
        names.append(
            f"<button type='button' class='file-tab' data-file='file-{number}'>{escape(name.rsplit('/', 1)[-1])}</button>"
        )
        files.append(
            f"<figure class='source' id='file-{number}' data-file-panel='file-{number}'>"
            f"<figcaption>File {number} of {len(sources)}: <code>{escape(name)}</code></figcaption>"
            f"<pre class='highlight'><code>{code}</code></pre></figure>"
        )
    return (
        f"<h2>Source code <small>({len(sources)} file{'s' if len(sources) != 1 else ''})</small></h2>"
        f"<div class='file-tabs'>{''.join(names)}</div>{''.join(files)}"
    )


def clear_highlighted() -> None:
    """Forget the kept highlighted sources (a benchmark's cold view)."""
    with _HIGHLIGHTED_LOCK:
        _HIGHLIGHTED.clear()
