"""workflow/upgrades.py: which proxies an upgrade moved (beacons included), what is relinked
where, what the ledger keeps of links and admins, and `ape verify all`'s plan per target, on a
chain whose storage is written here and a real ledger (SQLite) in a temporary folder."""

import functools
from concurrent.futures import ThreadPoolExecutor
from types import SimpleNamespace

import pytest

from ape_contract_verify.client.provider import Kind
from ape_contract_verify.evm.proxies import EIP1967_BEACON_SLOT, EIP1967_IMPLEMENTATION_SLOT, IMPLEMENTATION_SELECTOR
from ape_contract_verify.protocol.answers import Outcome
from ape_contract_verify.workflow import upgrades
from ape_contract_verify.workflow.ledger import Ledger, LedgerEntry
from ape_contract_verify.workflow.report import Report
from ape_contract_verify.workflow.upgrades import ADMIN, BEACON, IMPLEMENTATION, UpgradeEvent
from ape_contract_verify.workflow.verification import Verification

pytestmark = pytest.mark.unit

PROXY = "0x" + "a1" * 20
OTHER = "0x" + "a2" * 20
BEACON_ADDR = "0x" + "be" * 20
IMPL1 = "0x" + "11" * 20
IMPL2 = "0x" + "22" * 20
ADMIN_ADDR = "0x" + "ad" * 20
URL = "https://etherscan.example/api"


def word(address):
    return bytes(12) + bytes.fromhex(address[2:])


class Chain:
    """Code and storage as written; `forget` recorded (the memoising reader's)."""

    def __init__(self):
        self.code, self.storage, self.forgotten, self.beacon_impl = {}, {}, [], {}

    def proxy(self, address, implementation):
        self.code[address] = b"\x60\x80\xf4"
        self.storage[(address, EIP1967_IMPLEMENTATION_SLOT)] = word(implementation)

    def get_code(self, address):
        return self.code.get(address.lower(), b"")

    def get_storage_at(self, address, slot):
        return self.storage.get((address.lower(), slot), bytes(32))

    def call(self, to, data):
        assert data == IMPLEMENTATION_SELECTOR
        return word(self.beacon_impl[to.lower()])

    def forget(self, *addresses):
        self.forgotten.extend(addresses)


@pytest.fixture
def ledger(tmp_path):
    return Ledger(tmp_path / "deployments-1337-abc.sqlite")


@pytest.fixture
def pool():
    """Where `follow` runs its relinks: a pool, as the deploy queue's."""
    with ThreadPoolExecutor(max_workers=2) as executor:
        yield executor


def test_a_proxy_s_upgraded_moves_it_and_a_beacon_s_moves_its_known_proxies():
    chain = Chain()
    chain.proxy(PROXY, IMPL1)
    chain.code[OTHER] = b"\x60"
    chain.storage[(OTHER, EIP1967_BEACON_SLOT)] = word(BEACON_ADDR)
    events = [
        UpgradeEvent(IMPLEMENTATION, PROXY, IMPL2, "0x01"),
        UpgradeEvent(IMPLEMENTATION, BEACON_ADDR, IMPL2, "0x02"),  # no implementation slot: a beacon
        UpgradeEvent(ADMIN, PROXY, ADMIN_ADDR, "0x03"),  # moves nothing
    ]
    moved = upgrades.affected(events, chain, [OTHER.upper().replace("0X", "0x"), PROXY])
    assert set(moved) == {PROXY, OTHER}
    assert moved[PROXY].tx_hash == "0x01" and moved[OTHER].tx_hash == "0x02"
    # Without a beacon moved, the known proxies' beacon slots are not read.
    assert upgrades.affected([UpgradeEvent(BEACON, OTHER, BEACON_ADDR)], chain, []) == {
        OTHER: UpgradeEvent(BEACON, OTHER, BEACON_ADDR)
    }


