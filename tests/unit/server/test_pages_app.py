"""The pages' server side without a browser: paging and search over many stored contracts, escaping
of stored names, the form endpoints' encoding, decoding and refusals, and abi_io's parsing rules.
The chain here is a recording fake (the pages' reads on a real chain are in test_pages_browser.py)."""

from __future__ import annotations

import json
import re

import pytest
import requests
from eth_abi import encode
from eth_utils import keccak

from ape_contract_verify.evm.reads import CallReverted, ChainError
from ape_contract_verify.explorer.store import ProxyRecord, VerifiedContract
from ape_contract_verify.server import abi_io
from ape_contract_verify.server.runner import start_embedded
from support.service import FakeChain, FakeEngine

ABI = [
    {"type": "constructor", "inputs": [{"name": "owner", "type": "address"}, {"name": "limits", "type": "uint16[2]"}]},
    {
        "type": "function",
        "name": "get",
        "stateMutability": "view",
        "inputs": [{"name": "who", "type": "address"}, {"name": "flag", "type": "bool"}],
        "outputs": [{"name": "amount", "type": "uint256"}, {"name": "tag", "type": "bytes4"}],
    },
    {
        "type": "function",
        "name": "pair",
        "stateMutability": "pure",
        "inputs": [
            {
                "name": "p",
                "type": "tuple",
                "components": [{"name": "a", "type": "int8"}, {"name": "b", "type": "string"}],
            }
        ],
        "outputs": [
            {
                "name": "",
                "type": "tuple[]",
                "components": [{"name": "x", "type": "address"}, {"name": "y", "type": "bytes"}],
            }
        ],
    },
    {
        "type": "function",
        "name": "reverts",
        "stateMutability": "view",
        "inputs": [],
        "outputs": [{"name": "", "type": "uint256"}],
    },
    {
        "type": "function",
        "name": "deposit",
        "stateMutability": "payable",
        "inputs": [{"name": "ids", "type": "uint256[]"}],
        "outputs": [],
    },
    {
        "type": "function",
        "name": "set",
        "stateMutability": "nonpayable",
        "inputs": [{"name": "v", "type": "bytes32"}],
        "outputs": [],
    },
    {"type": "function", "name": "denied", "stateMutability": "view", "inputs": [], "outputs": []},
    {"type": "function", "name": "says", "stateMutability": "view", "inputs": [], "outputs": []},
    {"type": "function", "name": "unknown", "stateMutability": "view", "inputs": [], "outputs": []},
    {"type": "event", "name": "Done", "inputs": []},
    {
        "type": "error",
        "name": "Unauthorized",
        "inputs": [{"name": "who", "type": "address"}, {"name": "level", "type": "uint8"}],
    },
]
OWNER = "0x" + "ab" * 20
IMPL = "0x" + "d4" * 20
PROXY = "0x" + "c3" * 20


def selector(sig: str) -> bytes:
    return keccak(text=sig)[:4]


class RecordingChain(FakeChain):
    """Answers eth_call with fixed return data per selector, and remembers what was called."""

    def __init__(self):
        super().__init__()
        self.sent: list[tuple[str, bytes]] = []

    def call(self, to: str, data: bytes) -> bytes:
        self.sent.append((to, bytes(data)))
        if data[:4] == selector("get(address,bool)"):
            return encode(["uint256", "bytes4"], [2**255 + 1, b"\x01\x02\x03\x04"])
        if data[:4] == selector("pair((int8,string))"):
            return encode(["(address,bytes)[]"], [[(OWNER, b"\xff")]])
        if data[:4] == selector("reverts()"):  # the node is the problem: no revert data, no answer
            raise ChainError("the node at http://127.0.0.1:1 did not answer eth_call: ConnectionError")
        reverted = "the node at http://127.0.0.1:1 rejected eth_call: execution reverted"
        if data[:4] == selector("denied()"):
            raise CallReverted(
                reverted, selector("Unauthorized(address,uint8)") + encode(["address", "uint8"], [OWNER, 7])
            )
        if data[:4] == selector("says()"):
            raise CallReverted(reverted, selector("Error(string)") + encode(["string"], ["not yet"]))
        if data[:4] == selector("unknown()"):
            raise CallReverted(reverted, bytes.fromhex("e07c8dba"))
        return b""


