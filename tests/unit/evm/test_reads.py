"""evm/reads.py: a node's answers read (JSON-RPC hex text and web3's ints and bytes alike) and a
transaction read from canned JSON-RPC answers (the block asked only when no timestamp came)."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from eth_utils.address import is_checksum_address
from hexbytes import HexBytes

from ape_contract_verify.evm.reads import (
    CallReverted,
    ChainError,
    ChainReader,
    LogEntry,
    TransactionFacts,
    ape_address,
    hex_hash,
    node_list,
    node_object,
    provider_web3,
    read_transaction,
    transaction_facts,
)
from ape_contract_verify.exceptions import ContractVerifyError

pytestmark = pytest.mark.unit

SENDER = "0x6ac7ea33f8831ea9dcc53393aaa88b25a785dbf0"
CREATED = "0xcd234a471b72ba2f1ccf0a70fcaba648a5eecd8d"
TX_HASH = "0x" + "ab" * 32
TOPIC = "0x" + "bc7cd75a20ee27fd9adebab32041f755214dbc6bffa90cc0225b39da2e5c2d3b"

# A creation as anvil answers eth_getTransactionByHash and eth_getTransactionReceipt.
TX = {
    "hash": TX_HASH,
    "from": SENDER,
    "to": None,
    "value": "0x0",
    "input": "0x6080",
    "nonce": "0x0",
    "blockNumber": "0x5",
    "blockHash": "0x" + "0b" * 32,
    "gas": "0x5208",
    "gasPrice": "0x3b9aca00",
}
RECEIPT = {
    "status": "0x1",
    "gasUsed": "0x5208",
    "effectiveGasPrice": "0x77359400",
    "contractAddress": CREATED,
    "logs": [{"address": CREATED.upper().replace("0X", "0x"), "topics": [TOPIC], "data": "0x2a"}],
}


def test_errors_are_the_plugin_s_and_a_revert_keeps_its_data():
    assert issubclass(ChainError, ContractVerifyError) and issubclass(CallReverted, ChainError)
    reverted = CallReverted("reverted", b"\x08\xc3\x79\xa0")
    assert reverted.data == b"\x08\xc3\x79\xa0" and str(reverted) == "reverted"
    assert CallReverted("no data").data == b""


def test_node_object_and_node_list_take_only_their_shape():
    assert node_object({"a": 1}) == {"a": 1}
    assert node_object(None) == {} and node_object([1]) == {} and node_object("0x") == {}
    assert node_list([1, 2]) == [1, 2] and node_list((1,)) == [1]
    assert node_list(None) == [] and node_list({"a": 1}) == [] and node_list("ab") == []


def test_hex_hash_and_ape_address():
    assert hex_hash(HexBytes(TX_HASH)) == hex_hash(TX_HASH) == TX_HASH
    checksummed = ape_address(SENDER)
    assert is_checksum_address(checksummed) and checksummed.lower() == SENDER and checksummed != SENDER
    assert ape_address(SENDER.upper().replace("0X", "0x")) == checksummed
    with pytest.raises(ValueError):
        ape_address("0x1234")


def test_provider_web3_is_none_for_a_provider_without_one():
    assert provider_web3(SimpleNamespace()) is None  # type: ignore[arg-type]
    web3 = object()
    assert provider_web3(SimpleNamespace(web3=web3)) is web3  # type: ignore[arg-type]


def test_transaction_facts_from_json_rpc_text():
    facts = transaction_facts(TX, RECEIPT, timestamp="0x65")
    assert facts == TransactionFacts(
        hash=TX_HASH,
        sender=SENDER,
        to=None,
        value=0,
        input=b"\x60\x80",
        nonce=0,
        block=5,
        timestamp=0x65,
        created=CREATED,
        status=1,
        gas_used=21000,
        gas_price=2_000_000_000,  # the receipt's effective price, not the transaction's
        gas_limit=21000,
        logs=(LogEntry(CREATED, (TOPIC,), b"\x2a"),),
    )
    assert facts.fee == 21000 * 2_000_000_000


def test_transaction_facts_from_web3_s_ints_and_bytes():
    tx = {
        "hash": HexBytes(TX_HASH),
        "from": SENDER,
        "to": "0x" + "00" * 20,  # a creation spelt with the zero address
        "value": 10**18,
        "data": HexBytes("0x6080"),  # eth-tester's key
        "nonce": 3,
        "blockNumber": None,
        "gasPrice": 7,
    }
    pending = transaction_facts(tx, None)
    assert (pending.to, pending.value, pending.input, pending.nonce) == ("0x" + "00" * 20, 10**18, b"\x60\x80", 3)
    assert pending.block is None and pending.status is None and pending.fee is None and pending.logs == ()
    mined = transaction_facts(tx, {"contractAddress": CREATED, "gasUsed": 100, "status": 0, "blockTimestamp": 9})
    assert mined.to is None and mined.created == CREATED  # the zero address means a creation here
    assert (mined.status, mined.gas_price, mined.fee, mined.timestamp) == (0, 7, 700, 9)


@pytest.mark.parametrize(
    "receipt, error",
    [
        ({"logs": "0x"}, "a list was expected"),
        ({"logs": ["0x"]}, "a log was expected"),
    ],
)
def test_unexpected_receipts_are_type_errors(receipt, error):
    with pytest.raises(TypeError, match=error):
        transaction_facts(TX, receipt)


class Node:
    """Canned JSON-RPC results by method; the requests made, in order."""

    def __init__(self, answers: dict[str, object]):
        self.answers = answers
        self.asked: list[tuple[str, list[object]]] = []

    def __call__(self, method: str, params: list[object]) -> object:
        self.asked.append((method, params))
        return self.answers.get(method)


def test_read_transaction_asks_the_block_for_the_time_only_when_needed():
    node = Node(
        {
            "eth_getTransactionByHash": TX,
            "eth_getTransactionReceipt": RECEIPT,
            "eth_getBlockByHash": {"timestamp": "0x64"},
        }
    )
    facts = read_transaction(node, TX_HASH)
    assert facts is not None and facts.timestamp == 100 and facts.created == CREATED
    assert [m for m, _ in node.asked] == ["eth_getTransactionByHash", "eth_getTransactionReceipt", "eth_getBlockByHash"]
    assert node.asked[2][1] == [TX["blockHash"], False]
    # anvil puts blockTimestamp in the answers: no block read
    anvil = Node({"eth_getTransactionByHash": TX | {"blockTimestamp": "0x1"}, "eth_getTransactionReceipt": RECEIPT})
    assert read_transaction(anvil, TX_HASH).timestamp == 1  # type: ignore[union-attr]
    assert len(anvil.asked) == 2
    # no block hash: the block by number
    by_number = Node({"eth_getTransactionByHash": TX | {"blockHash": None}, "eth_getBlockByNumber": {"timestamp": 7}})
    assert read_transaction(by_number, TX_HASH).timestamp == 7  # type: ignore[union-attr]
    assert by_number.asked[-1] == ("eth_getBlockByNumber", ["0x5", False])


def test_read_transaction_unknown_pending_and_malformed():
    assert read_transaction(Node({}), TX_HASH) is None
    pending = Node({"eth_getTransactionByHash": TX | {"blockNumber": None}})
    facts = read_transaction(pending, TX_HASH)
    assert facts is not None and facts.block is None and len(pending.asked) == 1  # no receipt asked
    with pytest.raises(TypeError, match="an object was expected"):
        read_transaction(Node({"eth_getTransactionByHash": ["not", "an", "object"]}), TX_HASH)


def test_chain_reader_is_a_runtime_protocol():
    class Reader:
        def chain_id(self):
            return 1

        def get_code(self, address):
            return b""

        def get_storage_at(self, address, slot):
            return b""

        def call(self, to, data):
            return b""

        def find_creation(self, address):
            return None

        def get_transaction(self, tx_hash):
            return None

    assert isinstance(Reader(), ChainReader)
    assert not isinstance(object(), ChainReader)
