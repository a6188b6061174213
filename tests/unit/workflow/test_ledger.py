"""The ledger's store read as users' projects hold it today: a SQLite file written by the
versions before the typed model (and a JSON ledger of older ones) is read into typed entries,
and a transition keeps every field it does not name."""

import json
import sqlite3

import pytest

from ape_contract_verify.workflow.ledger import Ledger, LedgerEntry

pytestmark = pytest.mark.unit

BOX = "0x5FbDB2315678afecb367f032d93F642f64180aa3"
PROXY = "0xe7f1725E7734CE288F8367e1Bb143E90bb3F0512"
IMPL = "0x9fE46736679d2D9a65F0992F2272dE9f3c7fa6e0"

# Entries as the free-form writers of the version before wrote them (record, record_target,
# record_link, record_upgrades, record_admins), in its schema.
TODAY = [
    {
        "contract": "Box",
        "address": BOX,
        "status": "verified",
        "network": "ethereum:local:foundry",
        "type": "contracts/Box.sol:Box",
        "updated": 1700000000.5,
        "targets": {"etherscan": {"status": "verified", "reason": ""}},
        "reason": "",
    },
    {
        "contract": "Proxy",
        "address": PROXY,
        "status": "pending",
        "network": "ethereum:local:foundry",
        "updated": 1700000001.0,
        "links": {"etherscan": {"implementation": IMPL.lower(), "url": "http://127.0.0.1:8545/api"}},
        "upgraded": {"implementation": IMPL.lower(), "tx": "0x" + "12" * 32},
        "admin": BOX,
    },
]
SCHEMA = (
    "CREATE TABLE deployments (seq INTEGER PRIMARY KEY AUTOINCREMENT,"
    " address TEXT NOT NULL UNIQUE, entry TEXT NOT NULL)"
)


def _today_store(path):
    path.parent.mkdir(parents=True, exist_ok=True)
    db = sqlite3.connect(path)
    db.execute("PRAGMA journal_mode=WAL")
    db.execute(SCHEMA)
    for entry in TODAY:
        db.execute(
            "INSERT INTO deployments (address, entry) VALUES (?, ?)", (entry["address"].lower(), json.dumps(entry))
        )
    db.commit()
    db.close()


def test_a_store_in_todays_format_reads_as_typed_entries(tmp_path):
    path = tmp_path / ".build" / "contract_verify" / "deployments-31337-abcdef012345.sqlite"
    _today_store(path)
    ledger = Ledger(path)
    assert ledger.entries() == TODAY  # as stored, every field
    box, proxy = ledger.deployments()
    assert isinstance(box, LedgerEntry) and box.name == "Box" and box.done and box.deployed_type.endswith(":Box")
    assert proxy.link_on("etherscan", "http://127.0.0.1:8545/api") == IMPL.lower()
    assert proxy.upgrade is not None and proxy.upgrade.implementation == IMPL.lower() and proxy.admin == BOX
    assert [e.address for e in ledger.pending()] == [PROXY]


def test_a_transition_on_an_old_entry_keeps_what_it_does_not_name(tmp_path):
    path = tmp_path / "deployments-31337-abcdef012345.sqlite"
    _today_store(path)
    ledger = Ledger(path)
    ledger.target_ended("Proxy", PROXY.lower(), "etherscan", "verified")
    ledger.linked("Proxy", PROXY, "sourcify", IMPL)
    _, proxy = ledger.entries()
    expected = {k: v for k, v in TODAY[1].items() if k not in ("status", "updated")}
    assert {k: v for k, v in proxy.items() if k in expected and k != "links"} == {
        k: v for k, v in expected.items() if k != "links"
    }
    assert proxy["links"] == {**TODAY[1]["links"], "sourcify": {"implementation": IMPL.lower(), "url": None}}
    assert proxy["status"] == "verified" and proxy["targets"] == {"etherscan": {"status": "verified", "reason": ""}}
    assert proxy["updated"] > TODAY[1]["updated"]
    assert ledger.entries()[0] == TODAY[0]  # the other entry untouched, in its place


def test_each_transition_is_one_write_and_a_new_entry_is_pending(tmp_path):
    ledger = Ledger(tmp_path / "deployments-1-abc.sqlite")
    ledger.recorded("Box", BOX, "ethereum:sepolia:node", "contracts/Box.sol:Box")
    ledger.ended("Box", BOX, "failed", "bytecode differs")
    ledger.upgraded(PROXY, PROXY, IMPL.lower(), "0x01", "ethereum:sepolia:node")  # unknown: recorded too
    ledger.admin_changed("Proxy", PROXY, BOX)  # renamed as the caller calls it
    box, proxy = ledger.deployments()
    assert (box.status, box.reason, box.network) == ("failed", "bytecode differs", "ethereum:sepolia:node")
    assert (proxy.contract, proxy.status, proxy.network, proxy.admin) == (
        "Proxy",
        "pending",
        "ethereum:sepolia:node",
        BOX,
    )
    ledger.linked("Other name", PROXY, "etherscan", IMPL)  # a link never renames
    assert ledger.deployments()[1].contract == "Proxy"
    assert ledger.export() == {"deployments": ledger.entries()}


def test_a_json_ledger_of_older_versions_reads_as_typed_entries(tmp_path):
    old = tmp_path / "deployments-31337-abc.json"
    old.write_text(json.dumps({"deployments": [{"address": BOX, "contract": "Box", "status": "pending"}]}))
    [entry] = Ledger(old).deployments()
    assert (entry.name, entry.status) == ("Box", "pending") and not old.exists()