def contract(number: int, name: str = "", abi: list = ABI, **extra) -> VerifiedContract:
    address = "0x" + f"{number:040x}"
    fields = dict(
        address=address,
        contract_name=name or f"contracts/C{number}.sol:C{number}",
        compiler_version="v0.8.26+commit.8a97fa7a",
        code_format="solidity-standard-json-input",
        source_code=json.dumps(
            {
                "language": "Solidity",
                "sources": {f"contracts/C{number}.sol": {"content": f"contract C{number} {{}}"}},
                "settings": {"optimizer": {"enabled": True, "runs": 777}},
            }
        ),
        abi=json.dumps(abi),
        constructor_arguments=encode(["address", "uint16[2]"], [OWNER, [5, 6]]).hex(),
        match="full" if number % 2 else "partial",
        verified_at=1_700_000_000 + number,
    )
    fields.update(extra)
    return VerifiedContract(**fields)


@pytest.fixture(scope="module")
def site():
    chain = RecordingChain()
    chain.codes["0x" + f"{1:040x}"] = b"\x60\x80"
    explorer = start_embedded(chain, engine=FakeEngine(chain))
    for number in range(1, 31):
        explorer.store.save_contract(contract(number))
    explorer.store.save_contract(contract(int(IMPL, 16), name="contracts/Impl.sol:Impl"))
    evil_name = "contracts/<script>alert(1)</script>.sol:Evil"
    explorer.store.save_contract(
        contract(
            0xE711,
            name=evil_name,
            source_code="// </script><script>alert(2)</script>",
            code_format="solidity-single-file",
            verified_at=1_800_000_000,
        )
    )
    explorer.store.finish(
        explorer.store.add_submission("proxy", PROXY, {}),
        "1",
        "ok",
        proxy=ProxyRecord(address=PROXY, implementation=IMPL, kind="EIP-1967"),
    )
    explorer.chain_log = chain
    yield explorer
    explorer.stop()


def listed(html: str) -> list[str]:
    return re.findall(r"<a class='addr' href='/address/(0x[0-9a-f]{40})'>", html)


def test_list_pages_newest_first_25_a_page(site):
    first = requests.get(site.url + "/", timeout=10).text
    second = requests.get(site.url + "/", params={"page": 2}, timeout=10).text
    one, two = listed(first), listed(second)
    assert len(one) == 25 and len(two) == 7  # 32 contracts
    assert one[0] == "0x" + f"{0xE711:040x}"  # the newest
    assert one[1] == IMPL  # stored last among the rest
    assert one[2:6] == ["0x" + f"{n:040x}" for n in (30, 29, 28, 27)]
    assert not set(one) & set(two)
    assert "Page 1 of 2" in first and "page=2" in first and "Page 2 of 2" in second
    assert "777 runs" in first and "Partial" in first and "Full" in first
    # A page past the end, or nonsense, is an empty or first page, never an error.
    past = requests.get(site.url + "/", params={"page": "99"}, timeout=10)
    assert past.status_code == 200 and "Page 99 is past the last page" in past.text
    assert listed(requests.get(site.url + "/", params={"page": "-3"}, timeout=10).text) == one


def test_search_by_name_or_part_of_an_address(site):
    by_name = listed(requests.get(site.url + "/", params={"q": "C2"}, timeout=10).text)
    assert sorted(by_name) == sorted("0x" + f"{n:040x}" for n in (2, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29))
    by_address = listed(requests.get(site.url + "/", params={"q": "0000001E"}, timeout=10).text)
    assert by_address == ["0x" + f"{0x1E:040x}"]
    whole = requests.get(site.url + "/", params={"q": "0x" + "0" * 38 + "1E"}, timeout=10, allow_redirects=False)
    assert whole.status_code == 303 and whole.headers["location"] == "/address/0x" + "0" * 38 + "1E"
    # LIKE's wildcards are plain text in a search.
    assert listed(requests.get(site.url + "/", params={"q": "%"}, timeout=10).text) == []
    assert listed(requests.get(site.url + "/", params={"q": "_"}, timeout=10).text) == []
    page = requests.get(site.url + "/", params={"q": "<b>x</b>"}, timeout=10).text
    assert "<b>x</b>" not in page and "&lt;b&gt;x&lt;/b&gt;" in page


