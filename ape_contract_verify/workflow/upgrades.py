"""Upgrades followed: a proxy moved on chain is linked again, to its new implementation, everywhere.

An Etherscan-style explorer keeps a proxy's link (verifyproxycontract) until it is submitted again,
so after an upgrade its "Read as Proxy" reads the old implementation; Sourcify reads the slot
itself. The ledger keeps, per proxy and target, the implementation it was last linked to
(`links`); whenever the chain says otherwise, the new implementation is verified if it is not yet
and the proxy is linked again with `expectedimplementation` set to it.

Two ways an upgrade is found:
- in `ape run`: the run's receipts' upgrade events, decoded from raw logs (`decode_log`), read in
  the deploy queue's one walk of the run's logs (`run_logs.py`); a beacon's `Upgraded` moves every
  proxy of that beacon the project knows (ledger and run);
- in `ape verify all` (`plan`): each recorded proxy's implementation on chain (one storage read)
  against its links, so a proxy moved by a Safe, a timelock or another tool is linked again, and
  one that did not move costs no explorer call.

EIP-1967 names three events, and OpenZeppelin's proxies (ERC1967Proxy for UUPS, transparent,
beacon), its UpgradeableBeacon and the example's own proxies emit them:
- `Upgraded(address indexed implementation)`: from a proxy (its implementation slot changed) or
  from a beacon (every proxy of that beacon moved);
- `BeaconUpgraded(address indexed beacon)`: from a beacon proxy given another beacon;
- `AdminChanged(address previousAdmin, address newAdmin)`: a transparent proxy's admin; the
  implementation, so the explorer's link, stays.
Which emitters are proxies and which beacons is the chain's to say (`is_beacon`), not the event's.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ape_contract_verify.evm.proxies import (
    EIP1967_BEACON_SLOT,
    EIP1967_IMPLEMENTATION_SLOT,
    ProxyReader,
    address_in_word,
    detect_proxy,
)
from ape_contract_verify.logs import get_logger
from ape_contract_verify.protocol.answers import Outcome
from ape_contract_verify.workflow.report import Report, proxy_row_label

if TYPE_CHECKING:
    from concurrent.futures import Future

    from ape_contract_verify.evm.reads import ChainReader, MemoizingChain
    from ape_contract_verify.workflow.ledger import Ledger, LedgerEntry
    from ape_contract_verify.workflow.verification import Verification

logger = get_logger()


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


# `submit(fn, *args)`: runs `fn(*args)` somewhere (an executor's `submit`), a `Future` of its reports.
Submit = Callable[..., "Future[list[Report]]"]


def affected(events: Iterable[UpgradeEvent], chain: ChainReader, known: Iterable[str]) -> dict[str, UpgradeEvent]:
    """proxy (lower case) -> the last event that moved it. A beacon's `Upgraded` moves every
    proxy in `known` whose EIP-1967 beacon slot names it (read only when a beacon moved)."""
    moved: dict[str, UpgradeEvent] = {}
    beacons: dict[str, UpgradeEvent] = {}
    for event in events:
        if event.kind == BEACON:
            moved[event.emitter] = event
        elif event.kind == IMPLEMENTATION:
            try:
                beacon = is_beacon(chain, event.emitter)
            except Exception as err:
                logger.debug("contract_verify: %s: %s", event.emitter, err)
                continue
            (beacons if beacon else moved)[event.emitter] = event
    if beacons:
        for address in dict.fromkeys(a.lower() for a in known):
            try:
                its_beacon = beacon_of(chain, address)
            except Exception:
                continue
            if its_beacon in beacons:
                moved.setdefault(address, beacons[its_beacon])
    return moved


def implementation(chain: ChainReader, address: str) -> str | None:
    info = detect_proxy(chain, address)
    return info.implementation.lower() if info is not None else None


def record_links(
    ledger: Ledger,
    name: str,
    address: str,
    reports: list[Report],
    urls: dict[str, str | None],
    relinked: tuple[str, str] | None = None,
) -> None:
    """Keep, per target, the implementation `address` was linked to (a proxy link that ended
    well), or handled with (Sourcify: its own source, verified); `relinked` (target,
    implementation) when a relink there ended well with nothing of the proxy's own to show. `urls`:
    each target name's URL (None: the embedded explorer), kept with the link."""
    mine = [r for r in reports if r.address.lower() == address.lower() and r.implementation]
    # Per target, its proxy link's report wins over its source's (all Sourcify has).
    chosen = {r.target: r for r in sorted(mine, key=lambda r: r.kind in ("proxy", "relink"))}
    links = {target: r.implementation for target, r in chosen.items() if r.ok and r.implementation}
    if relinked is not None and all(r.ok for r in reports):
        links[relinked[0]] = relinked[1]
    for target, implementation in links.items():
        ledger.change(name, address, lambda e: e.linked(target, implementation, urls.get(target)), rename=False)


