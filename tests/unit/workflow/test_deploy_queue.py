"""workflow/deploy_queue.py's DeployQueue on threads, without a chain: an address queued once per
run and verified on every target; a verification that raises becomes the row that says so, never
an exception into the script; the ledger written once, with the worst ending, when the last target
ends; the results grouped by target in submission order; following upgrades that fails is a warning.
(The summary lines and the progress are report's tests: tests/unit/workflow/test_report.py.)"""

import logging
import threading
from types import SimpleNamespace

import pytest

from ape_contract_verify.protocol.answers import Outcome
from ape_contract_verify.workflow import deploy_queue, upgrades
from ape_contract_verify.workflow.deploy_queue import DeployQueue
from ape_contract_verify.workflow.ledger import Ledger
from ape_contract_verify.workflow.plan import Options
from ape_contract_verify.workflow.report import Report
from ape_contract_verify.workflow.verification import Verification, VerificationRun

pytestmark = pytest.mark.unit

BOX = "0x5FbDB2315678afecb367f032d93F642f64180aa3"
CHILD = "0xe7f1725E7734CE288F8367e1Bb143E90bb3F0512"
NET = "ethereum:local:test"


class Chain:
    """The run's memoising reader, as far as the queue reads it."""

    base = None

    def __init__(self):
        self.read, self.closed = [], False

    def get_code(self, address):
        self.read.append(address)
        return b"\x60\x80"

    def get_storage_at(self, address, slot):
        return bytes(32)

    def close(self):
        self.closed = True


def verification(name, answer):
    """A target's Verification: `answer(address)` gives its reports or raises; its rows stamped as
    a Verification stamps them."""
    calls = []

    def contract(address, name=None, constructor_args=None, deployed_type=None):
        calls.append((threading.current_thread().name, address, deployed_type))
        return fake.stamp(answer(address))

    target = SimpleNamespace(url=f"https://{name}.example/api", label=name)
    fake = SimpleNamespace(contract=contract, target=target, target_name=name, calls=calls, network=NET)
    fake.health = SimpleNamespace(check=lambda: None)
    fake.stamp = lambda reports: Verification.stamp(fake, reports)
    return fake


class Run:
    """The run's targets, opened at the drain: labels for the rows, closed at the end."""

    def __init__(self, verifications):
        self.verifications = verifications
        self.opened = False

    def open(self):
        self.opened = True
        for v in self.verifications:
            v.target = SimpleNamespace(name=v.target_name, url=v.target.url, label=f"{v.target_name} label")
        run = VerificationRun(None, Options())
        run.destinations = self.verifications
        return run


def make_queue(tmp_path, verifications):
    """A queue of a run with these targets, built from its parts (no provider, no project)."""
    run, prepared = Run(verifications), []

    def prepare(address, deployed_type):
        prepared.append((threading.current_thread().name, address, deployed_type))
        return None

    queue = DeployQueue(
        NET, Chain(), run.open, ledger=Ledger(tmp_path / "deployments-1337-abc.sqlite"), prepare=prepare, timeout=30
    )
    queue.scanned = []  # the run's walk found nothing more
    queue.run, queue.prepared = run, prepared  # what the tests read back
    return queue


def by_target(reports):
    """The rows `finish` gave, by target name, in their order."""
    found = {}
    for report in reports:
        found.setdefault(report.target, []).append(report)
    return found


def verified(name):
    return lambda address: [Report("Box" if address == BOX else "Child", address, Outcome.VERIFIED, target=name)]


def test_each_address_is_verified_once_on_every_target_on_the_workers(tmp_path):
    etherscan, sourcify = (
        verification("etherscan", verified("etherscan")),
        verification("sourcify", verified("sourcify")),
    )
    queue = make_queue(tmp_path, [etherscan, sourcify])
    queue.add(BOX.lower(), "Box", None)
    queue.add(BOX, "Box", None)  # the same deploy seen again: not queued again
    results = by_target(queue.finish())
    assert [r.outcome for r in results["etherscan"]] == [Outcome.VERIFIED] == [r.outcome for r in results["sourcify"]]
    assert len(etherscan.calls) == len(sourcify.calls) == 1
    assert etherscan.calls[0][0].startswith("verify") and etherscan.calls[0][1] == BOX  # checksummed, on a worker
    assert queue.chain.read[0] == BOX and queue.chain.closed  # read on the script's thread; closed at the end
    entry = queue.ledger.entries()[0]
    assert (entry["contract"], entry["address"], entry["network"], entry["status"]) == ("Box", BOX, NET, "verified")
    assert queue.finish() == []  # finished: nothing more


