"""Finding the implementation behind a proxy, for verifyproxycontract (and anyone with a ChainReader).

Patterns, in the order tried: forwarders with the address in their code (EIP-1167, with or without
data after it, and any other `PUSH20 address, GAS, DELEGATECALL` in code no compiler made), the
EIP-1967 implementation slot, the EIP-1967 beacon slot (then `implementation()` on the beacon),
the EIP-1822 PROXIABLE slot, the OpenZeppelin legacy slot, and Gnosis Safe's `masterCopy` in
slot 0 (only for code that can DELEGATECALL, since slot 0 usually holds something else, and not
for an EIP-2535 diamond: its AppStorage starts at slot 0, and it routes to many facets, not one).

A proxy is known by what its code does, not by a template: one whose code carries no compiler's
metadata and delegates was stamped out by a factory (Solady's LibClone, Vyper's forwarders, …),
so no source compiles to it and only its link to the implementation can be verified (`stamped`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Protocol

from ape_contract_verify.evm.bytecode import instructions, metadata_segments, strip_metadata, to_bytes

EIP1967_IMPLEMENTATION_SLOT = 0x360894A13BA1A3210667C828492DB98DCA3E2076CC3735A920A3CA505D382BBC
EIP1967_BEACON_SLOT = 0xA3F0AD74E5423AEBFD80D3EF4346578335A9A72AEAEE59FF6CB3582B35133D50
EIP1822_PROXIABLE_SLOT = 0xC5F16F0FCC639FA48A6947836D9850F504798523BF8C9A3A87D5876CF622BCF7  # keccak256("PROXIABLE")
OZ_LEGACY_SLOT = 0x7050C9E0F4CA769C69BD3A8EF740BC37934F8E2C036E5A723FD8EE048ED3F8C3  # keccak256("org.zeppelinos.proxy.implementation")
IMPLEMENTATION_SELECTOR = bytes.fromhex("5c60da1b")  # implementation()
FACET_ADDRESSES_SELECTOR = bytes.fromhex("52ef6b2c")  # EIP-2535 loupe's facetAddresses()

# EIP-1167's start, before the PUSH20 of its address (PUSH16 in the shorter-address variant some
# vanity deployers use); data may follow it (clones with immutable arguments).
_EIP1167_START = bytes.fromhex("363d3d373d3d3d363d")
GAS = 0x5A
_PUSH16, _PUSH20 = 0x6F, 0x73

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
    FORWARDER = "minimal proxy"  # another template with the address in its code
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
    stamped: bool = False  # its own code is a factory's template, not compiled: only the link is verified

    @property
    def label(self) -> str:
        """How a row names a stamped proxy, whose code has no contract name."""
        if self.kind == ProxyKind.EIP1167:
            return "EIP-1167 clone"
        return self.kind if self.kind == ProxyKind.FORWARDER else f"{self.kind} minimal proxy"


def stamped_reason(proxy: ProxyInfo) -> str:
    """What a stamped proxy is, where no link is submitted (Sourcify resolves proxies itself)."""
    return (
        f"{proxy.label} (a factory's template: no compiler metadata in its code): no source of its own; "
        f"the explorer resolves its implementation {proxy.implementation} itself"
    )


def is_stamped(code: bytes | str) -> bool:
    """Code no compiler made that delegates: no metadata anywhere in it, and a DELEGATECALL."""
    data = to_bytes(code)
    return bool(data) and not metadata_segments(data) and has_delegatecall(data)


def has_delegatecall(code: bytes | str) -> bool:
    """True when the code has a DELEGATECALL opcode (PUSH data and the metadata tail skipped, and
    everything from an embedded contract's metadata on)."""
    data = strip_metadata(to_bytes(code))
    embedded = _EMBEDDED_METADATA.search(data)
    data = data[: embedded.start()] if embedded else data
    return any(op == DELEGATECALL for op, _ in instructions(data))


def address_in_word(word: bytes) -> str | None:
    word = word.rjust(32, b"\0")[-32:]
    if any(word[:12]) or not any(word[12:]):
        return None
    return "0x" + word[12:].hex()


def is_diamond(chain: ProxyReader, address: str) -> bool:
    """True when the contract answers EIP-2535's loupe: `facetAddresses()` is one or more addresses."""
    try:
        answer = chain.call(address, FACET_ADDRESSES_SELECTOR)
    except Exception:  # no loupe (a revert, a node's refusal): no diamond
        return False
    if len(answer) < 96 or int.from_bytes(answer[:32], "big") != 32:
        return False
    count = int.from_bytes(answer[32:64], "big")
    words = [answer[64 + 32 * i : 96 + 32 * i] for i in range(min(count, (len(answer) - 64) // 32))]
    return 0 < count == len(words) and all(address_in_word(word) for word in words)


def detect_proxy(chain: ProxyReader, address: str) -> ProxyInfo | None:
    """The proxy pattern at `address` and its implementation, or None when none is found."""
    code = chain.get_code(address)
    if not code:
        return None
    stamped = is_stamped(code)
    # A template forwarding every call to an address in its code, EIP-1167's among them:
    # `PUSHn address, GAS, DELEGATECALL` (n of 16 to 20: a vanity address's leading zeros dropped).
    # Only in stamped code: a compiled contract's PUSH20 before a delegate call is a constant of its
    # source, not a template's.
    ops = list(instructions(code)) if stamped else []
    for (op, pushed), (gas, _), (call, _) in zip(ops, ops[1:], ops[2:]):
        if _PUSH16 <= op <= _PUSH20 and pushed is not None and (gas, call) == (GAS, DELEGATECALL):
            kind = ProxyKind.EIP1167 if code.startswith(_EIP1167_START) else ProxyKind.FORWARDER
            return ProxyInfo(kind, "0x" + pushed.to_bytes(20, "big").hex(), stamped=True)

    implementation = address_in_word(chain.get_storage_at(address, EIP1967_IMPLEMENTATION_SLOT))
    if implementation:
        return ProxyInfo(ProxyKind.EIP1967, implementation, stamped=stamped)

    beacon = address_in_word(chain.get_storage_at(address, EIP1967_BEACON_SLOT))
    if beacon:
        try:
            implementation = address_in_word(chain.call(beacon, IMPLEMENTATION_SELECTOR)[:32])
        except Exception:  # a beacon that reverts has no implementation to offer
            implementation = None
        if implementation:
            return ProxyInfo(ProxyKind.EIP1967_BEACON, implementation, beacon=beacon, stamped=stamped)

    for kind, slot in ((ProxyKind.EIP1822, EIP1822_PROXIABLE_SLOT), (ProxyKind.OZ_LEGACY, OZ_LEGACY_SLOT)):
        implementation = address_in_word(chain.get_storage_at(address, slot))
        if implementation:
            return ProxyInfo(kind, implementation, stamped=stamped)

    if has_delegatecall(code):
        implementation = address_in_word(chain.get_storage_at(address, 0))
        if implementation and chain.get_code(implementation) and not is_diamond(chain, address):
            return ProxyInfo(ProxyKind.GNOSIS_SAFE, implementation, stamped=stamped)
    return None
