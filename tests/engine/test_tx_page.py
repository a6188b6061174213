"""The explorer's transaction page, `/tx/<hash>`, on a real anvil and a real explorer (real engine):
a creation, a call decoded through a verified ABI (and through a proxy's implementation), a call
to an unverified address, a reverted transaction, bad and unknown hashes, a node that is down, a
reader without transactions; and the readers' `get_transaction` (JSON-RPC, an Ape provider, the
memoising wrapper) giving the same facts."""

from __future__ import annotations

import re
import time

import pytest
import requests

from ape_contract_verify.engine.compilers import CompileCache, compile_input, with_output_selection
from ape_contract_verify.evm.chain import ApeProviderChain, JsonRpcChain
from ape_contract_verify.evm.reads import MemoizingChain, TransactionFacts
from ape_contract_verify.server.runner import start_embedded
from support.service import SOLC_0826, Anvil, FakeChain, encode, free_port, json_form, poll, post

NOTE = """// SPDX-License-Identifier: MIT
pragma solidity 0.8.26;

contract Note {
    address public owner;
    string public text;
    event Noted(address indexed by, string text, uint256 n);

    constructor() { owner = msg.sender; }

    function note(string calldata t, uint256 n) external {
        text = t;
        emit Noted(msg.sender, t, n);
    }

    function guarded(uint256 n) external {
        require(msg.sender == owner, "not owner");
        text = "guarded";
        emit Noted(msg.sender, text, n);
    }
}
"""
INPUT = {
    "language": "Solidity",
    "sources": {"Note.sol": {"content": NOTE}},
    "settings": {"optimizer": {"enabled": True, "runs": 200}},
}
HOSTILE = "<script>alert(1)</script>"


def selector(signature: str) -> bytes:
    from eth_utils import keccak

    return keccak(text=signature)[:4]


def send(anvil: Anvil, data: bytes, to: str | None = None, sender: str | None = None, value: int = 0) -> str:
    """A transaction that may revert (Anvil.transact refuses those): its hash, once mined."""
    tx = {"from": sender or anvil.accounts[0], "data": "0x" + data.hex(), "gas": hex(500_000), "value": hex(value)}
    if to:
        tx["to"] = to
    tx_hash = anvil.rpc("eth_sendTransaction", tx)
    for _ in range(200):  # anvil mines at once; the bound is a safety net
        if anvil.rpc("eth_getTransactionReceipt", tx_hash):
            return tx_hash
        time.sleep(0.05)
    raise AssertionError(f"no receipt for {tx_hash}")


def clone_code(implementation: str) -> bytes:
    """EIP-1167 creation code for a minimal proxy of `implementation`."""
    runtime = (
        bytes.fromhex("363d3d373d3d3d363d73")
        + bytes.fromhex(implementation[2:])
        + bytes.fromhex("5af43d82803e903d91602b57fd5bf3")
    )
    return bytes.fromhex("3d602d80600a3d3981f3") + runtime


@pytest.fixture(scope="module")
def world():
    anvil = Anvil()
    explorer = start_embedded(JsonRpcChain(anvil.url))
    try:
        output = compile_input(SOLC_0826, with_output_selection(INPUT, "Note.sol", "Note"), cache=CompileCache())
        creation = bytes.fromhex(output["contracts"]["Note.sol"]["Note"]["evm"]["bytecode"]["object"])
        create_hash = send(anvil, creation)
        note = anvil.rpc("eth_getTransactionReceipt", create_hash)["contractAddress"].lower()
        clone = anvil.deploy(clone_code(note)).lower()
        guid = post(explorer.base_url, json_form(note, INPUT, "Note.sol:Note"))["result"]
        assert poll(explorer.base_url, guid)["result"] == "Pass - Verified"
        guid = post(explorer.base_url, {"module": "contract", "action": "verifyproxycontract", "address": clone})[
            "result"
        ]
        assert poll(explorer.base_url, guid, action="checkproxyverification")["status"] == "1"
        hashes = {
            "create": create_hash,
            "call": send(
                anvil, selector("note(string,uint256)") + encode(["string", "uint256"], [HOSTILE, 7]), to=note
            ),
            "proxied": send(
                anvil, selector("note(string,uint256)") + encode(["string", "uint256"], ["via clone", 8]), to=clone
            ),
            "failed": send(
                anvil, selector("guarded(uint256)") + encode(["uint256"], [1]), to=note, sender=anvil.accounts[1]
            ),
            "unverified": send(
                anvil, bytes.fromhex("deadbeef0102"), to=anvil.accounts[2], value=1_500_000_000_000_000_000
            ),
        }
        yield {"anvil": anvil, "explorer": explorer, "note": note, "clone": clone, "tx": hashes}
    finally:
        explorer.stop()
        anvil.stop()


