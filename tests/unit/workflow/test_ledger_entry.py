"""The ledger entry's model: each transition changes what it names, and its JSON reads back whole."""

import pytest

from ape_contract_verify.workflow.ledger import LedgerEntry, Link, TargetEnding, Upgrade

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


def test_a_link_counts_only_at_the_url_it_was_made_and_done_reads_the_target_s_own_status():
    entry = LedgerEntry.from_json(
        {
            "address": PROXY,
            "status": "failed",
            "links": {"etherscan": {"implementation": IMPL.lower(), "url": "https://etherscan.example/api"}},
            "targets": {"etherscan": {"status": "verified"}},
        }
    )
    assert entry.link_on("etherscan", "https://etherscan.example/api") == IMPL.lower()
    assert entry.link_on("etherscan", "http://127.0.0.1:5000/api") is None
    assert entry.link_on("blockscout", "https://etherscan.example/api") is None
    assert entry.done_on("etherscan") and not entry.done_on("blockscout")  # the entry's "failed"
    assert LedgerEntry(PROXY, status="already verified").done_on("x")


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


def test_an_entry_with_every_field_round_trips():
    entry = LedgerEntry(PROXY, "Proxy", network="ethereum:local:foundry", deployed_type="Impl", compile_input="ab")
    entry.target_ended("local", "verified")
    entry.target_ended("etherscan", "failed", "no")
    entry.linked("etherscan", IMPL)
    entry.upgraded(IMPL.lower(), "0x01")
    entry.admin_changed(IMPL)
    entry.updated = 2.0
    document = entry.to_json()
    assert document["targets"]["etherscan"] == {"status": "failed", "reason": "no"}
    assert document["links"] == {"etherscan": {"implementation": IMPL.lower(), "url": None}}
    assert (document["type"], document["input"], document["updated"]) == ("Impl", "ab", 2.0)
    read = LedgerEntry.from_json(document)
    assert read == entry and read.targets["etherscan"] == TargetEnding("failed", "no")
    assert read.upgrade == Upgrade(IMPL.lower(), "0x01")

    bare = LedgerEntry.from_json({"address": PROXY})  # no contract, no status
    assert bare.name == PROXY and bare.status is None and not bare.done
    assert bare.to_json() == {"address": PROXY}
