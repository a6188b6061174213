"""The address page's Contract tab: settings, constructor arguments, highlighted sources and the ABI.

Rendered from templates/code_tab.html and sources.html (autoescaped; Pygments escapes what it highlights);
the latest pages' highlighted sources are kept."""

from __future__ import annotations

import json
import threading
from collections import OrderedDict
from dataclasses import dataclass

from markupsafe import Markup

from ape_contract_verify.server import abi_io
from ape_contract_verify.server.contract_facts import ContractFacts
from ape_contract_verify.server.page_text import short_name, when
from ape_contract_verify.server.rendering import fragment

MAX_HIGHLIGHTED = 2_000_000  # characters of one file; a bigger one is shown as plain text


def code_tab(facts: ContractFacts) -> Markup:
    """The Contract tab of a verified contract's page: its settings, constructor arguments, sources and ABI."""
    contract = facts.contract
    libraries = ", ".join(f"{name}: {address}" for name, address in sorted(contract.libraries.items())) or "None"
    settings = [
        ("Contract name", short_name(contract.contract_name)),
        ("Source unit", contract.contract_name if ":" in contract.contract_name else ""),
        ("Compiler", contract.compiler_version),
        ("Optimizer", facts.optimizer),
        ("EVM version", facts.evm_version),
        ("Via IR", "Yes" if facts.via_ir else ""),
        ("Licence", facts.license),
        ("Libraries", libraries),
        ("Source format", contract.code_format),
        ("Match", contract.match.capitalize()),
        ("Verified", when(contract.verified_at)),
    ]
    raw = contract.constructor_arguments
    return fragment(
        "code_tab.html",
        settings=settings,
        constructor_hex=raw,
        constructor_args=abi_io.decode_constructor(facts.abi, raw) if raw else None,
        sources=sources_section(facts),
        abi_text=json.dumps(facts.abi, indent=2) if facts.abi else contract.abi,
    )


@dataclass(frozen=True)
class SourceFile:
    name: str
    code: Markup | str  # Pygments' HTML, or a file too big to highlight as text (escaped by the template)


_HIGHLIGHTED: OrderedDict[tuple[str, float, str, int], Markup] = OrderedDict()
_HIGHLIGHTED_LOCK = threading.Lock()
HIGHLIGHT_CACHE_SIZE = 32


def sources_section(facts: ContractFacts) -> Markup:
    """The source files, highlighted; kept for the latest contracts shown (a record changes
    only by re-verification, which moves its updated_at)."""
    contract = facts.contract
    key = (contract.address, contract.updated_at, contract.code_format, len(contract.source_code))
    with _HIGHLIGHTED_LOCK:
        if key in _HIGHLIGHTED:
            _HIGHLIGHTED.move_to_end(key)
            return _HIGHLIGHTED[key]
    html = fragment("sources.html", files=highlighted_files(facts))
    with _HIGHLIGHTED_LOCK:
        _HIGHLIGHTED[key] = html
        while len(_HIGHLIGHTED) > HIGHLIGHT_CACHE_SIZE:
            _HIGHLIGHTED.popitem(last=False)
    return html


def highlighted_files(facts: ContractFacts) -> list[SourceFile]:
    """Each source file, highlighted by the lexer its name (or the compiler) calls for."""
    from pygments import highlight
    from pygments.formatters import HtmlFormatter
    from pygments.lexer import Lexer
    from pygments.lexers import SolidityLexer, TextLexer, VyperLexer

    formatter = HtmlFormatter(nowrap=True)
    files = []
    for name, content in facts.sources().items():
        lexer: Lexer
        if name.endswith(".vy") or (facts.is_vyper and not name.endswith(".sol")):
            lexer = VyperLexer()
        elif name.endswith(".json"):
            lexer = TextLexer()
        else:
            lexer = SolidityLexer()
        # Markup: Pygments' HtmlFormatter escapes the source as it highlights it.
        code = Markup(highlight(content, lexer, formatter)) if len(content) < MAX_HIGHLIGHTED else content
        files.append(SourceFile(name, code))
    return files


def clear_highlighted() -> None:
    """Forget the kept highlighted sources (a benchmark's cold view)."""
    with _HIGHLIGHTED_LOCK:
        _HIGHLIGHTED.clear()