def page(world, tx_hash: str) -> requests.Response:
    return requests.get(f"{world['explorer'].url}/tx/{tx_hash}", timeout=30)


def row(html: str, label: str) -> str:
    found = re.search(rf"<tr><th>{re.escape(label)}</th><td>(.*?)</td></tr>", html, re.S)
    assert found, f"no {label} row"
    return found.group(1)


def test_contract_creation_names_the_created_contract(world):
    response = page(world, world["tx"]["create"])
    assert response.status_code == 200, response.text
    html = response.text
    assert "<h1>Transaction Details</h1>" in html and "Success" in row(html, "Status")
    to = row(html, "To")
    assert "Contract Creation" in to and f"href='/address/{world['note']}'" in to
    assert "<span id='created-name'>Note</span>" in to  # verified here: its name
    assert f"href='/address/{world['anvil'].accounts[0].lower()}'" in row(html, "From")
    assert "id='method'" not in html
    assert row(html, "Value") == "0 ETH" and row(html, "Nonce") == "0"
    assert re.fullmatch(r"\d+", row(html, "Block")) and "UTC" in row(html, "Timestamp")
    assert "ETH" in row(html, "Transaction Fee") and "Gwei" in row(html, "Gas Price")


def test_a_call_to_a_verified_contract_is_decoded_and_hostile_text_escaped(world):
    html = page(world, world["tx"]["call"]).text
    assert "<code id='method'>note(string,uint256)</code>" in row(html, "Method")
    decoded = html  # the arguments' table is nested in the Input Data row
    assert "<th>t <small>string</small></th><td><code>&lt;script&gt;alert(1)&lt;/script&gt;</code></td>" in decoded
    assert "<th>n <small>uint256</small></th><td><code>7</code></td>" in decoded
    assert f"href='/address/{world['note']}'" in row(html, "To") and "(Note)" in row(html, "To")
    assert "<h2>Logs (1)</h2>" in html and "Noted(address,string,uint256)" in html
    assert HOSTILE not in html and html.count("<script") == 1  # only the app's own explorer.js


def test_a_call_through_a_verified_proxy_uses_the_implementations_abi(world):
    html = page(world, world["tx"]["proxied"]).text
    method = row(html, "Method")
    assert (
        "note(string,uint256)" in method and f"href='/address/{world['note']}'" in method
    )  # "the implementation's ABI, at"
    assert "<code>via clone</code>" in html
    assert "Noted(address,string,uint256)" in html  # the clone emitted it: named through the implementation


def test_a_call_to_an_unverified_address_shows_the_raw_input(world):
    html = page(world, world["tx"]["unverified"]).text
    assert "<code id='method'>0xdeadbeef</code>" in row(html, "Method")
    assert "id='decoded-input'" not in html and "id='not-decoded'" not in html
    assert "<pre class='hex' id='input-data'>0xdeadbeef0102</pre>" in html
    assert row(html, "Value") == "1.5 ETH" and "<h2>Logs (0)</h2>" in html


def test_a_reverted_transaction_is_failed(world):
    html = page(world, world["tx"]["failed"]).text
    assert "<span class='badge warn' id='tx-status'>Failed</span>" in html
    assert "guarded(uint256)" in row(html, "Method") and "<h2>Logs (0)</h2>" in html
    assert "Success" not in html


@pytest.mark.parametrize(
    "bad", ["0x1234", "0x" + "zz" * 32, "ab" * 32, "0x" + "ab" * 33, "%3Cscript%3Ealert(1)%3C%5Cscript%3E"]
)
def test_a_malformed_hash_is_a_400_naming_txhash(world, bad):
    response = page(world, bad)
    assert response.status_code == 400
    assert "txhash:" in response.text and "0x followed by 64 hex digits" in response.text
    assert "<script>alert" not in response.text


def test_an_unknown_hash_is_404_not_found(world):
    response = page(world, "0x" + "ab" * 32)
    assert response.status_code == 404 and "Transaction not found" in response.text
    upper = page(world, world["tx"]["call"].upper().replace("0X", "0x"))  # any case of hex is the same hash
    assert upper.status_code == 200 and "note(string,uint256)" in upper.text


def test_the_address_page_links_its_creation_transaction(world):
    html = requests.get(f"{world['explorer'].url}/address/{world['note']}", timeout=30).text
    assert f"id='creation-tx-link' href='/tx/{world['tx']['create'].lower()}'" in html