def record_admins(ledger: Ledger, events: Iterable[UpgradeEvent], known: dict[str, LedgerEntry]) -> None:
    """AdminChanged moves no implementation, so no link: the ledger keeps the admin of the proxies it knows."""
    for event in events:
        if event.kind == ADMIN and event.emitter in known:
            entry = known[event.emitter]
            ledger.change(entry.name, entry.address, lambda e: e.admin_changed(event.address))


def follow(
    events: list[UpgradeEvent],
    chain: MemoizingChain,
    ledger: Ledger,
    destinations: list[Verification],
    deployed: Iterable[str],
    submit: Submit,
) -> list[tuple[str, list[Report]]]:
    """The run's upgrades, followed on each target (the run's `Verification`s): [(target name, reports)].

    `chain` is the run's memoising reader: what it read at deploy time is what the deploy's own
    verification linked (`deployed`: this run's addresses); it forgets the moved proxies and their
    beacons before reading them again. `submit(fn, *args)` runs a relink (the deploy queue's pool)."""
    entries = {e.address.lower(): e for e in ledger.deployments()}
    deployed = {a.lower() for a in deployed}
    record_admins(ledger, events, entries)
    jobs: list[tuple[str, str, str, Verification, Future[list[Report]]]] = []  # proxy, now, name, target, relink
    for proxy, event in affected(events, chain, [*entries, *deployed]).items():
        before = implementation(chain, proxy) if proxy in deployed else None
        info = detect_proxy(chain, proxy)
        chain.forget(proxy, *([info.beacon] if info is not None and info.beacon else []), event.emitter)
        now = implementation(chain, proxy)
        entry = entries.get(proxy)
        name = entry.name if entry is not None else proxy
        if now is None or (proxy in deployed and before == now):
            continue  # the deploy's own verification linked it to this implementation
        if entry is None:  # upgraded here, recorded nowhere: `ape verify all` knows it from now on
            ledger.recorded(name, proxy)
        stale = [d for d in destinations if entry is None or entry.link_on(d.target.name, d.target.url) != now]
        jobs += [(proxy, now, name, d, submit(d.relink, proxy, now, name)) for d in stale]
    results: dict[str, list[Report]] = {}
    for proxy, now, name, destination, job in jobs:
        target = destination.target
        try:
            reports = job.result()
        except Exception as err:
            label = proxy_row_label(name, "proxy re-link")
            reports = destination.stamp([Report(label, proxy, Outcome.ERROR, str(err), kind="relink")])
        relinked = None if destination.kind.links_proxies else (target.name, now)
        try:
            record_links(ledger, name, proxy, reports, {target.name: target.url}, relinked)
        except Exception as err:  # the link stands; the ledger says why it is stale
            logger.warning("contract_verify: %s", err)
        results.setdefault(target.name, []).extend(reports)
    return list(results.items())


def record_upgrades(events: list[UpgradeEvent], chain: ChainReader, ledger: Ledger, network: str) -> list[str]:
    """With auto off: each proxy the run moved, marked in the ledger (its new implementation and the
    transaction), so `ape verify all` links it again. Returns the proxies."""
    entries = {e.address.lower(): e for e in ledger.deployments()}
    record_admins(ledger, events, entries)
    moved = affected(events, chain, entries)
    for proxy, event in moved.items():
        now = implementation(chain, proxy)
        if now is None:
            continue
        entry = entries.get(proxy)
        name, address = (entry.name, entry.address) if entry is not None else (proxy, proxy)
        ledger.change(name, address, lambda e: e.upgraded(now, event.tx_hash, network))
    return list(moved)


@dataclass
class Plan:
    """What `ape verify all` does with one recorded address, per target name."""

    verify: set[str]  # as before: ask, verify what is not, link a proxy
    relink: set[str] = field(default_factory=set)  # a proxy that moved since its link there
    current: set[str] = field(default_factory=set)  # a proxy linked to what the chain holds: no call
    implementation: str | None = None  # on chain, for a linked proxy


def plan(entry: LedgerEntry | None, targets: dict[str, str | None], chain: ChainReader, address: str) -> Plan:
    """`targets`: name -> URL. An entry with no links (not a proxy, or never linked) is verified
    everywhere, as before; a linked proxy is read on chain (one storage read, `detect_proxy`) and
    costs explorer calls only where a target has not ended well or its link is stale. An embedded
    explorer (no URL) is new in each process: it gets everything, as before."""
    names = set(targets)
    if entry is None or not entry.links:
        return Plan(names)
    try:
        now = implementation(chain, address)
    except Exception as err:  # cannot tell: verify as before
        logger.debug("contract_verify: %s: %s", address, err)
        return Plan(names)
    if now is None:
        return Plan(names)
    # No link of ours at that URL (a fresh explorer of the same name): as before, whatever the status says.
    verify = {
        name
        for name in names
        if targets[name] is None or not entry.done_on(name) or entry.link_on(name, targets[name]) is None
    }
    relink = {name for name in names - verify if entry.link_on(name, targets[name]) != now}
    return Plan(verify, relink, names - verify - relink, now)
