"""derive/derive.py's chain reads: the runtime code and creation input of an address, from the chain reader
or an explorer's record, with what was tried when neither could say."""

from types import SimpleNamespace

import pytest

from ape_contract_verify.derive.derive import OnChain, chain_reader_or_provider, read_chain, tx_hash_of
from ape_contract_verify.evm.reads import Creation, MemoizingChain, attempts_of

pytestmark = pytest.mark.unit

A = "0x" + "ab" * 20
B = "0x" + "cd" * 20
TX = "0x" + "12" * 32


class Reader:
    def __init__(self, code=b"\x60\x80", creation=None, attempts=None):
        self.code, self.creation, self.attempts = code, creation, attempts
        self.searched = []

    def get_code(self, address):
        return self.code

    def find_creation(self, address):
        self.searched.append(address)
        return self.creation

    def creation_attempts(self, address):
        return list(self.attempts or [])

    def chain_id(self):
        return 1337

    def get_storage_at(self, address, slot):
        return slot.to_bytes(32, "big")

    def call(self, to, data):
        return data[::-1]

    def get_transaction(self, tx_hash):
        return None


def test_a_creation_found_on_chain_is_taken_with_its_source():
    reader = Reader(creation=Creation(TX, b"\x60\x01", factory=False, source=""))
    state = read_chain(A, reader, creation_record=lambda a: pytest.fail("the record is not asked"))
    assert state == OnChain(b"\x60\x80", Creation(TX, b"\x60\x01", factory=False, source="transaction"), [])
    factory = read_chain(A, Reader(creation=Creation(TX, b"\x01", factory=True, source=""))).creation
    assert factory.source == "trace" and factory.factory
    replay = read_chain(A, Reader(creation=Creation(TX, b"\x01", source="fork replay"))).creation
    assert replay.source == "fork replay"


def test_no_code_means_no_creation_search_and_nothing_tried():
    reader = Reader(code=b"", attempts=["x"])
    state = read_chain(A, reader, creation_record=lambda a: pytest.fail("not asked"))
    assert state == OnChain(b"", None) and reader.searched == []


def test_the_explorer_s_record_fills_in_and_the_reader_s_attempts_are_kept():
    record = SimpleNamespace(
        input=b"\x60\x02", tx_hash=None, factory=True, source="etherscan's creation record", note=""
    )
    state = read_chain(A, Reader(attempts=["the node's traces (refused)"]), creation_record=lambda a: record)
    creation = state.creation
    assert (creation.input, creation.factory, creation.source) == (b"\x60\x02", True, "etherscan's creation record")
    assert state.tried == ["the node's traces (refused)"]


def test_a_record_without_input_adds_its_note_and_no_record_says_none():
    empty = SimpleNamespace(
        input=None, tx_hash=None, factory=False, source="s", note="etherscan's creation record (no record of it)"
    )
    state = read_chain(A, Reader(attempts=["traces"]), creation_record=lambda a: empty)
    assert state.creation is None
    assert state.tried == ["traces", "etherscan's creation record (no record of it)"]
    assert read_chain(A, Reader(), creation_record=lambda a: None).tried == ["the explorer's record (none)"]
    assert read_chain(A, Reader()).tried == []


def test_a_reader_that_does_not_say_what_it_tried_gives_nothing():
    assert attempts_of(SimpleNamespace(), A) == []
    assert attempts_of(SimpleNamespace(creation_attempts="not callable"), A) == []
    assert attempts_of(Reader(attempts=("a", "b")), A) == ["a", "b"]


def test_a_known_creation_answers_for_its_one_address_and_defers_the_rest():
    """How derive's pre-check is told a creation the explorer recorded."""
    inner = Reader(creation=Creation(TX, b"\xaa"), attempts=["inner"])
    known = MemoizingChain(inner)
    known.remember_creation(
        A.upper().replace("0X", "0x"), Creation(TX, b"\x01\x02", factory=True, source="explorer record")
    )
    mine = known.find_creation(A)
    assert (mine.input, mine.tx_hash, mine.factory, mine.source) == (b"\x01\x02", TX, True, "explorer record")
    assert known.find_creation(B).input == b"\xaa" and inner.searched == [B]
    assert known.creation_attempts(A) == ["inner"]
    assert (known.chain_id(), known.get_code(B), known.call(B, b"\x01\x02")) == (1337, b"\x60\x80", b"\x02\x01")
    assert known.get_storage_at(A, 1)[-1] == 1 and known.get_transaction(TX) is None


@pytest.mark.parametrize(
    "value, expected",
    [(TX, TX), (bytes.fromhex("12" * 32), TX), ("0x12", None), (None, None), (b"", None), ("12" * 33, None)],
)
def test_a_transaction_hash_is_66_characters_with_0x(value, expected):
    assert tx_hash_of(value) == expected


def test_a_given_reader_is_used_as_is():
    reader = Reader()
    assert chain_reader_or_provider(reader) is reader
