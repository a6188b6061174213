"""Decoding the events that say a proxy's implementation moved from raw logs.

EIP-1967 names three, and OpenZeppelin's proxies (ERC1967Proxy for UUPS, transparent, beacon),
its UpgradeableBeacon and the example's own proxies emit them:
- `Upgraded(address indexed implementation)`: from a proxy (its implementation slot changed) or
  from a beacon (every proxy of that beacon moved);
- `BeaconUpgraded(address indexed beacon)`: from a beacon proxy given another beacon;
- `AdminChanged(address previousAdmin, address newAdmin)`: a transparent proxy's admin; the
  implementation, so the explorer's link, stays.
Which emitters are proxies and which beacons is the chain's to say (`is_beacon`), not the event's.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from ape_contract_verify.evm.proxies import (
    EIP1967_BEACON_SLOT,
    EIP1967_IMPLEMENTATION_SLOT,
    ProxyReader,
    address_in_word,
)

# keccak256 of each signature.
UPGRADED = bytes.fromhex("bc7cd75a20ee27fd9adebab32041f755214dbc6bffa90cc0225b39da2e5c2d3b")
BEACON_UPGRADED = bytes.fromhex("1cf3b03a6cf19fa2baba4df148e9dcabedea7f8a5c07840e207e5c089be95d3e")
ADMIN_CHANGED = bytes.fromhex("7e644d79422f17c01e4894b5f4f588d331ebfa28653d42ae832dc59e38c9798f")

IMPLEMENTATION = "implementation"  # Upgraded
BEACON = "beacon"  # BeaconUpgraded
ADMIN = "admin"  # AdminChanged


@dataclass(frozen=True)
class UpgradeEvent:
    kind: str  # IMPLEMENTATION, BEACON or ADMIN
    emitter: str  # lower-case 0x address: the proxy, or (Upgraded) maybe a beacon
    address: str  # lower-case: the new implementation, beacon or admin
    tx_hash: str = ""


def log_bytes(value: object) -> bytes:
    """A log's topic or data as bytes: hex text, HexBytes, bytes, or a sequence of ints."""
    if isinstance(value, str):
        return bytes.fromhex(value.removeprefix("0x"))
    if isinstance(value, (bytes, bytearray, memoryview, list, tuple)):
        return bytes(value)
    if not value:
        return b""
    raise TypeError(f"bytes or hex text was expected, not {type(value).__name__}")


def log_fields(log: object) -> Mapping[str, object]:
    """A raw log's fields: a mapping's items (Ape's dicts, web3's AttributeDict), else an object's
    attributes; none for an object without them."""
    return log if isinstance(log, Mapping) else getattr(log, "__dict__", {})


def decode_log(log: object, tx_hash: str = "") -> UpgradeEvent | None:
    """The upgrade event in one raw log (a dict or an object with `address`, `topics`, `data`),
    or None when it is none of the three or does not have their shape."""
    raw = log_fields(log)
    topics = raw.get("topics") or []
    if not isinstance(topics, (list, tuple)):
        return None
    topics = [log_bytes(t) for t in topics]
    emitter = str(raw.get("address") or "").lower()
    if not topics or not emitter:
        return None
    data = log_bytes(raw.get("data"))
    if topics[0] in (UPGRADED, BEACON_UPGRADED):
        # Indexed in every known emitter; a non-indexed variant carries it in data.
        word = topics[1] if len(topics) > 1 else data[:32]
        kind = IMPLEMENTATION if topics[0] == UPGRADED else BEACON
    elif topics[0] == ADMIN_CHANGED:
        words = topics[1:3] if len(topics) >= 3 else [data[i : i + 32] for i in (0, 32)]
        word = words[1] if len(words) > 1 else b""
        kind = ADMIN
    else:
        return None
    address = address_in_word(word) if len(word) == 32 else None
    if address is None and kind != ADMIN:  # an admin may be renounced to zero
        return None
    return UpgradeEvent(kind, emitter, address or "0x" + "00" * 20, tx_hash)


def is_beacon(chain: ProxyReader, address: str) -> bool:
    """Whether an `Upgraded` emitter is a beacon rather than a proxy: a proxy keeps the
    implementation in its EIP-1967 slot (one storage read), a beacon in storage of its own."""
    return address_in_word(chain.get_storage_at(address, EIP1967_IMPLEMENTATION_SLOT)) is None


def beacon_of(chain: ProxyReader, address: str) -> str | None:
    """The beacon in a proxy's EIP-1967 beacon slot (lower case), or None."""
    return address_in_word(chain.get_storage_at(address, EIP1967_BEACON_SLOT))