def test_stored_markup_is_escaped_everywhere(site):
    address = "0x" + f"{0xE711:040x}"
    for html in (
        requests.get(site.url + "/", timeout=10).text,
        requests.get(f"{site.url}/address/{address}", timeout=10).text,
    ):
        assert "<script>alert" not in html and "</script><script>" not in html
        assert html.count("<script") == 1  # the app's own explorer.js
    page = requests.get(f"{site.url}/address/{address}", timeout=10)
    assert "contracts/&lt;script&gt;alert(1)&lt;/script&gt;.sol:Evil" in page.text
    assert "default-src 'none'" in page.headers["content-security-policy"]


def test_contract_page_decodes_constructor_arguments(site):
    page = requests.get(f"{site.url}/address/0x{3:040x}", timeout=10).text
    assert (
        "<th>owner <small>address</small></th><td><code>0xABaBaBaBABabABabAbAbABAbABabababaBaBABaB</code></td>" in page
    )
    assert "<td><code>[&#34;5&#34;, &#34;6&#34;]</code></td>" in page  # jinja2 escapes " as &#34;
    bad = requests.get(f"{site.url}/address/0x{0xE711:040x}", timeout=10).text  # same args, source file format
    assert "Constructor arguments" in bad


def test_proxy_page_has_proxy_tabs_with_the_implementations_functions(site):
    page = requests.get(f"{site.url}/address/{PROXY}", timeout=10).text
    assert "id='readProxy'" in page and "id='writeProxy'" in page and "id='read'" not in page
    assert f"href='/address/{IMPL}'" in page
    assert "data-function='get(address,bool)'" in page and "data-function='set(bytes32)'" in page


def post_read(site, function: str, args: list, address: str = "0x" + f"{1:040x}", path: str = "read", **extra):
    return requests.post(
        f"{site.url}/page-api/{path}",
        json={"address": address, "function": function, "args": args, **extra},
        timeout=10,
    )


def test_read_encodes_the_call_and_decodes_every_type(site):
    response = post_read(site, "get(address,bool)", [OWNER.upper().replace("X", "x"), "true"])
    assert response.status_code == 200, response.text
    assert response.json()["outputs"] == [
        {"name": "amount", "type": "uint256", "value": str(2**255 + 1)},
        {"name": "tag", "type": "bytes4", "value": "0x01020304"},
    ]
    to, data = site.chain_log.sent[-1]
    assert to == "0x" + f"{1:040x}" and data == selector("get(address,bool)") + encode(
        ["address", "bool"], [OWNER, True]
    )
    pair = post_read(site, "pair((int8,string))", ['[-5, "hi"]']).json()
    assert pair["outputs"][0]["value"] == [{"x": "0xABaBaBaBABabABabAbAbABAbABabababaBaBABaB", "y": "0xff"}]
    assert site.chain_log.sent[-1][1] == selector("pair((int8,string))") + encode(["(int8,string)"], [(-5, "hi")])


def test_read_as_proxy_calls_the_proxy_with_the_implementations_abi(site):
    response = post_read(site, "get(address,bool)", [OWNER, "0"], address=PROXY, proxy=True)
    assert response.status_code == 200 and site.chain_log.sent[-1][0] == PROXY
    assert post_read(site, "get(address,bool)", [OWNER, "0"], address=PROXY).status_code == 404  # no source of its own


def test_an_unreachable_node_is_a_gateway_failure(site):
    response = post_read(site, "reverts()", [])
    assert response.status_code == 502 and "did not answer eth_call" in response.json()["error"]


@pytest.mark.parametrize(
    "function,text",
    [
        ("denied()", "reverted: Unauthorized(0xABaBaBaBABabABabAbAbABAbABabababaBaBABaB, 7)"),
        ("says()", "reverted: 'not yet'"),
        ("unknown()", "reverted: custom error 0xe07c8dba"),
    ],
)
def test_a_revert_is_an_answer_named_through_the_verified_abi(site, function, text):
    response = post_read(site, function, [])
    assert response.status_code == 200, response.text
    assert response.json() == {"ok": False, "reverted": True, "error": text}
    assert response.headers["x-content-type-options"] == "nosniff"


def test_pages_declare_no_favicon(site):
    html = requests.get(site.url + "/", timeout=10).text
    assert "<link rel='icon' href='data:,'>" in html