def test_a_node_that_is_down_is_a_gateway_failure_and_a_reader_without_transactions_says_so():
    down = start_embedded(JsonRpcChain(f"http://127.0.0.1:{free_port()}", timeout=5))
    without = start_embedded(FakeChain())  # a reader written before get_transaction
    try:
        response = requests.get(f"{down.url}/tx/0x{'ab' * 32}", timeout=30)
        assert response.status_code == 502 and "The node did not answer" in response.text
        assert "Traceback" not in response.text
        response = requests.get(f"{without.url}/tx/0x{'ab' * 32}", timeout=30)
        assert response.status_code == 501 and "cannot read transactions" in response.text
    finally:
        down.stop()
        without.stop()


def test_json_rpc_and_ape_provider_readers_agree(world):
    import ape

    anvil = world["anvil"]
    rpc = JsonRpcChain(anvil.url)
    provider = ape.networks.ethereum.local.get_provider("node", provider_settings={"uri": anvil.url})
    provider.connect()
    try:
        ape_chain = ApeProviderChain(provider)
        for name, tx_hash in world["tx"].items():
            facts = rpc.get_transaction(tx_hash)
            assert isinstance(facts, TransactionFacts) and facts == ape_chain.get_transaction(tx_hash), name
        assert rpc.get_transaction("0x" + "ab" * 32) is None and ape_chain.get_transaction("0x" + "ab" * 32) is None
    finally:
        provider.disconnect()
    create = rpc.get_transaction(world["tx"]["create"])
    assert create.to is None and create.created == world["note"] and create.status == 1 and create.block is not None
    assert create.timestamp and create.fee == create.gas_used * create.gas_price > 0 and create.gas_limit == 500_000
    call = rpc.get_transaction(world["tx"]["call"])
    assert call.to == world["note"] and call.created is None and call.input[:4] == selector("note(string,uint256)")
    (log,) = call.logs
    assert log.address == world["note"] and len(log.topics) == 2
    assert rpc.get_transaction(world["tx"]["failed"]).status == 0
    assert rpc.get_transaction(world["tx"]["unverified"]).value == 1_500_000_000_000_000_000


def test_the_embedded_explorer_on_apes_in_process_chain_shows_a_transaction():
    """`ethereum:local:test` (eth-tester, no JSON-RPC endpoint): the chain `ape run`'s embedded explorer reads."""
    import ape

    with ape.networks.ethereum.local.use_provider("test") as provider:
        sender, receiver = ape.accounts.test_accounts[0], ape.accounts.test_accounts[1]
        receipt = sender.transfer(receiver, 12345, data=b"\xde\xad")
        explorer = start_embedded(ApeProviderChain(provider))
        try:
            response = requests.get(f"{explorer.url}/tx/{receipt.txn_hash}", timeout=30)
            missing = requests.get(f"{explorer.url}/tx/0x{'ab' * 32}", timeout=30)
        finally:
            explorer.stop()
    assert response.status_code == 200, response.text
    assert row(response.text, "Value") == "0.000000000000012345 ETH" and "Success" in row(response.text, "Status")
    assert f"href='/address/{str(receiver.address).lower()}'" in row(response.text, "To")
    assert "<pre class='hex' id='input-data'>0xdead</pre>" in response.text
    assert missing.status_code == 404 and "Transaction not found" in missing.text


class CountingChain(FakeChain):
    def __init__(self, answers: dict):
        super().__init__()
        self.answers, self.asked = answers, []

    def get_transaction(self, tx_hash: str):
        self.asked.append(tx_hash)
        return self.answers.get(tx_hash)


def test_memoising_chain_keeps_only_mined_transactions():
    mined = TransactionFacts(hash="0x01", sender="0x02", to=None, value=0, input=b"", nonce=0, block=3, status=1)
    pending = TransactionFacts(hash="0x03", sender="0x02", to=None, value=0, input=b"", nonce=1)
    base = CountingChain({"0x01": mined, "0x03": pending})
    chain = MemoizingChain(base)
    for _ in range(2):
        assert chain.get_transaction("0x01") is mined
        assert chain.get_transaction("0x03") is pending
        assert chain.get_transaction("0x04") is None
    assert base.asked == ["0x01", "0x03", "0x04", "0x03", "0x04"]
    with pytest.raises(NotImplementedError, match="cannot read transactions"):
        MemoizingChain(FakeChain()).get_transaction("0x01")


def test_getcontractcreation_gives_the_creation_input_as_etherscan_v2_does(world):
    """Etherscan API V2's `creationBytecode`: the creating transaction's input, init code and
    constructor arguments, beside its hash and sender."""
    from support.service import get

    anvil, note = world["anvil"], world["note"]
    (entry,) = get(world["explorer"].base_url, action="getcontractcreation", contractaddresses=note)["result"]
    tx = anvil.rpc("eth_getTransactionByHash", world["tx"]["create"])
    assert entry["txHash"] == world["tx"]["create"] and entry["contractCreator"].lower() == tx["from"].lower()
    assert entry["creationBytecode"] == tx["input"] and entry["contractFactory"] == ""
