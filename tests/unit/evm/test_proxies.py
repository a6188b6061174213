"""evm/proxies.py: each proxy pattern found from an in-memory chain (code, storage, calls), in the
documented order; DELEGATECALL told from PUSH data and metadata; what is no proxy said as None."""

from __future__ import annotations

import pytest
from eth_utils.crypto import keccak

from ape_contract_verify.evm.proxies import (
    EIP1822_PROXIABLE_SLOT,
    EIP1967_BEACON_SLOT,
    EIP1967_IMPLEMENTATION_SLOT,
    IMPLEMENTATION_SELECTOR,
    OZ_LEGACY_SLOT,
    ProxyInfo,
    ProxyKind,
    address_in_word,
    detect_proxy,
    has_delegatecall,
    minimal_proxy_implementation,
)

pytestmark = pytest.mark.unit

PROXY = "0x" + "aa" * 20
IMPL = "0x" + "1b" * 20
BEACON = "0x" + "bc" * 20
PLAIN = bytes.fromhex("6080604052")  # code that is no proxy: PUSH1 80 PUSH1 40 MSTORE


def word(address: str) -> bytes:
    return bytes.fromhex(address[2:]).rjust(32, b"\0")


class Chain:
    """The reads a ChainReader answers, from dicts; calls it was asked, kept."""

    def __init__(self, codes=None, slots=None, calls=None):
        self.codes: dict[str, bytes] = codes or {}
        self.slots: dict[tuple[str, int], bytes] = slots or {}
        self.calls: dict[tuple[str, bytes], bytes | Exception] = calls or {}
        self.read_slots: list[int] = []

    def get_code(self, address: str) -> bytes:
        return self.codes.get(address, b"")

    def get_storage_at(self, address: str, slot: int) -> bytes:
        self.read_slots.append(slot)
        return self.slots.get((address, slot), b"\0" * 32)

    def call(self, to: str, data: bytes) -> bytes:
        answer = self.calls.get((to, data), b"")
        if isinstance(answer, Exception):
            raise answer
        return answer


def minimal_proxy(target: bytes) -> bytes:
    return bytes.fromhex("363d3d373d3d3d363d73") + target + bytes.fromhex("5af43d82803e903d91602b57fd5bf3")


def test_the_slots_are_the_standards_hashes():
    assert EIP1967_IMPLEMENTATION_SLOT == int.from_bytes(keccak(b"eip1967.proxy.implementation"), "big") - 1
    assert EIP1967_BEACON_SLOT == int.from_bytes(keccak(b"eip1967.proxy.beacon"), "big") - 1
    assert EIP1822_PROXIABLE_SLOT == int.from_bytes(keccak(b"PROXIABLE"), "big")
    assert OZ_LEGACY_SLOT == int.from_bytes(keccak(b"org.zeppelinos.proxy.implementation"), "big")
    assert IMPLEMENTATION_SELECTOR == keccak(b"implementation()")[:4]


def test_address_in_word():
    assert address_in_word(word(IMPL)) == IMPL
    assert address_in_word(bytes.fromhex(IMPL[2:])) == IMPL  # a short answer is left-padded
    assert address_in_word(b"\0" * 32) is None  # empty slot
    assert address_in_word(b"\x01" + b"\0" * 11 + bytes.fromhex(IMPL[2:])) is None  # not an address
    assert address_in_word(b"") is None


def test_minimal_proxy_and_its_short_address_variant():
    target = bytes.fromhex(IMPL[2:])
    assert minimal_proxy_implementation(minimal_proxy(target)) == IMPL
    assert minimal_proxy_implementation("0x" + minimal_proxy(target).hex()) == IMPL
    short = bytes.fromhex("363d3d373d3d3d363d6f") + b"\x11" * 16 + bytes.fromhex("5af43d82803e903d91602757fd5bf3")
    assert minimal_proxy_implementation(short) == "0x" + "00" * 4 + "11" * 16
    assert minimal_proxy_implementation(minimal_proxy(target) + b"\x00") is None  # trailing byte
    assert minimal_proxy_implementation(PLAIN) is None