@pytest.mark.parametrize(
    "function,args,text",
    [
        ("get(address,bool)", ["0xabc", "true"], "who (address): '0xabc' is not an address"),
        ("get(address,bool)", [OWNER, "maybe"], "flag (bool): 'maybe' is not a bool; use true or false"),
        ("get(address,bool)", [OWNER], "takes 2 argument(s), 1 were given"),
        (
            "pair((int8,string))",
            ['[200, "x"]'],
            "p ((int8,string)) field a (int8): 200 is out of range; it must be from -128 to 127",
        ),
        ("pair((int8,string))", ["[1]"], "1 field(s) given, the tuple has 2"),
        ("pair((int8,string))", ["not json"], "is not a JSON array of its 2 fields"),
    ],
)
def test_read_refuses_bad_arguments_naming_them(site, function, args, text):
    response = post_read(site, function, args)
    assert response.status_code == 400 and text in response.json()["error"], response.text


def test_calldata_for_write_functions(site):
    answer = post_read(site, "deposit(uint256[])", ['[1, "0x10", "1_000"]'], path="calldata", value="5").json()
    assert answer["data"] == "0x" + (selector("deposit(uint256[])") + encode(["uint256[]"], [[1, 16, 1000]])).hex()
    assert answer["value"] == "5" and answer["to"] == "0x0000000000000000000000000000000000000001"
    short = post_read(site, "set(bytes32)", ["0x01"], path="calldata").json()
    assert short["data"].endswith("01" + "00" * 31)  # bytesN is right-padded, like a wallet does
    too_long = post_read(site, "set(bytes32)", ["0x" + "00" * 33], path="calldata")
    assert too_long.status_code == 400 and "33 bytes given, at most 32 fit" in too_long.json()["error"]
    odd = post_read(site, "set(bytes32)", ["0x123"], path="calldata")
    assert "an even number of hex digits" in odd.json()["error"]
    assert "not payable" in post_read(site, "set(bytes32)", ["0x01"], path="calldata", value="1").json()["error"]
    assert (
        "is not a whole number"
        in post_read(site, "deposit(uint256[])", ["[]"], path="calldata", value="x").json()["error"]
    )
    # Building calldata never touches the chain.
    before = len(site.chain_log.sent)
    post_read(site, "deposit(uint256[])", ["[]"], path="calldata")
    assert len(site.chain_log.sent) == before


def test_unknown_paths_and_static_files(site):
    css = requests.get(site.url + "/static/explorer.css", timeout=10)
    assert css.status_code == 200 and css.headers["content-type"].startswith("text/css")
    assert requests.get(site.url + "/static/explorer.js", timeout=10).status_code == 200
    assert requests.get(site.url + "/static/../pages.py", timeout=10).status_code == 404
    missing = requests.get(site.url + "/address/0x" + "12" * 20, timeout=10)
    assert missing.status_code == 200 and "there is no contract at this address" in missing.text
    code_only = requests.get(site.url + "/address/0x" + "e5" * 20, timeout=10)
    assert "Contract source code not verified" in code_only.text and "6 bytes of code" in code_only.text


def test_abi_io_functions_split_read_and_write():
    assert [f["name"] for f in abi_io.functions(ABI, read=True)] == [
        "get",
        "pair",
        "reverts",
        "denied",
        "says",
        "unknown",
    ]
    assert [f["name"] for f in abi_io.functions(ABI, read=False)] == ["deposit", "set"]
    legacy = [{"type": "function", "name": "old", "constant": True, "inputs": [], "outputs": []}]
    assert abi_io.functions(legacy, read=True) == legacy
    assert abi_io.canonical_type(ABI[2]["outputs"][0]) == "(address,bytes)[]"
    with pytest.raises(abi_io.InputError, match="Unknown function"):
        abi_io.find_function(ABI, "nope()")
    assert abi_io.parse_value({"type": "int256"}, "-0x10", "n") == -16
    assert abi_io.parse_value({"type": "uint8[2][]"}, "[[1, 2], [3, 4]]", "n") == [[1, 2], [3, 4]]
    with pytest.raises(abi_io.InputError, match=r"n item 1: 1 item\(s\) given, exactly 2 are needed"):
        abi_io.parse_value({"type": "uint8[2][]"}, "[[1]]", "n")
    assert abi_io.decode_constructor(ABI, "zz") is None and abi_io.decode_constructor(ABI, "00") is None
