"""server/tx_page.py: the transaction page from made-up transactions (a fake reader's answers, no
chain): the call decoded through the verified ABI (a proxy's: its implementation's), events named,
amounts exact, and every text from an ABI or a call escaped."""

from __future__ import annotations

import json

import pytest
from eth_abi import encode
from eth_utils import keccak

from ape_contract_verify.evm.reads import ChainError, LogEntry, TransactionFacts
from ape_contract_verify.explorer.contract_api import ExplorerService
from ape_contract_verify.explorer.store import ProxyRecord, Store, VerifiedContract
from ape_contract_verify.server import tx_page
from ape_contract_verify.server.api import create_app
from support.asgi import get
from support.service import FakeChain

pytestmark = pytest.mark.unit

HOSTILE = "<script>alert('x\")</script>"
SENDER = "0x" + "aa" * 20
TOKEN = "0x" + "bb" * 20
PROXY = "0x" + "cc" * 20
ABI = [
    {
        "type": "function",
        "name": "say",
        "stateMutability": "nonpayable",
        "inputs": [{"name": "text", "type": "string"}, {"name": "to", "type": "address"}],
        "outputs": [],
    },
    {"type": "event", "name": "Said", "inputs": [{"name": "text", "type": "string", "indexed": False}]},
]
SAY = keccak(text="say(string,address)")[:4] + encode(["string", "address"], [HOSTILE, SENDER])
SAID = "0x" + keccak(text="Said(string)").hex()


def tx(number: int, **fields) -> TransactionFacts:
    values = dict(hash="0x" + f"{number:064x}", sender=SENDER, to=TOKEN, value=0, input=b"", nonce=1, block=5)
    values.update(fields)
    return TransactionFacts(**values)


TRANSACTIONS = {
    t.hash: t
    for t in [
        tx(
            1,
            input=SAY,
            value=1_500_000_000_000_000_001,
            status=1,
            gas_used=21_000,
            gas_price=2_500_000_000,
            gas_limit=42_000,
        ),
        tx(2, to=PROXY, input=SAY, status=0, logs=(LogEntry(TOKEN, (SAID,)), LogEntry(SENDER, ()))),
        tx(3, to=None, created=TOKEN, input=b"\x60\x80", status=1, timestamp=1_700_000_000),
        tx(4, input=b"\x12\x34\x56\x78\x00", status=1),
        tx(5, block=None),
    ]
}


class Reader(FakeChain):
    def get_transaction(self, tx_hash: str) -> TransactionFacts | None:
        if tx_hash == "0x" + "ee" * 32:
            raise ChainError(f"the node refused: {HOSTILE}")
        return TRANSACTIONS.get(tx_hash)


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    store = Store(tmp_path_factory.mktemp("tx") / "explorer.sqlite")
    store.save_contract(
        VerifiedContract(
            address=TOKEN,
            contract_name=f"src/T.sol:{HOSTILE}",
            compiler_version="v0.8.26+commit.8a97fa7a",
            code_format="solidity-single-file",
            source_code="contract T {}",
            abi=json.dumps(ABI),
        )
    )
    store.finish(store.add_submission("proxy", PROXY, {}), "1", "ok", proxy=ProxyRecord(PROXY, TOKEN))
    yield store
    store.close()


@pytest.fixture(scope="module")
def app(store):
    return create_app(ExplorerService(store, Reader()))


def page(app, number: int) -> str:
    answer = get(app, "/tx/0x" + f"{number:064x}")
    assert answer.status == 200
    return answer.text


def test_units_are_exact_decimals():
    assert tx_page.units(1_500_000_000_000_000_001, 18, "ETH") == "1.500000000000000001 ETH"
    assert tx_page.units(2_500_000_000, 9, "Gwei") == "2.5 Gwei"
    assert tx_page.units(10**24, 18, "ETH") == "1,000,000 ETH"


def test_a_call_is_decoded_with_its_string_escaped(app):
    html = page(app, 1)
    assert "<code id='method'>say(string,address)</code>" in html
    assert "<th>text <small>string</small></th><td><code>&lt;script&gt;alert(&#39;x&#34;)&lt;/script&gt;</code>" in html
    assert HOSTILE not in html
    assert f"<a class='addr' id='arg1-link' href='/address/{SENDER}'>" in html
    assert "<tr><th>Value</th><td>1.500000000000000001 ETH</td></tr>" in html
    assert "<tr><th>Gas Limit &amp; Usage</th><td>42,000 | 21,000 (50.00%)</td></tr>" in html
    assert "<span id='to-name'>(&lt;script&gt;" in html  # the verified name, escaped


def test_a_call_to_a_proxy_uses_its_implementations_abi_and_names_events(store, app):
    call = tx_page.decoded_call(store, TRANSACTIONS["0x" + f"{2:064x}"])
    assert call is not None and (call.signature, call.via) == ("say(string,address)", TOKEN)
    html = page(app, 2)
    assert "<span class='badge warn' id='tx-status'>Failed</span>" in html
    assert "<small>(the implementation's ABI, at <a class='addr' id='via-link'" in html
    assert "<h2>Logs (2)</h2>" in html and "<code class='event'>Said(string)</code>" in html


def test_a_creation_names_the_created_contract(app):
    html = page(app, 3)
    assert "<span id='contract-creation'>Contract Creation</span>: <a class='addr' id='created-link'" in html
    assert "<tr><th>Timestamp</th><td>2023-11-14 22:13:20 UTC</td></tr>" in html
    assert "<th>Method</th>" not in html


def test_an_unknown_selector_and_a_pending_transaction(app):
    unknown = page(app, 4)
    assert "<code id='method'>0x12345678</code>" in unknown and "is not a function of the verified ABI" in unknown
    pending = page(app, 5)
    assert "<span class='badge warn' id='tx-status'>Pending</span>" in pending
    assert "<span id='method'>Transfer</span>" in pending and "Logs (" not in pending


def test_problems_are_pages_with_their_status_and_the_text_escaped(app):
    bad = get(app, "/tx/0x%3Cb%3E")
    assert bad.status == 400 and "txhash: <q>0x&lt;b&gt;</q> is not a transaction hash" in bad.text
    missing = get(app, "/tx/0x" + "0f" * 32)
    assert missing.status == 404 and "id='tx-not-found'" in missing.text
    down = get(app, "/tx/0x" + "ee" * 32)
    assert down.status == 502 and HOSTILE not in down.text and "the node refused: &lt;script&gt;" in down.text


def test_a_reader_without_transactions_says_so(store):
    class CodeOnly:
        def chain_id(self) -> int:
            return 1

    answer = get(create_app(ExplorerService(store, CodeOnly())), "/tx/0x" + "01" * 32)
    assert answer.status == 501 and "id='no-tx-reader'" in answer.text