def test_delegatecall_is_an_opcode_not_push_data_or_metadata():
    assert has_delegatecall(bytes.fromhex("5af4"))  # GAS DELEGATECALL
    assert not has_delegatecall(bytes.fromhex("61f400"))  # PUSH2 0xf400: data
    assert not has_delegatecall(bytes.fromhex("7f" + "f4" * 32))  # PUSH32 of 0xf4s
    # An embedded contract (creation code of `new Child()`) from its metadata tail on is not ours.
    embedded = bytes.fromhex("00") + bytes.fromhex("a264697066735822") + b"\xf4" * 34
    assert not has_delegatecall(embedded)
    assert has_delegatecall("0x5af4")


def test_no_code_is_no_proxy():
    assert detect_proxy(Chain(), PROXY) is None


def test_eip1167_from_the_code_alone():
    chain = Chain(codes={PROXY: minimal_proxy(bytes.fromhex(IMPL[2:]))})
    assert detect_proxy(chain, PROXY) == ProxyInfo(ProxyKind.EIP1167, IMPL)
    assert chain.read_slots == []


def test_eip1967_slot_wins_over_later_ones():
    chain = Chain(
        codes={PROXY: PLAIN},
        slots={(PROXY, EIP1967_IMPLEMENTATION_SLOT): word(IMPL), (PROXY, OZ_LEGACY_SLOT): word(BEACON)},
    )
    assert detect_proxy(chain, PROXY) == ProxyInfo(ProxyKind.EIP1967, IMPL)


def test_beacon_asks_the_beacon_for_its_implementation():
    chain = Chain(
        codes={PROXY: PLAIN},
        slots={(PROXY, EIP1967_BEACON_SLOT): word(BEACON)},
        calls={(BEACON, IMPLEMENTATION_SELECTOR): word(IMPL)},
    )
    assert detect_proxy(chain, PROXY) == ProxyInfo(ProxyKind.EIP1967_BEACON, IMPL, beacon=BEACON)


def test_a_reverting_beacon_falls_through_to_the_other_slots():
    chain = Chain(
        codes={PROXY: PLAIN},
        slots={(PROXY, EIP1967_BEACON_SLOT): word(BEACON), (PROXY, EIP1822_PROXIABLE_SLOT): word(IMPL)},
        calls={(BEACON, IMPLEMENTATION_SELECTOR): RuntimeError("execution reverted")},
    )
    assert detect_proxy(chain, PROXY) == ProxyInfo(ProxyKind.EIP1822, IMPL)


def test_oz_legacy_slot():
    chain = Chain(codes={PROXY: PLAIN}, slots={(PROXY, OZ_LEGACY_SLOT): word(IMPL)})
    assert detect_proxy(chain, PROXY) == ProxyInfo(ProxyKind.OZ_LEGACY, IMPL)


def test_gnosis_safe_needs_delegatecall_and_code_at_slot_zero():
    safe = bytes.fromhex("5af4")
    chain = Chain(codes={PROXY: safe, IMPL: PLAIN}, slots={(PROXY, 0): word(IMPL)})
    assert detect_proxy(chain, PROXY) == ProxyInfo(ProxyKind.GNOSIS_SAFE, IMPL)
    # slot 0 holds an address without code (an owner, say): no proxy
    assert detect_proxy(Chain(codes={PROXY: safe}, slots={(PROXY, 0): word(IMPL)}), PROXY) is None
    # no DELEGATECALL: slot 0 is not read as a master copy at all
    plain = Chain(codes={PROXY: PLAIN, IMPL: PLAIN}, slots={(PROXY, 0): word(IMPL)})
    assert detect_proxy(plain, PROXY) is None and 0 not in plain.read_slots
