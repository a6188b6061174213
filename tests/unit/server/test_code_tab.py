"""server/code_tab.py: the Contract tab from made-up verified contracts: settings, constructor
arguments decoded, sources highlighted (and kept), the ABI; every submitted text escaped."""

from __future__ import annotations

import json

import pytest
from eth_abi import encode
from markupsafe import Markup

from ape_contract_verify.explorer.store import VerifiedContract
from ape_contract_verify.server import code_tab
from ape_contract_verify.server.contract_facts import ContractFacts

pytestmark = pytest.mark.unit

HOSTILE = "</pre><script>alert('x\")</script>"
ABI = [{"type": "constructor", "inputs": [{"name": "label", "type": "string"}, {"name": "", "type": "uint8"}]}]


def contract(**fields) -> VerifiedContract:
    values = dict(
        address="0x" + "ab" * 20,
        contract_name="src/Token.sol:Token",
        compiler_version="v0.8.26+commit.8a97fa7a",
        code_format="solidity-standard-json-input",
        source_code=json.dumps(
            {
                "language": "Solidity",
                "sources": {"src/Token.sol": {"content": "contract Token { uint x = 1; }"}},
                "settings": {"optimizer": {"enabled": True, "runs": 777}, "evmVersion": "paris", "viaIR": True},
            }
        ),
        abi=json.dumps(ABI),
        constructor_arguments=encode(["string", "uint8"], [HOSTILE, 7]).hex(),
        libraries={"Lib": "0x" + "11" * 20},
        verified_at=1_700_000_000,
        updated_at=1.0,
    )
    values.update(fields)
    return VerifiedContract(**values)


@pytest.fixture(autouse=True)
def no_kept_sources():
    code_tab.clear_highlighted()
    yield
    code_tab.clear_highlighted()


def test_settings_rows_name_what_the_input_asked_for():
    html = code_tab.code_tab(ContractFacts(contract()))
    assert isinstance(html, Markup)
    for label, value in [
        ("Contract name", "Token"),
        ("Source unit", "src/Token.sol:Token"),
        ("Optimizer", "Yes, 777 runs"),
        ("EVM version", "paris"),
        ("Via IR", "Yes"),
        ("Libraries", "Lib: 0x" + "11" * 20),
        ("Verified", "2023-11-14 22:13:20 UTC"),
    ]:
        assert f"<tr><th>{label}</th><td>{value}</td></tr>" in html


def test_constructor_arguments_are_decoded_by_name_and_escaped():
    html = code_tab.code_tab(ContractFacts(contract()))
    assert HOSTILE not in html
    assert "<th>label <small>string</small></th><td><code>&lt;/pre&gt;&lt;script&gt;alert(&#39;x&#34;)" in html
    assert "<th>arg1 <small>uint8</small></th><td><code>7</code></td>" in html  # unnamed: by position


def test_arguments_that_do_not_decode_say_so_and_none_say_none():
    bad = code_tab.code_tab(ContractFacts(contract(constructor_arguments="zz<b>")))
    assert "These bytes do not decode with the constructor's ABI." in bad
    assert "<pre class='hex'>zz&lt;b&gt;</pre>" in bad
    assert "<h2>Constructor arguments</h2><p>None.</p>" in code_tab.code_tab(
        ContractFacts(contract(constructor_arguments=""))
    )


def test_sources_are_highlighted_escaped_and_kept_until_cleared():
    record = contract(code_format="solidity-single-file", source_code=f"// {HOSTILE}\ncontract Token {{}}")
    html = code_tab.code_tab(ContractFacts(record))
    assert "<figcaption>File 1 of 1: <code>Token.sol</code></figcaption>" in html
    assert '<span class="c1">// &lt;/pre&gt;&lt;script&gt;' in html and HOSTILE not in html
    kept = code_tab.sources_section(ContractFacts(record))
    assert code_tab.sources_section(ContractFacts(record)) is kept  # not highlighted again
    code_tab.clear_highlighted()
    assert code_tab.sources_section(ContractFacts(record)) is not kept


def test_a_file_too_big_to_highlight_is_plain_escaped_text(monkeypatch):
    monkeypatch.setattr(code_tab, "MAX_HIGHLIGHTED", 10)
    html = code_tab.code_tab(ContractFacts(contract(code_format="solidity-single-file", source_code=HOSTILE)))
    assert (
        "<pre class='highlight'><code>&lt;/pre&gt;&lt;script&gt;alert(&#39;x&#34;)&lt;/script&gt;</code></pre>" in html
    )


def test_the_abi_is_shown_as_indented_json_escaped():
    abi = [{"type": "function", "name": HOSTILE, "inputs": [], "outputs": []}]
    html = code_tab.code_tab(ContractFacts(contract(abi=json.dumps(abi), constructor_arguments="")))
    assert "<pre class='abi' id='abi-json'>[\n  {\n    &#34;type&#34;: &#34;function&#34;," in html
    assert HOSTILE not in html
