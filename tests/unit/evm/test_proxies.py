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
    is_stamped,
    stamped_reason,
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
    def found(code: bytes) -> ProxyInfo | None:
        return detect_proxy(Chain(codes={PROXY: code}), PROXY)

    target = bytes.fromhex(IMPL[2:])
    assert found(minimal_proxy(target)) == ProxyInfo(ProxyKind.EIP1167, IMPL, stamped=True)
    short = bytes.fromhex("363d3d373d3d3d363d6f") + b"\x11" * 16 + bytes.fromhex("5af43d82803e903d91602757fd5bf3")
    assert found(short) == ProxyInfo(ProxyKind.EIP1167, "0x" + "00" * 4 + "11" * 16, stamped=True)
    # Data after it (a clone with immutable arguments, Solady's `clone(implementation, args)`).
    assert found(minimal_proxy(target) + b"\x00\x01args") == ProxyInfo(ProxyKind.EIP1167, IMPL, stamped=True)
    # Not at the start: another template forwarding to the address.
    assert found(b"\x00" + minimal_proxy(target)) == ProxyInfo(ProxyKind.FORWARDER, IMPL, stamped=True)
    assert found(PLAIN) is None


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
    assert detect_proxy(chain, PROXY) == ProxyInfo(ProxyKind.EIP1167, IMPL, stamped=True)
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
    # A compiled Safe proxy: its own DELEGATECALL, and solc's metadata (no factory's template).
    safe = (
        bytes.fromhex("5af4fe")
        + bytes.fromhex("a2646970667358221220")
        + bytes(32)
        + bytes.fromhex("64736f6c634300081a0033")
    )
    chain = Chain(codes={PROXY: safe, IMPL: PLAIN}, slots={(PROXY, 0): word(IMPL)})
    assert detect_proxy(chain, PROXY) == ProxyInfo(ProxyKind.GNOSIS_SAFE, IMPL)
    # slot 0 holds an address without code (an owner, say): no proxy
    assert detect_proxy(Chain(codes={PROXY: safe}, slots={(PROXY, 0): word(IMPL)}), PROXY) is None
    # no DELEGATECALL: slot 0 is not read as a master copy at all
    plain = Chain(codes={PROXY: PLAIN, IMPL: PLAIN}, slots={(PROXY, 0): word(IMPL)})
    assert detect_proxy(plain, PROXY) is None and 0 not in plain.read_slots


# Factories' templates, their bytes as their authors document them (Solady's LibClone, Vyper 0.2's
# create_forwarder_to): each forwards to an address in its code, and carries no metadata.
TARGET = IMPL[2:]
TEMPLATES = {
    "Solady clone (44 bytes)": "3d3d3d3d363d3d37363d73" + TARGET + "5af43d3d93803e602a57fd5bf3",
    "Solady clone_PUSH0": "5f5f365f5f37365f73" + TARGET + "5af43d5f5f3e6029573d5ffd5b3d5ff3",
    "Vyper 0.2 forwarder": "366000600037611000600036600073" + TARGET + "5af4602c57600080fd5b6110006000f3",
}
SOLADY_ERC1967 = (  # reads the EIP-1967 slot: 61 bytes
    "363d3d373d3d363d7f360894a13ba1a3210667c828492db98dca3e2076cc3735a920a3ca505d382bbc545af43d6000803e6038573d6000fd5b3d6000f3"
)
METADATA = bytes.fromhex("a2646970667358221220") + bytes(32) + bytes.fromhex("64736f6c634300081a0033")


@pytest.mark.parametrize("name", sorted(TEMPLATES))
def test_a_template_that_forwards_to_an_address_in_its_code(name):
    code = bytes.fromhex(TEMPLATES[name])
    assert is_stamped(code)
    chain = Chain(codes={PROXY: code})
    assert detect_proxy(chain, PROXY) == ProxyInfo(ProxyKind.FORWARDER, IMPL, stamped=True)
    assert chain.read_slots == []


def test_a_clone_with_immutable_arguments_is_an_eip1167_clone():
    code = minimal_proxy(bytes.fromhex(TARGET)) + bytes.fromhex("00" * 12 + "ab" * 20)
    info = detect_proxy(Chain(codes={PROXY: code}), PROXY)
    assert info == ProxyInfo(ProxyKind.EIP1167, IMPL, stamped=True) and info.label == "EIP-1167 clone"


def test_a_slot_template_is_stamped_and_a_compiled_proxy_is_not():
    slots = {(PROXY, EIP1967_IMPLEMENTATION_SLOT): word(IMPL)}
    solady = detect_proxy(Chain(codes={PROXY: bytes.fromhex(SOLADY_ERC1967)}, slots=slots), PROXY)
    assert solady == ProxyInfo(ProxyKind.EIP1967, IMPL, stamped=True)
    assert solady.label == "EIP-1967 minimal proxy" and IMPL in stamped_reason(solady)
    compiled = bytes.fromhex(SOLADY_ERC1967) + METADATA  # the same instructions, from a compiler
    assert detect_proxy(Chain(codes={PROXY: compiled}, slots=slots), PROXY) == ProxyInfo(ProxyKind.EIP1967, IMPL)
    beacon = detect_proxy(
        Chain(
            codes={PROXY: bytes.fromhex(SOLADY_ERC1967)},
            slots={(PROXY, EIP1967_BEACON_SLOT): word(BEACON)},
            calls={(BEACON, IMPLEMENTATION_SELECTOR): word(IMPL)},
        ),
        PROXY,
    )
    assert beacon == ProxyInfo(ProxyKind.EIP1967_BEACON, IMPL, beacon=BEACON, stamped=True)


def test_a_compiled_contracts_address_constant_is_no_forwarder():
    """`PUSH20 address, GAS, DELEGATECALL` in compiled code is the source's constant: that contract
    has a source to verify, so it is not read as a template."""
    code = bytes.fromhex("73" + TARGET + "5af4") + METADATA
    assert detect_proxy(Chain(codes={PROXY: code}), PROXY) is None and not is_stamped(code)
    no_call = bytes.fromhex("73" + TARGET + "5a50")  # no DELEGATECALL after it
    assert detect_proxy(Chain(codes={PROXY: no_call}), PROXY) is None
    assert not is_stamped(PLAIN) and not is_stamped(b"")