def test_a_verification_that_raises_is_a_row_and_the_ledger_keeps_the_worst_ending(tmp_path):
    def refused(address):
        raise RuntimeError("explorer unreachable")

    etherscan = verification("etherscan", verified("etherscan"))
    queue = make_queue(tmp_path, [etherscan, verification("blockscout", refused)])
    queue.add(BOX, "Box", None, "contracts/Box.sol:Box")
    # At the deploy, on the script's thread, only what a recompile could change; the targets wait.
    assert queue.prepared == [(threading.current_thread().name, BOX, "contracts/Box.sol:Box")]
    assert not queue.run.opened and not etherscan.calls and queue.chain.read == []
    assert queue.ledger.entries()[0]["status"] == "pending"
    results = by_target(queue.finish())
    assert queue.run.opened and not queue.active  # the queue closed once finished
    assert [r.target_label for r in results["etherscan"]] == ["etherscan label"]
    (row,) = results["blockscout"]
    assert (row.contract, row.address, row.outcome, row.reason) == ("Box", BOX, Outcome.ERROR, "explorer unreachable")
    assert results["etherscan"][0].ok
    entry = queue.ledger.entries()[0]
    assert entry["status"] == str(Outcome.ERROR).lower() and entry["reason"] == "explorer unreachable"
    assert entry["type"] == "contracts/Box.sol:Box"


def test_factory_children_found_by_the_walk_are_queued_by_address(tmp_path, monkeypatch):
    target = verification("etherscan", verified("etherscan"))
    queue = make_queue(tmp_path, [target])
    monkeypatch.setattr(deploy_queue, "scan_logs", lambda *args: SimpleNamespace(events=[]))
    monkeypatch.setattr(deploy_queue, "run_children", lambda *args, **kwargs: [CHILD.lower()])
    queue.scanned = None  # the run's walk: read once the script has ended
    queue.add(BOX, "Box", None)
    results = by_target(queue.finish())
    assert [r.address for r in results["etherscan"]] == [BOX, CHILD]  # in submission order
    assert [c[1] for c in target.calls] == [BOX, CHILD]
    assert [(e["contract"], e["address"]) for e in queue.ledger.entries()] == [("Box", BOX), ("Child", CHILD)]


def test_a_worker_that_cannot_finish_is_said_with_its_name_and_address(tmp_path, monkeypatch):
    queue = make_queue(tmp_path, [verification("etherscan", verified("etherscan"))])

    def broken(self, *args):
        raise RuntimeError("worker stopped")

    monkeypatch.setattr(DeployQueue, "_record", broken)  # the worker's last step
    queue.add(BOX, "Box", None, "contracts/Box.sol:Box")
    (row,) = by_target(queue.finish())["etherscan"]
    assert (row.contract, row.address, row.outcome) == ("Box", BOX, Outcome.ERROR)
    assert row.reason == "not finished: worker stopped" and row.target == "etherscan"


def test_following_the_run_s_upgrades_that_fails_is_a_warning_and_the_rows_stand(tmp_path, monkeypatch, caplog):
    queue = make_queue(tmp_path, [verification("etherscan", verified("etherscan"))])
    queue.scanned = [SimpleNamespace(kind="implementation")]

    def follow(*args):
        raise RuntimeError("node gone")

    monkeypatch.setattr(upgrades, "follow", follow)
    queue.add(BOX, "Box", None)
    with caplog.at_level(logging.WARNING):
        results = by_target(queue.finish())
    assert results["etherscan"][0].ok
    assert f"could not follow the run's upgrades on {NET}: node gone" in caplog.text


def test_a_queue_is_bound_only_to_its_own_provider(tmp_path):
    provider = SimpleNamespace()
    queue = DeployQueue(NET, Chain(), Run([]).open, provider=provider)
    assert queue.provider is provider  # its reads ahead and the walk of the run use this one


def test_the_heartbeat_is_a_bounded_wait():
    assert 0 < deploy_queue.HEARTBEAT <= 60


def test_the_script_asking_about_a_deploy_has_it_verified_now_and_the_rest_waits(tmp_path):
    target = verification("etherscan", verified("etherscan"))
    queue = make_queue(tmp_path, [target])
    queue.add(BOX, "Box", None)
    queue.add(CHILD, "Child", None)
    queue.verify_now(CHILD)  # Ape's explorer asked about it: verified before verify_now returns
    assert [c[1] for c in target.calls] == [CHILD] and [item.address for item, _ in queue.pending] == [BOX]
    queue.verify_now(CHILD)  # already done: nothing more
    results = by_target(queue.finish())
    assert [c[1] for c in target.calls] == [CHILD, BOX]
    assert sorted(r.address for r in results["etherscan"]) == sorted([BOX, CHILD])
