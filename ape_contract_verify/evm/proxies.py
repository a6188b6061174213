"""Finding the implementation behind a proxy, for verifyproxycontract (and anyone with a ChainReader).

Patterns, in the order tried: EIP-1167 minimal proxies (the address is in the code), the EIP-1967
implementation slot, the EIP-1967 beacon slot (then `implementation()` on the beacon), the
EIP-1822 PROXIABLE slot, the OpenZeppelin legacy slot, and Gnosis Safe's `masterCopy` in slot 0
(only for code that can DELEGATECALL, since slot 0 usually holds something else).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Protocol

from ape_contract_verify.evm.bytecode import strip_metadata, to_bytes

EIP1967_IMPLEMENTATION_SLOT = 0x360894A13BA1A3210667C828492DB98DCA3E2076CC3735A920A3CA505D382BBC
EIP1967_BEACON_SLOT = 0xA3F0AD74E5423AEBFD80D3EF4346578335A9A72AEAEE59FF6CB3582B35133D50
EIP1822_PROXIABLE_SLOT = 0xC5F16F0FCC639FA48A6947836D9850F504798523BF8C9A3A87D5876CF622BCF7  # keccak256("PROXIABLE")
OZ_LEGACY_SLOT = 0x7050C9E0F4CA769C69BD3A8EF740BC37934F8E2C036E5A723FD8EE048ED3F8C3  # keccak256("org.zeppelinos.proxy.implementation")
IMPLEMENTATION_SELECTOR = bytes.fromhex("5c60da1b")  # implementation()

# EIP-1167, and its shorter-address variant some vanity deployers use (PUSH16 … PUSH20 forms).
_MINIMAL_PROXY = re.compile(
    rb"^\x36\x3d\x3d\x37\x3d\x3d\x3d\x36\x3d(?:\x73(.{20})|\x6f(.{16}))\x5a\xf4\x3d\x82\x80\x3e\x90\x3d\x91\x60[\x2b\x27]\x57\xfd\x5b\xf3$",
    re.S,
)

DELEGATECALL = 0xF4
# The start of a CBOR metadata tail (ipfs; bzzr0, bzzr1): code a contract embeds (a child's
# creation code, for `new Child()`) ends in one, and its hash bytes are no opcodes.
_EMBEDDED_METADATA = re.compile(rb"[\xa1-\xa3](?:\x64ipfs|\x65bzzr[01])\x58[\x20\x22]")


class ProxyReader(Protocol):
    """The reads proxy detection makes: a ChainReader's code, storage and calls."""

    def get_code(self, address: str) -> bytes: ...

    def get_storage_at(self, address: str, slot: int) -> bytes: ...

    def call(self, to: str, data: bytes) -> bytes: ...


class ProxyKind:
    EIP1167 = "EIP-1167"
    EIP1967 = "EIP-1967"
    EIP1967_BEACON = "EIP-1967 beacon"
    EIP1822 = "EIP-1822"
    OZ_LEGACY = "OpenZeppelin legacy"
    GNOSIS_SAFE = "Gnosis Safe"


@dataclass(frozen=True)
class ProxyInfo:
    kind: str
    implementation: str  # checksum-free 0x address, lower case
    beacon: str | None = None


def has_delegatecall(code: bytes | str) -> bool:
    """True when the code has a DELEGATECALL opcode (PUSH data and the metadata tail skipped, and
    everything from an embedded contract's metadata on)."""
    data = strip_metadata(to_bytes(code))
    embedded = _EMBEDDED_METADATA.search(data)
    data = data[: embedded.start()] if embedded else data
    index = 0
    while index < len(data):
        opcode = data[index]
        if opcode == DELEGATECALL:
            return True
        index += 1 + (opcode - 0x5F if 0x60 <= opcode <= 0x7F else 0)
    return False


def minimal_proxy_implementation(code: bytes | str) -> str | None:
    match = _MINIMAL_PROXY.match(to_bytes(code))
    if not match:
        return None
    raw = match.group(1) or match.group(2).rjust(20, b"\0")
    return "0x" + raw.hex()


def address_in_word(word: bytes) -> str | None:
    word = word.rjust(32, b"\0")[-32:]
    if any(word[:12]) or not any(word[12:]):
        return None
    return "0x" + word[12:].hex()


def detect_proxy(chain: ProxyReader, address: str) -> ProxyInfo | None:
    """The proxy pattern at `address` and its implementation, or None when none is found."""
    code = chain.get_code(address)
    if not code:
        return None
    implementation = minimal_proxy_implementation(code)
    if implementation:
        return ProxyInfo(ProxyKind.EIP1167, implementation)

    implementation = address_in_word(chain.get_storage_at(address, EIP1967_IMPLEMENTATION_SLOT))
    if implementation:
        return ProxyInfo(ProxyKind.EIP1967, implementation)

    beacon = address_in_word(chain.get_storage_at(address, EIP1967_BEACON_SLOT))
    if beacon:
        try:
            implementation = address_in_word(chain.call(beacon, IMPLEMENTATION_SELECTOR)[:32])
        except Exception:  # a beacon that reverts has no implementation to offer
            implementation = None
        if implementation:
            return ProxyInfo(ProxyKind.EIP1967_BEACON, implementation, beacon=beacon)

    for kind, slot in ((ProxyKind.EIP1822, EIP1822_PROXIABLE_SLOT), (ProxyKind.OZ_LEGACY, OZ_LEGACY_SLOT)):
        implementation = address_in_word(chain.get_storage_at(address, slot))
        if implementation:
            return ProxyInfo(kind, implementation)

    if has_delegatecall(code):
        implementation = address_in_word(chain.get_storage_at(address, 0))
        if implementation and chain.get_code(implementation):
            return ProxyInfo(ProxyKind.GNOSIS_SAFE, implementation)
    return None
