"""evm/proxies.py and EIP-2535 diamonds: a diamond delegates to many facets that no slot names, so
an address in its slot 0 (AppStorage's first field) is no Safe's master copy; a Safe proxy, which
has no loupe, is still found by its slot 0."""

from __future__ import annotations

import pytest

from ape_contract_verify.evm.proxies import FACET_ADDRESSES_SELECTOR, ProxyInfo, ProxyKind, detect_proxy, is_diamond

pytestmark = pytest.mark.unit

PROXY = "0x" + "aa" * 20
IMPL = "0x" + "1b" * 20
FACET = "0x" + "fa" * 20
PLAIN = bytes.fromhex("6080604052")

# Compiled code with its own DELEGATECALL (a diamond's fallback, or a Safe proxy's): solc's metadata.
DELEGATES = (
    bytes.fromhex("5af4fe")
    + bytes.fromhex("a2646970667358221220")
    + bytes(32)
    + bytes.fromhex("64736f6c634300081a0033")
)


def word(address: str) -> bytes:
    return bytes.fromhex(address[2:]).rjust(32, b"\0")


class Chain:
    """A chain of one contract: its code, slot 0 and its answer to facetAddresses()."""

    def __init__(self, loupe: bytes | Exception):
        self.loupe = loupe

    def get_code(self, address: str) -> bytes:
        return {PROXY: DELEGATES, IMPL: PLAIN, FACET: PLAIN}.get(address, b"")

    def get_storage_at(self, address: str, slot: int) -> bytes:
        return word(IMPL) if (address, slot) == (PROXY, 0) else bytes(32)

    def call(self, to: str, data: bytes) -> bytes:
        assert (to, data) == (PROXY, FACET_ADDRESSES_SELECTOR)
        if isinstance(self.loupe, Exception):
            raise self.loupe
        return self.loupe


def addresses(*items: str) -> bytes:
    """An ABI-encoded address[] as facetAddresses() returns it."""
    return (32).to_bytes(32, "big") + len(items).to_bytes(32, "big") + b"".join(word(a) for a in items)


def test_a_diamond_with_a_contract_address_in_slot_zero_is_no_safe_proxy():
    assert detect_proxy(Chain(addresses(PROXY, FACET)), PROXY) is None


@pytest.mark.parametrize(
    "loupe",
    [
        b"",  # a Safe with no fallback handler: its fallback returns nothing
        ValueError("execution reverted"),  # a handler without the function
        addresses(),  # no facets: no diamond
        addresses(PROXY)[:-32],  # the list shorter than its count
        (64).to_bytes(32, "big") + addresses(FACET)[32:],  # no address[] at offset 32
        (32).to_bytes(32, "big") + (1).to_bytes(32, "big") + b"\xff" * 32,  # a word that is no address
    ],
)
def test_without_a_loupe_answering_slot_zero_is_a_safe_proxy(loupe):
    assert not is_diamond(Chain(loupe), PROXY)
    assert detect_proxy(Chain(loupe), PROXY) == ProxyInfo(ProxyKind.GNOSIS_SAFE, IMPL)
