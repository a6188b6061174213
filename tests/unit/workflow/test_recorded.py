"""Verifying what was recorded: the networks to visit, the records read (or a clear refusal), the
items planned per recorded address, and each ending written to the ledger by its transitions."""

from types import SimpleNamespace

import pytest

from ape_contract_verify.exceptions import InvalidRequest
from ape_contract_verify.protocol.answers import Outcome
from ape_contract_verify.workflow.choice import NetworkChoice
from ape_contract_verify.workflow.ledger import Ledger, LedgerEntry
from ape_contract_verify.workflow.plan import Item
from ape_contract_verify.workflow.recorded import NoRecords, network_choices, plan_items, record_outcome, records_on
from ape_contract_verify.workflow.report import Report

pytestmark = pytest.mark.unit

PROXY = "0xe7f1725E7734CE288F8367e1Bb143E90bb3F0512"
IMPL = "0x5FbDB2315678afecb367f032d93F642f64180aa3"
NET = "ethereum:local:foundry"


def _project(tmp_path, deployments=None):
    return SimpleNamespace(path=tmp_path, config=SimpleNamespace(deployments=deployments))


def test_network_choices_are_the_ones_given_or_every_recorded_one(tmp_path):
    warned = []
    given = NetworkChoice(networks=("ethereum:sepolia", "ethereum:holesky"), target_names=("etherscan",))
    choices = network_choices(_project(tmp_path), given, False, warned.append)
    assert [c.network for c in choices] == ["ethereum:sepolia", "ethereum:holesky"]
    assert all(c.target_names == ("etherscan",) for c in choices)
    assert network_choices(_project(tmp_path), NetworkChoice(), False, warned.append) == [NetworkChoice()]

    with pytest.raises(InvalidRequest, match="network or all_networks, not both"):
        network_choices(_project(tmp_path), given, True, warned.append)
    with pytest.raises(NoRecords, match="no network has recorded deployments"):
        network_choices(_project(tmp_path), NetworkChoice(), True, warned.append)

    Ledger.for_chain(_project(tmp_path), 31337, "0x" + "ab" * 32).recorded("Proxy", PROXY, NET)
    project = _project(tmp_path, {"ethereum": {"sepolia": [{"address": PROXY}]}})
    assert [c.network for c in network_choices(project, NetworkChoice(), True, warned.append)] == [
        NET,
        "ethereum:sepolia",
    ]
    assert warned == []


def test_records_that_cannot_be_read_are_warned_about_and_refused_when_nothing_is_left(tmp_path):
    project = _project(tmp_path)
    path = Ledger.for_chain(project, 1).path  # not connected: the "unknown" genesis recorded_deployments reads
    path.parent.mkdir(parents=True)
    path.write_bytes(b"garbage" * 200)
    warned = []
    with pytest.raises(NoRecords, match="no deployment could be read from the records"):
        records_on(project, 1, warned.append)
    assert any(str(path) in w for w in warned), warned


class Run:
    """What plan_items reads of a VerificationRun: each network's targets."""

    def __init__(self, *targets):
        self.targets = [SimpleNamespace(target=SimpleNamespace(name=n, url=u, label=n)) for n, u in targets]

    def targets_of(self, network):
        return self.targets


def test_an_address_with_no_links_is_verified_everywhere_as_before():
    run = Run(("etherscan", "http://127.0.0.1:1/api"), ("sourcify", "http://127.0.0.1:2/"))
    current = []
    for entry in (None, LedgerEntry(PROXY, status="failed")):
        [item] = plan_items(run, entry, NET, PROXY, "contracts/Proxy.sol:Proxy", reader=None, current=current)
        assert (item.network, item.address, item.deployed_type, item.targets, item.relink) == (
            NET,
            PROXY,
            "contracts/Proxy.sol:Proxy",
            None,
            None,
        )
    assert current == []


def test_each_ending_goes_to_the_ledger_with_the_proxy_s_link(tmp_path):
    ledger = Ledger(tmp_path / "deployments-31337-abc.sqlite")
    ledger.recorded("Proxy", PROXY, NET)
    item = Item(NET, PROXY, deployed_type="contracts/Proxy.sol:Proxy")
    reports = [
        Report("Proxy", PROXY, Outcome.VERIFIED, target="etherscan"),
        Report("Proxy", PROXY, Outcome.VERIFIED, target="etherscan", kind="proxy", implementation=IMPL),
    ]
    urls = {"etherscan": "http://127.0.0.1:1/api"}
    warned = []
    record_outcome(ledger, "Proxy", item, reports, urls, warned.append)
    [entry] = ledger.deployments()
    assert entry.status == "verified" and entry.targets["etherscan"].status == "verified"
    assert entry.link_on("etherscan", urls["etherscan"]) == IMPL.lower() and warned == []

    # A relink on one target that ended well with nothing of the proxy's own: the new implementation.
    moved = "0x9fE46736679d2D9a65F0992F2272dE9f3c7fa6e0"
    relink = Item(NET, PROXY, targets=frozenset({"etherscan"}), relink=moved)
    record_outcome(
        ledger, "Proxy", relink, [Report("Proxy", PROXY, Outcome.VERIFIED, target="etherscan")], urls, [].append
    )
    assert ledger.deployments()[0].link_on("etherscan", urls["etherscan"]) == moved.lower()

    failed = [Report("Proxy", PROXY, Outcome.FAILED, "bytecode differs", target="sourcify")]
    record_outcome(ledger, "Proxy", item, failed, urls, warned.append)
    [entry] = ledger.deployments()
    assert (entry.status, entry.reason) == ("failed", "bytecode differs") and entry.done_on("etherscan")


def test_a_ledger_that_cannot_be_written_is_warned_about_and_the_verification_stands(tmp_path):
    ledger = Ledger(tmp_path / "deployments-31337-abc.sqlite")
    ledger.path.write_bytes(b"garbage" * 200)
    warned = []
    reports = [Report("Proxy", PROXY, Outcome.VERIFIED, target="etherscan")]
    record_outcome(ledger, "Proxy", Item(NET, PROXY), reports, {}, warned.append)
    assert len(warned) == 1 and str(ledger.path) in warned[0]
