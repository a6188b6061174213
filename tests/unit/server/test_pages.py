"""server/pages.py: the Verified Contracts list and the address page rendered from made-up store
records through the app in this process (no server, no node: a dict of codes stands in for the
chain), hostile names and search text escaped, and which tabs each kind of address gets."""

from __future__ import annotations

import json

import pytest

from ape_contract_verify.explorer.contract_api import ExplorerService
from ape_contract_verify.explorer.store import ProxyRecord, Store, VerifiedContract
from ape_contract_verify.server.api import create_app
from ape_contract_verify.server.pages import MAX_PAGE, PAGE_SIZE
from support.asgi import get
from support.service import FakeChain

pytestmark = pytest.mark.unit

HOSTILE = "<script>alert('x\")</script>"
ABI = [
    {"type": "function", "name": "get", "stateMutability": "view", "inputs": [], "outputs": [{"type": "uint256"}]},
    {
        "type": "function",
        "name": "put",
        "stateMutability": "payable",
        "inputs": [{"name": "who", "type": "address"}, {"name": "ids", "type": "uint256[]"}],
        "outputs": [],
    },
]
PLAIN = "0x" + "01" * 20
EVIL = "0x" + "02" * 20
BLUEPRINT = "0x" + "03" * 20
PROXY = "0x" + "04" * 20
CLONE = "0x" + "05" * 20
UNVERIFIED = "0x" + "06" * 20
EMPTY = "0x" + "07" * 20


def contract(address: str, name: str = "src/Plain.sol:Plain", **fields) -> VerifiedContract:
    values = dict(
        address=address,
        contract_name=name,
        compiler_version="v0.8.26+commit.8a97fa7a",
        code_format="solidity-single-file",
        source_code="// SPDX-License-Identifier: MIT\ncontract Plain {}",
        abi=json.dumps(ABI),
        verified_at=1_700_000_000,
    )
    values.update(fields)
    return VerifiedContract(**values)


@pytest.fixture(scope="module")
def app(tmp_path_factory):
    store = Store(tmp_path_factory.mktemp("pages") / "explorer.sqlite")
    store.save_contract(contract(PLAIN, match="partial"))
    store.save_contract(contract(EVIL, name=f"src/{HOSTILE}.sol:{HOSTILE}", source_code=f"// {HOSTILE}"))
    store.save_contract(contract(BLUEPRINT, name="src/Bp.vy:Bp", details={"blueprint": True}))
    store.finish(store.add_submission("proxy", PROXY, {}), "1", "ok", proxy=ProxyRecord(PROXY, PLAIN, kind="EIP-1967"))
    store.finish(store.add_submission("proxy", CLONE, {}), "1", "ok", proxy=ProxyRecord(CLONE, PLAIN, kind="EIP-1167"))
    chain = FakeChain({UNVERIFIED: bytes.fromhex("6080604052")})
    yield create_app(ExplorerService(store, chain))
    store.close()


def test_the_list_shows_each_contract_with_its_facts_and_escapes_names(app):
    page = get(app, "/")
    assert page.status == 200 and "default-src 'none'" in page.headers["content-security-policy"]
    assert "<title>Verified Contracts · Local explorer</title>" in page.text
    assert "3 contracts verified on this explorer, newest first" in page.text
    assert f"<a class='addr' href='/address/{PLAIN}'>" in page.text
    assert "<span class='badge warn'>Partial</span>" in page.text
    assert HOSTILE not in page.text and "&lt;script&gt;alert(&#39;x&#34;)&lt;/script&gt;" in page.text


def test_search_text_cannot_leave_its_attribute(app):
    query = "'><script>alert(1)</script>"
    page = get(app, "/?q=%27%3E%3Cscript%3Ealert(1)%3C%2Fscript%3E")
    assert query not in page.text
    assert "value='&#39;&gt;&lt;script&gt;alert(1)&lt;/script&gt;'" in page.text
    assert "No verified contract matches this search." in page.text


def test_a_bad_page_number_is_named_escaped_and_the_first_page_shown(app):
    page = get(app, "/?page=%3Cb%3E2")
    assert "id='bad-page'>page: <q>&lt;b&gt;2</q> is not a page number" in page.text
    assert f"from 1 to {MAX_PAGE}" in page.text and "3 contracts verified" in page.text


def test_a_page_past_the_last_says_so(app):
    page = get(app, "/?page=2")
    assert "<p class='empty'>Page 2 is past the last page. <a href='/'>Back to the first page</a></p>" in page.text
    assert PAGE_SIZE == 25  # one page holds the three


def test_a_verified_contract_has_contract_read_and_write_tabs(app):
    page = get(app, f"/address/{PLAIN}")
    tabs = [t for t in ("code", "read", "write", "readProxy", "writeProxy") if f"id='tab-{t}'" in page.text]
    assert tabs == ["code", "read", "write"]
    assert "data-function='get()'" in page.text and "data-function='put(address,uint256[])'" in page.text
    assert "placeholder='JSON array, e.g. [1, 2]'" in page.text  # an array input's hint
    assert "<label>value <small>wei sent with the call</small>" in page.text  # payable
    assert "<span class='badge warn'>Partial match</span>" in page.text


def test_a_blueprint_has_no_read_or_write(app):
    page = get(app, f"/address/{BLUEPRINT}")
    assert "id='blueprint-note'" in page.text
    assert "id='tab-code'" in page.text and "id='tab-read'" not in page.text and "id='tab-write'" not in page.text


def test_a_hostile_contract_page_escapes_its_name_and_source(app):
    page = get(app, f"/address/{EVIL}")
    assert HOSTILE not in page.text
    escaped = "&lt;script&gt;alert(&#39;x&#34;)&lt;/script&gt;"
    assert f"<tr><th>Source unit</th><td>src/{escaped}.sol:{escaped}</td></tr>" in page.text
    assert '<span class="c1">// &lt;script&gt;alert(' in page.text  # the source, escaped by Pygments


def test_a_linked_proxy_gets_the_implementations_functions_as_proxy(app):
    page = get(app, f"/address/{PROXY}")
    assert "This contract is a proxy (EIP-1967)." in page.text and "(Plain)" in page.text
    assert all(f"id='tab-{t}'" in page.text for t in ("code", "readProxy", "writeProxy"))
    assert "Functions of the implementation at" in page.text and "data-proxy='1'" in page.text
    assert "Proxy Contract (EIP-1967) for" in page.text  # its source: the implementation's


def test_a_minimal_proxy_is_named_as_blockscout_names_it(app):
    assert "Minimal Proxy Contract (EIP-1167) for" in get(app, f"/address/{CLONE}").text


def test_unverified_addresses_say_what_the_chain_holds(app):
    with_code = get(app, f"/address/{UNVERIFIED}")
    assert with_code.status == 200 and "The address has 5 bytes of code." in with_code.text
    assert "id='tab-" not in with_code.text
    assert "there is no contract at this address" in get(app, f"/address/{EMPTY}").text


def test_not_an_address_is_a_404_with_the_text_escaped(app):
    page = get(app, "/address/0x%3Cscript%3E")
    assert page.status == 404 and "<q>0x&lt;script&gt;</q> is not an address" in page.text