def test_the_plan_verifies_what_is_not_done_relinks_what_moved_and_skips_what_is_current(ledger):
    chain = Chain()
    chain.proxy(PROXY, IMPL2)
    entry = {
        "address": PROXY,
        "status": "verified",
        "links": {
            "etherscan": {"implementation": IMPL1, "url": URL},
            "blockscout": {"implementation": IMPL2, "url": URL},
        },
        "targets": {
            "etherscan": {"status": "verified"},
            "blockscout": {"status": "verified"},
            "routescan": {"status": "failed"},
        },
    }
    targets = {"etherscan": URL, "blockscout": URL, "routescan": URL, "local": None}
    plan = upgrades.plan(LedgerEntry.from_json(entry), targets, chain, PROXY)
    assert plan == upgrades.Plan(
        verify={"routescan", "local"}, relink={"etherscan"}, current={"blockscout"}, implementation=IMPL2
    )


def test_without_links_or_a_readable_proxy_everything_is_verified_as_before():
    targets = {"etherscan": URL, "sourcify": URL}
    assert upgrades.plan(LedgerEntry(PROXY, status="verified"), targets, Chain(), PROXY) == upgrades.Plan(
        {"etherscan", "sourcify"}
    )
    linked_entry = LedgerEntry.from_json(
        {"address": PROXY, "links": {"etherscan": {"implementation": IMPL1, "url": URL}}}
    )
    assert upgrades.plan(linked_entry, targets, Chain(), PROXY).verify == {"etherscan", "sourcify"}  # no code: no proxy

    class Broken(Chain):
        def get_code(self, address):
            raise ConnectionError("node down")

    assert upgrades.plan(linked_entry, targets, Broken(), PROXY) == upgrades.Plan({"etherscan", "sourcify"})


def report(target, outcome=Outcome.VERIFIED, kind="proxy", implementation=IMPL2, address=PROXY):
    return Report("Box", address, outcome, target=target, kind=kind, implementation=implementation)


def test_record_links_keeps_the_proxy_link_that_ended_well_per_target(ledger):
    ledger.recorded("Box", PROXY)
    reports = [
        report("etherscan", kind="source", implementation=IMPL1),
        report("etherscan"),  # the proxy link wins over the source row
        report("blockscout", Outcome.FAILED),
        report("routescan", address=OTHER),  # another address
    ]
    upgrades.record_links(ledger, "Box", PROXY, reports, {"etherscan": URL, "blockscout": URL})
    links = ledger.entries()[0]["links"]
    assert set(links) == {"etherscan"}
    assert links["etherscan"]["implementation"].lower() == IMPL2 and links["etherscan"]["url"] == URL


def test_a_relink_with_nothing_of_its_own_to_show_is_kept_only_when_every_report_ended_well(ledger):
    ledger.recorded("Box", PROXY)
    upgrades.record_links(
        ledger,
        "Box",
        PROXY,
        [report("sourcify", kind="source", implementation=None)],
        {"sourcify": None},
        ("sourcify", IMPL2),
    )
    assert ledger.entries()[0]["links"]["sourcify"]["implementation"].lower() == IMPL2
    upgrades.record_links(
        ledger,
        "Box",
        PROXY,
        [report("sourcify", Outcome.FAILED, implementation=None)],
        {"sourcify": None},
        ("sourcify", IMPL1),
    )
    assert ledger.entries()[0]["links"]["sourcify"]["implementation"].lower() == IMPL2  # unchanged


def test_an_admin_change_is_kept_only_for_a_known_proxy(ledger):
    ledger.recorded("Box", PROXY)
    known = {e.address.lower(): e for e in ledger.deployments()}
    upgrades.record_admins(
        ledger, [UpgradeEvent(ADMIN, PROXY, ADMIN_ADDR), UpgradeEvent(ADMIN, OTHER, ADMIN_ADDR)], known
    )
    entries = ledger.entries()
    assert len(entries) == 1 and entries[0]["admin"].lower() == ADMIN_ADDR


