"""evm/reads.py's wrappers: MemoizingChain reads each thing once (addresses case-blind), keeps mined
transactions only, forgets storage on demand, copes with readers that lack the optional methods;
SerializedChain passes calls through one at a time."""

from __future__ import annotations

import threading
import time

import pytest

from ape_contract_verify.evm.reads import Creation, MemoizingChain, SerializedChain, TransactionFacts

pytestmark = pytest.mark.unit

A = "0x" + "ab" * 20
MINED = TransactionFacts(hash="0x01", sender=A, to=None, value=0, input=b"", nonce=0, block=7)
PENDING = TransactionFacts(hash="0x02", sender=A, to=None, value=0, input=b"", nonce=1)


class Counting:
    """A reader that counts what it is asked."""

    def __init__(self):
        self.asked: list[tuple] = []

    def __repr__(self) -> str:
        return "Counting()"

    def chain_id(self) -> int:
        self.asked.append(("chain_id",))
        return 1337

    def get_code(self, address: str) -> bytes:
        self.asked.append(("code", address))
        return b"\x60\x00"

    def get_storage_at(self, address: str, slot: int) -> bytes:
        self.asked.append(("slot", address, slot))
        return len(self.asked).to_bytes(32, "big")

    def call(self, to: str, data: bytes) -> bytes:
        self.asked.append(("call", to, data))
        return b"\x01"

    def find_creation(self, address: str) -> Creation | None:
        self.asked.append(("creation", address))
        return None

    def get_transaction(self, tx_hash: str) -> TransactionFacts | None:
        self.asked.append(("tx", tx_hash))
        return {"0x01": MINED, "0x02": PENDING}.get(tx_hash.lower())

    def creation_attempts(self, address: str) -> list[str]:
        return ["the node's traces"]

    def close(self) -> None:
        self.asked.append(("close",))


class Bare:
    """A reader written before get_transaction, that does not search."""

    def get_code(self, address: str) -> bytes:
        return b""


def test_each_read_goes_to_the_base_once_whatever_the_address_case():
    base = Counting()
    chain = MemoizingChain(base)
    for _ in range(3):
        assert chain.chain_id() == 1337
        assert chain.get_code(A) == chain.get_code(A.upper().replace("0X", "0x")) == b"\x60\x00"
        assert chain.get_storage_at(A, 1) == chain.get_storage_at(A, 1)
        assert chain.call(A, bytearray(b"\x12")) == b"\x01"
        assert chain.find_creation(A) is None  # None is remembered too
    kinds = [entry[0] for entry in base.asked]
    assert sorted(kinds) == ["call", "chain_id", "code", "creation", "slot"]
    chain.get_storage_at(A, 2)
    assert base.asked[-1] == ("slot", A, 2)  # another slot is another read
    assert repr(chain) == "MemoizingChain(Counting())"


def test_forget_drops_storage_and_calls_of_those_addresses_only():
    base = Counting()
    chain = MemoizingChain(base)
    other = "0x" + "cd" * 20
    first = chain.get_storage_at(A, 0)
    chain.get_storage_at(other, 0)
    chain.call(A, b"\x12")
    chain.get_code(A)
    chain.forget(A.upper().replace("0X", "0x"))
    asked = len(base.asked)
    assert chain.get_storage_at(A, 0) != first  # read again: the base answers anew
    chain.call(A, b"\x12")
    chain.get_code(A)
    chain.get_storage_at(other, 0)
    assert [entry[0] for entry in base.asked[asked:]] == ["slot", "call"]


def test_remember_creation_spares_the_search():
    base = Counting()
    chain = MemoizingChain(base)
    creation = Creation(tx_hash="0x01", input=b"\x60", deployer=A)
    chain.remember_creation(A.upper().replace("0X", "0x"), creation)
    assert chain.find_creation(A) is creation
    assert not base.asked


def test_mined_transactions_are_kept_pending_and_unknown_ones_asked_again():
    base = Counting()
    chain = MemoizingChain(base)
    for _ in range(2):
        assert chain.get_transaction("0x01") is MINED
        assert chain.get_transaction("0x02") is PENDING
        assert chain.get_transaction("0x03") is None
    assert [entry[1] for entry in base.asked] == ["0x01", "0x02", "0x03", "0x02", "0x03"]


def test_a_reader_without_the_optional_methods():
    chain = MemoizingChain(Bare())  # type: ignore[arg-type]
    assert chain.creation_attempts(A) == []
    chain.close()  # nothing to close: no error
    with pytest.raises(NotImplementedError, match="cannot read transactions"):
        chain.get_transaction("0x01")
    searching = MemoizingChain(Counting())
    assert searching.creation_attempts(A) == ["the node's traces"]
    searching.close()
    assert searching.base.asked == [("close",)]  # type: ignore[attr-defined]


def test_serialized_chain_passes_calls_and_attributes_through():
    base = Counting()
    base.safe_url = "http://127.0.0.1:8545"  # type: ignore[attr-defined]
    chain = SerializedChain(base)
    assert chain.get_code(A) == b"\x60\x00" and chain.chain_id() == 1337
    assert chain.safe_url == "http://127.0.0.1:8545"
    assert repr(chain) == "SerializedChain(Counting())"
    with pytest.raises(AttributeError):
        chain.no_such_method  # noqa: B018


class Slow(Counting):
    def __init__(self):
        super().__init__()
        self.inside = 0
        self.most = 0
        self.guard = threading.Lock()
        self.outer: SerializedChain | None = None

    def get_code(self, address: str) -> bytes:
        with self.guard:
            self.inside += 1
            self.most = max(self.most, self.inside)
        time.sleep(0.01)
        with self.guard:
            self.inside -= 1
        return b""

    def call(self, to: str, data: bytes) -> bytes:
        assert self.outer is not None
        return self.outer.get_code(to)  # a call that makes a further call through the wrapper


def test_serialized_chain_lets_one_call_through_at_a_time():
    base = Slow()
    chain = SerializedChain(base)
    base.outer = chain
    threads = [threading.Thread(target=chain.get_code, args=(A,)) for _ in range(6)]
    threads += [threading.Thread(target=chain.call, args=(A, b""))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=10)
    assert not any(thread.is_alive() for thread in threads)
    assert base.most == 1
