"""The ledger entry's model: each transition changes what it names, and any entry an earlier
version wrote is read and written back without losing a field."""

import pytest

from ape_contract_verify.workflow.ledger_entry import LedgerEntry, Link, TargetEnding, Upgrade

pytestmark = pytest.mark.unit

PROXY = "0xe7f1725E7734CE288F8367e1Bb143E90bb3F0512"
IMPL = "0x5FbDB2315678afecb367f032d93F642f64180aa3"


def test_recorded_then_each_target_ending_sets_the_worst_status():
    entry = LedgerEntry(PROXY, "Proxy")
    entry.recorded("ethereum:local:foundry", "contracts/Proxy.sol:Proxy")
    assert (entry.status, entry.network, entry.deployed_type) == (
        "pending",
        "ethereum:local:foundry",
        "contracts/Proxy.sol:Proxy",
    )
    entry.target_ended("local", "verified")
    assert entry.status == "verified" and entry.done
    entry.target_ended("etherscan", "failed", "bytecode differs")
    assert (entry.status, entry.reason) == ("failed", "bytecode differs") and not entry.done
    entry.target_ended("local", "verified")  # a later good ending elsewhere hides no failure
    assert entry.status == "failed"
    assert entry.done_on("local") and not entry.done_on("etherscan")
    entry.target_ended("etherscan", "already verified")
    assert entry.status == "already verified" and entry.done
    entry.target_ended("", "verified")  # entries of before targets had names
    assert "explorer" in entry.targets


def test_recorded_keeps_what_it_is_not_given():
    entry = LedgerEntry(PROXY, "Proxy", status="failed", network="ethereum:sepolia:node", deployed_type="T")
    entry.recorded()
    assert (entry.status, entry.network, entry.deployed_type) == ("pending", "ethereum:sepolia:node", "T")


def test_a_link_is_kept_per_target_and_url_in_lower_case():
    entry = LedgerEntry(PROXY, "Proxy")
    entry.linked("etherscan", IMPL, "http://127.0.0.1:1/api")
    assert entry.links == {"etherscan": Link(IMPL.lower(), "http://127.0.0.1:1/api")}
    assert entry.link_on("etherscan", "http://127.0.0.1:1/api") == IMPL.lower()
    assert entry.link_on("etherscan", "http://elsewhere/api") is None  # a fresh explorer of the same name
    assert entry.link_on("sourcify", None) is None


def test_ended_upgraded_and_admin_changed():
    entry = LedgerEntry(PROXY, "Proxy")
    entry.ended("error", "explorer down")
    entry.upgraded(IMPL.lower(), "0x" + "ab" * 32)
    entry.admin_changed(IMPL)
    document = entry.to_json()
    assert document["status"] == "error" and document["reason"] == "explorer down"
    assert document["upgraded"] == {"implementation": IMPL.lower(), "tx": "0x" + "ab" * 32}
    assert document["admin"] == IMPL
    assert LedgerEntry.from_json(document) == entry


def test_an_entry_of_every_earlier_shape_round_trips():
    # What the versions before this model wrote: free-form fields, some this version does not know.
    old = {
        "contract": "Proxy",
        "address": PROXY,
        "status": "failed",
        "reason": "no",
        "network": "ethereum:local:foundry",
        "type": "Impl",
        "targets": {"local": {"status": "verified", "reason": ""}, "etherscan": {"status": "failed", "reason": "no"}},
        "links": {"etherscan": {"implementation": IMPL.lower(), "url": None}},
        "upgraded": {"implementation": IMPL.lower(), "tx": "0x01"},
        "admin": IMPL,
        "note": {"kept": [1, 2]},  # a field of another version
        "updated": 2.0,
    }
    entry = LedgerEntry.from_json(old)
    assert entry.targets["etherscan"] == TargetEnding("failed", "no")
    assert entry.upgrade == Upgrade(IMPL.lower(), "0x01")
    assert entry.extra == {"note": {"kept": [1, 2]}}
    assert entry.to_json() == old

    bare = {"address": PROXY}  # the oldest: no contract, no status
    entry = LedgerEntry.from_json(bare)
    assert entry.name == PROXY and entry.status is None and not entry.done
    assert entry.to_json() == bare

    odd = {"address": PROXY, "status": 3, "targets": ["not", "a", "map"], "links": {"x": "y"}}
    entry = LedgerEntry.from_json(odd)  # shapes this version cannot read are kept as they were
    assert entry.status is None and entry.targets == {} and entry.links == {}
    assert entry.to_json() == odd