def destination(name, relink, url=URL, sourcify=False):
    """A run's Verification on one target."""
    target = SimpleNamespace(name=name, url=url, label=f"{name} label")
    kind = Kind.SOURCIFY if sourcify else Kind.ETHERSCAN
    verification = SimpleNamespace(target=target, relink=relink, kind=kind, network="")
    verification.stamp = functools.partial(Verification.stamp, verification)  # its rows say where they were made
    return verification


def test_follow_relinks_a_moved_proxy_where_its_link_is_stale_and_records_it(ledger, pool):
    chain = Chain()
    chain.proxy(PROXY, IMPL2)
    ledger.recorded("Box", PROXY)
    ledger.change("Box", PROXY, lambda e: e.linked("blockscout", IMPL2, URL), rename=False)  # already current there
    asked = []

    def relink(proxy, implementation, name):
        asked.append((proxy, implementation, name))
        return [report("etherscan", kind="relink", implementation=implementation)]

    results = upgrades.follow(
        [UpgradeEvent(IMPLEMENTATION, PROXY, IMPL2, "0x01")],
        chain,
        ledger,
        [destination("etherscan", relink), destination("blockscout", lambda *a: pytest.fail("current: not relinked"))],
        (),
        pool.submit,
    )
    assert asked == [(PROXY, IMPL2, "Box")]
    assert [target for target, _ in results] == ["etherscan"]
    assert PROXY in chain.forgotten
    assert ledger.entries()[0]["links"]["etherscan"]["implementation"].lower() == IMPL2


def test_follow_skips_a_proxy_this_run_deployed_at_its_implementation_and_reports_a_failed_relink(ledger, pool):
    chain = Chain()
    chain.proxy(PROXY, IMPL1)
    event = [UpgradeEvent(IMPLEMENTATION, PROXY, IMPL1)]
    no_relink = [destination("etherscan", lambda *a: pytest.fail("no relink"))]
    assert upgrades.follow(event, chain, ledger, no_relink, [PROXY], pool.submit) == []

    def refused(proxy, implementation, name):
        raise RuntimeError("explorer down")

    class Failed:  # a Future whose relink raised, as the deploy queue's pool hands it back
        def __init__(self, fn, *args):
            self.fn, self.args = fn, args

        def result(self, timeout=None):
            return self.fn(*self.args)

    pooled = dict(upgrades.follow(event, chain, ledger, [destination("etherscan", refused)], (), pool.submit))
    assert [row.outcome for row in pooled["etherscan"]] == [Outcome.ERROR]  # raised in a pool's Future: a row too
    results = dict(upgrades.follow(event, chain, ledger, [destination("etherscan", refused)], (), submit=Failed))
    (row,) = results["etherscan"]
    assert (row.outcome, row.reason, row.kind, row.target_label) == (
        Outcome.ERROR,
        "explorer down",
        "relink",
        "etherscan label",
    )
    assert row.contract.startswith(PROXY)
    # Upgraded here and recorded nowhere before: recorded now, for `ape verify all`.
    assert [e["address"].lower() for e in ledger.entries()] == [PROXY]


def test_with_auto_off_the_moved_proxies_are_marked_in_the_ledger(ledger):
    chain = Chain()
    chain.proxy(PROXY, IMPL2)
    ledger.recorded("Box", PROXY, "ethereum:local")
    moved = upgrades.record_upgrades(
        [UpgradeEvent(IMPLEMENTATION, PROXY, IMPL2, "0xfeed")], chain, ledger, "ethereum:local"
    )
    assert moved == [PROXY]
    entry = ledger.entries()[0]
    assert entry["upgraded"] == {"implementation": IMPL2, "tx": "0xfeed"} and entry["status"] == "pending"
    assert upgrades.record_upgrades([], chain, ledger, "ethereum:local") == []
