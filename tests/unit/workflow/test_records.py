"""What was recorded on a network, read from the plugin's ledgers (typed entries) and the project's
`deployments:` section; a record that cannot be read is a problem to show, never "nothing"."""

from types import SimpleNamespace

import pytest

from ape_contract_verify.workflow.ledger import Ledger, Records, recorded_deployments, recorded_networks

pytestmark = pytest.mark.unit

BOX = "0x5FbDB2315678afecb367f032d93F642f64180aa3"
STORE = "0xe7f1725E7734CE288F8367e1Bb143E90bb3F0512"


def _project(tmp_path, deployments=None):
    return SimpleNamespace(path=tmp_path, config=SimpleNamespace(deployments=deployments))


def test_records_keep_each_address_once_in_order_with_its_first_type():
    records = Records()
    records.add("Box", BOX, "contracts/Box.sol:Box")
    records.add("Box again", BOX.lower(), "contracts/Other.sol:Other")
    records.add("Store", STORE)
    assert records.deployments == [("Box", BOX), ("Store", STORE)]
    assert records.types == {BOX.lower(): "contracts/Box.sol:Box"}


def test_the_ledger_s_entries_are_read_with_their_names_and_types(tmp_path):
    project = _project(tmp_path)
    ledger = Ledger.for_chain(project, 31337)  # not connected: the chain's genesis is "unknown", as below
    ledger.recorded("Box", BOX, "ethereum:local:foundry", "contracts/Box.sol:Box")
    ledger.change(
        STORE, STORE, lambda e: e.linked("etherscan", BOX), rename=False
    )  # recorded by a link alone: named by its address
    Ledger.for_chain(project, 31337, genesis="0x" + "cd" * 32).recorded("Elsewhere", BOX)  # another chain
    records = recorded_deployments(project, 31337)
    assert records.deployments == [("Box", BOX), (STORE, STORE)]
    assert records.types == {BOX.lower(): "contracts/Box.sol:Box"}
    # Not a project Ape can list: said, and the ledger's records still there.
    assert any("could not list the project's contract types" in p for p in records.problems), records.problems


def test_an_unreadable_ledger_is_a_problem_not_an_empty_record(tmp_path):
    project = _project(tmp_path)
    path = Ledger.for_chain(project, 1).path
    path.parent.mkdir(parents=True)
    path.write_bytes(b"not a database" * 100)
    records = recorded_deployments(project, 1)
    assert records.deployments == []
    assert any(str(path) in p and "move it" in p for p in records.problems), records.problems


def test_networks_come_from_every_ledger_and_the_config_once_per_network(tmp_path):
    project = _project(
        tmp_path,
        {"ethereum": {"sepolia": [{"contract_type": "Box", "address": BOX}], "mainnet": []}},
    )
    Ledger.for_chain(project, 31337, "0x" + "ab" * 32).recorded("Box", BOX, "ethereum:local:foundry")
    Ledger.for_chain(project, 31337, "0x" + "cd" * 32).recorded("Box", BOX, "ethereum:local:test")
    Ledger.for_chain(project, 11155111, "0x" + "ef" * 32).recorded("Box", BOX, "ethereum:sepolia:node")
    Ledger.for_chain(project, 5, "0x" + "01" * 32).recorded("Box", BOX)  # no network: nothing to add
    networks, problems = recorded_networks(project)
    # In the ledgers' order (by file name: chain id), then the config's networks not named yet.
    assert networks == ["ethereum:sepolia:node", "ethereum:local:foundry"] and problems == []


def test_a_config_that_cannot_be_read_is_a_problem(tmp_path):
    project = SimpleNamespace(path=tmp_path, config=SimpleNamespace(deployments=["not", "a", "mapping"]))
    networks, problems = recorded_networks(project)
    assert networks == [] and len(problems) == 1 and "deployments: section" in problems[0]
