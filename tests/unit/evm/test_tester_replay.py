"""evm/tester_replay.py: the py-evm chain found behind an in-process eth-tester (and nothing
behind anything else), and a block replayed in memory: the transaction's own CREATE, a factory's
CREATE and CREATE2 children told apart, depth first, the real chain left as it was.

The chain is eth-tester's in-memory py-evm (web3's EthereumTesterProvider): no process, no node.
The factory is hand-assembled: its constructor runs CREATE and CREATE2 (salt 1) of empty code."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from eth_utils.crypto import keccak

from ape_contract_verify.evm import tester_replay
from ape_contract_verify.evm.chain import IN_PROCESS_SOURCE
from ape_contract_verify.evm.reads import created_address
from ape_contract_verify.evm.tester_replay import ReplayFailed, create_frames

# Imported by module: pytest would collect a bare `tester_chain` as a test.
chain_of = tester_replay.tester_chain

pytestmark = pytest.mark.unit

# CREATE(0, 0, 0); POP; CREATE2(0, 0, 0, salt=1); POP; STOP
FACTORY_CODE = "0x" + "600060006000f050" + "6001600060006000f550" + "00"


@pytest.fixture(scope="module")
def tester():
    from web3 import Web3
    from web3.providers.eth_tester import EthereumTesterProvider

    web3 = Web3(EthereumTesterProvider())
    sender = web3.eth.accounts[0]
    tx_hash = web3.eth.send_transaction({"from": sender, "data": FACTORY_CODE, "gas": 500_000})
    receipt = web3.eth.get_transaction_receipt(tx_hash)
    assert receipt["status"] == 1
    return SimpleNamespace(web3=web3, sender=sender.lower(), tx_hash="0x" + bytes(tx_hash).hex(), receipt=receipt)


def test_no_chain_behind_other_providers():
    assert chain_of(SimpleNamespace()) is None  # type: ignore[arg-type]  # no web3 at all
    assert chain_of(SimpleNamespace(web3=None)) is None  # type: ignore[arg-type]
    http = SimpleNamespace(provider=SimpleNamespace(endpoint_uri="http://127.0.0.1:8545"))
    assert chain_of(SimpleNamespace(web3=http)) is None  # type: ignore[arg-type]

    class Disconnected:
        @property
        def web3(self):
            raise RuntimeError("not connected")

    assert chain_of(Disconnected()) is None  # type: ignore[arg-type]


def test_the_chain_behind_an_in_process_tester(tester):
    chain = chain_of(SimpleNamespace(web3=tester.web3))  # type: ignore[arg-type]
    assert chain is not None and chain.chain_id == tester.web3.eth.chain_id


def test_a_block_s_creates_depth_first_with_their_kind(tester):
    chain = chain_of(SimpleNamespace(web3=tester.web3))  # type: ignore[arg-type]
    assert chain is not None
    factory = tester.receipt["contractAddress"].lower()
    frames = create_frames(chain, tester.receipt["blockNumber"])
    assert {(tx, sender) for tx, sender, _ in frames} == {(tester.tx_hash, tester.sender)}
    shapes = [(f["type"], f["from"], f["to"]) for _, _, f in frames]
    create2 = "0x" + keccak(b"\xff" + bytes.fromhex(factory[2:]) + (1).to_bytes(32, "big") + keccak(b""))[12:].hex()
    assert shapes == [
        ("CREATE", tester.sender, factory),  # the transaction's own deployment
        ("CREATE", factory, created_address(factory, 1)),  # a contract's nonce starts at 1
        ("CREATE2", factory, create2),
    ]
    assert frames[0][2]["input"] == FACTORY_CODE and frames[1][2]["input"] == "0x"


def test_the_replay_leaves_the_real_chain_as_it_was(tester):
    web3 = tester.web3
    head, root = web3.eth.block_number, web3.eth.get_block("latest")["stateRoot"]
    chain = chain_of(SimpleNamespace(web3=web3))  # type: ignore[arg-type]
    first = create_frames(chain, tester.receipt["blockNumber"])  # type: ignore[arg-type]
    again = create_frames(chain, tester.receipt["blockNumber"])  # type: ignore[arg-type]
    assert first == again
    assert web3.eth.block_number == head and web3.eth.get_block("latest")["stateRoot"] == root


def test_a_block_without_transactions_and_one_not_in_the_chain(tester):
    chain = chain_of(SimpleNamespace(web3=tester.web3))  # type: ignore[arg-type]
    assert create_frames(chain, 0) == []  # type: ignore[arg-type]  # genesis
    with pytest.raises(ReplayFailed, match="block 9999 is not in the chain: HeaderNotFound"):
        create_frames(chain, 9999)  # type: ignore[arg-type]


def test_a_replay_that_breaks_is_said_in_words():
    class Broken:
        def get_canonical_block_by_number(self, number):
            return SimpleNamespace(transactions=[object()], header=SimpleNamespace(parent_hash=b"\0" * 32))

        def get_block_header_by_hash(self, block_hash):
            raise KeyError("missing trie node")

    with pytest.raises(ReplayFailed) as info:
        create_frames(Broken(), 3)  # type: ignore[arg-type]
    assert str(info.value).startswith("block 3: KeyError") and "missing trie node" in str(info.value)
    assert IN_PROCESS_SOURCE == "in-process replay"
