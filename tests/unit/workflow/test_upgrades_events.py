"""workflow/upgrades.py's upgrade events (test_upgrades holds the following of them): the
three EIP-1967 events decoded from raw logs in every shape a provider gives them, anything else
None, and a beacon told from a proxy by one storage read."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from eth_utils.crypto import keccak

from ape_contract_verify.evm.proxies import EIP1967_BEACON_SLOT, EIP1967_IMPLEMENTATION_SLOT
from ape_contract_verify.workflow.upgrades import (
    ADMIN,
    ADMIN_CHANGED,
    BEACON,
    BEACON_UPGRADED,
    IMPLEMENTATION,
    UPGRADED,
    UpgradeEvent,
    beacon_of,
    decode_log,
    is_beacon,
)

pytestmark = pytest.mark.unit

PROXY = "0x" + "AA" * 20
IMPL = "0x" + "1b" * 20
OTHER = "0x" + "2c" * 20


def word(address: str) -> bytes:
    return bytes.fromhex(address[2:]).rjust(32, b"\0")


def test_topics_are_the_signatures_hashes():
    assert UPGRADED == keccak(b"Upgraded(address)")
    assert BEACON_UPGRADED == keccak(b"BeaconUpgraded(address)")
    assert ADMIN_CHANGED == keccak(b"AdminChanged(address,address)")


def test_upgraded_with_an_indexed_implementation_in_hex_text():
    log = {"address": PROXY, "topics": ["0x" + UPGRADED.hex(), "0x" + word(IMPL).hex()], "data": "0x"}
    assert decode_log(log, "0xfeed") == UpgradeEvent(IMPLEMENTATION, PROXY.lower(), IMPL, "0xfeed")


def test_beacon_upgraded_in_bytes_and_from_an_object():
    log = SimpleNamespace(address=PROXY, topics=(BEACON_UPGRADED, word(OTHER)), data=b"")
    assert decode_log(log) == UpgradeEvent(BEACON, PROXY.lower(), OTHER, "")


def test_a_non_indexed_variant_carries_the_address_in_data():
    log = {"address": PROXY, "topics": [UPGRADED], "data": word(IMPL)}
    assert decode_log(log) == UpgradeEvent(IMPLEMENTATION, PROXY.lower(), IMPL)


def test_admin_changed_takes_the_new_admin_from_data_and_allows_zero():
    log = {"address": PROXY, "topics": [ADMIN_CHANGED], "data": word(IMPL) + word(OTHER)}
    assert decode_log(log) == UpgradeEvent(ADMIN, PROXY.lower(), OTHER)
    renounced = {"address": PROXY, "topics": [ADMIN_CHANGED], "data": word(IMPL) + b"\0" * 32}
    assert decode_log(renounced) == UpgradeEvent(ADMIN, PROXY.lower(), "0x" + "00" * 20)
    indexed = {"address": PROXY, "topics": [ADMIN_CHANGED, word(IMPL), word(OTHER)], "data": b""}
    assert decode_log(indexed).address == OTHER  # type: ignore[union-attr]


@pytest.mark.parametrize(
    "log",
    [
        {},
        {"address": PROXY, "topics": []},
        {"address": "", "topics": [UPGRADED, word(IMPL)]},  # no emitter
        {"address": PROXY, "topics": [keccak(b"Transfer(address,address,uint256)")], "data": b""},
        {"address": PROXY, "topics": [UPGRADED, b"\0" * 32]},  # a zero implementation
        {"address": PROXY, "topics": [UPGRADED], "data": b"\x01" * 10},  # a cut word
        {"address": PROXY, "topics": "0xnot-a-list"},
        object(),  # no fields at all (slots, no __dict__)
    ],
)
def test_what_is_no_upgrade_event(log):
    assert decode_log(log) is None


def test_a_topic_that_is_neither_bytes_nor_text_is_a_type_error():
    with pytest.raises(TypeError, match="bytes or hex text"):
        decode_log({"address": PROXY, "topics": [12345]})


class Storage:
    def __init__(self, slots: dict[tuple[str, int], bytes]):
        self.slots = slots

    def get_code(self, address: str) -> bytes:
        return b""

    def get_storage_at(self, address: str, slot: int) -> bytes:
        return self.slots.get((address, slot), b"\0" * 32)

    def call(self, to: str, data: bytes) -> bytes:
        raise AssertionError("no calls")


def test_is_beacon_and_beacon_of_read_the_eip1967_slots():
    chain = Storage({(PROXY, EIP1967_IMPLEMENTATION_SLOT): word(IMPL), (PROXY, EIP1967_BEACON_SLOT): word(OTHER)})
    assert not is_beacon(chain, PROXY)  # a proxy keeps its implementation in the slot
    assert is_beacon(chain, OTHER)  # an UpgradeableBeacon keeps it in storage of its own
    assert beacon_of(chain, PROXY) == OTHER
    assert beacon_of(chain, OTHER) is None
