"""Several targets in one run, end to end: the example's deployments (the session's anvil) verified
by `ape verify` on two fresh local explorers at once, one through its Etherscan-style API and one
through its Sourcify API v2 face; one of them stopped in the middle; `--target` choosing."""

import logging
import re
import shutil
import sqlite3
import threading
import time

import pytest
import requests

from support.e2e import as_json, configure, copy_project, sourcify_base, submissions, verify_cli
from support.service import ServerProcess

# The deploy summary's row: contract, address, outcome, target.
ROW = re.compile(
    r"^(\S+(?: \S+)*?)\s{2,}(0x[0-9a-fA-F]{40})\s{2,}(verified|already verified|failed|pre-check failed|error|skipped)\s{2,}(\S+)",
    re.M,
)
SOURCES = [
    "Token",
    "MathLib",
    "Calculator",
    "Box",
    "Vault",
    "Escrow",
    "viair:ViaIRCounter",
    "openzeppelin:ERC1967Proxy",
]


def test_ape_run_deploy_verifies_every_contract_on_both_targets(example_on_anvil):
    """The session's deploy (tests/conftest.py) ran with two targets: every contract is verified on
    the Etherscan-style explorer and on the second explorer's Sourcify face, a row for each."""
    rows: dict = {}
    for name, address, outcome, target in ROW.findall(example_on_anvil.proc.stdout):
        rows[(name, target)] = (address, outcome)
    for name in SOURCES:
        for target in ("etherscan", "sourcify"):
            assert rows.get((name, target), (None, None))[1] == "verified", (
                f"{name} on {target}: {example_on_anvil.proc.stdout[-4000:]}"
            )
    assert ("EIP-1167 clone (proxy link)", "etherscan") in rows and not [
        k for k in rows if k[1] == "sourcify" and "proxy link" in k[0]
    ]
    token = example_on_anvil.deployed["Token"]
    lookup = requests.get(f"{sourcify_base(example_on_anvil.sourcify)}v2/contract/31337/{token}", timeout=30)
    assert lookup.status_code == 200 and lookup.json()["match"] == "exact_match", lookup.text


@pytest.fixture(scope="module")
def world(example_on_anvil, tmp_path_factory):
    """A copy of the deployed example (with the plugin's record of what the deploy made) and two
    fresh explorers on the same anvil: nothing is verified on either yet."""
    root = tmp_path_factory.mktemp("targets-e2e")
    project = copy_project(example_on_anvil.project, root / "example")
    shutil.copytree(example_on_anvil.project / ".build" / "contract_verify", project / ".build" / "contract_verify")
    # A few of the deploy's contracts, a proxy among them, are enough to stop a target in the middle.
    keep = {example_on_anvil.deployed[name].lower() for name in ("Token", "Box", "SimpleProxy", "Vault", "LegacyStore")}
    from ape_contract_verify.workflow.ledger import Ledger

    # The ledger's other entries deleted from its store.
    for path in (project / ".build" / "contract_verify").glob("deployments-*.sqlite"):
        assert {e["address"].lower() for e in Ledger(path).entries()} >= keep
        with sqlite3.connect(path) as db:
            db.execute(f"DELETE FROM deployments WHERE address NOT IN ({', '.join('?' * len(keep))})", sorted(keep))
        db.close()
        assert len(Ledger(path).entries()) == len(keep)
    servers = []
    try:
        for name in ("etherscan", "sourcify"):
            server = ServerProcess(example_on_anvil.anvil.url, root / f"{name}.sqlite", use_ape=True)
            server.db = root / f"{name}.sqlite"
            servers.append(server)
        yield project, servers[0], servers[1], example_on_anvil
    finally:
        for server in servers:
            server.stop()


def use_targets(project, etherscan: ServerProcess, sourcify: ServerProcess) -> None:
    configure(
        project,
        contract_verify={
            "auto": False,
            "max_retries": 1,
            "poll_interval": 0.5,
            "calls_per_second": 50,
            "explorers": {
                "ethereum": {"local": {"url": etherscan.base_url, "sourcify": {"url": sourcify_base(sourcify)}}}
            },
        },
    )


def test_verify_all_on_two_targets_with_one_stopped_in_the_middle(world):
    project, etherscan, sourcify, example = world
    use_targets(project, etherscan, sourcify)
    stopped = threading.Event()

    def stop_sourcify_after_its_first_submission():
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and not stopped.is_set():
            try:
                if submissions(sourcify.db) >= 1:
                    break
            except Exception:
                pass  # the table appears with the first write
            time.sleep(0.05)
        sourcify.kill()
        stopped.set()

    killer = threading.Thread(target=stop_sourcify_after_its_first_submission, daemon=True)
    killer.start()
    proc = verify_cli(project, "all", "--json", timeout=600)
    stopped.set()
    killer.join(30)
    document = as_json(proc)
    assert proc.returncode == 1, proc.stderr[-2000:]
    assert document["ok"] is False
    rows = document["reports"]
    by_target: dict = {}
    for row in rows:
        by_target.setdefault(row["target"], []).append(row)
    assert set(by_target) == {"etherscan", "sourcify"}, rows
    # The Etherscan-style target verified everything, whatever happened to the other.
    assert [r for r in by_target["etherscan"] if not r["ok"]] == [], by_target["etherscan"]
    for name in ("Token", "Box", "Vault"):
        assert example.deployed[name] in {r["address"] for r in by_target["etherscan"] if r["outcome"] == "verified"}
    # The stopped one: its rows end, each with a reason naming what went wrong.
    down = [r for r in by_target["sourcify"] if not r["ok"]]
    assert down, by_target["sourcify"]
    assert all(r["reason"] for r in down)
    assert any("connect" in r["reason"].lower() or "refused" in r["reason"].lower() for r in down), down
    assert all(r["network"] == "ethereum:local" for r in rows)
    # No proxy links on the Sourcify target: it resolves proxies itself.
    assert not [r for r in by_target["sourcify"] if r["kind"] == "proxy"]
    assert [r for r in by_target["etherscan"] if r["kind"] == "proxy"]


def test_target_chooses_and_the_sourcify_face_reads_back(world):
    project, etherscan, _, example = world
    # A fresh Sourcify-face explorer (the module's other one was stopped).
    server = ServerProcess(example.anvil.url, project.parent / "sourcify-2.sqlite", use_ape=True)
    try:
        use_targets(project, etherscan, server)
        box = example.deployed["Box"]
        proc = verify_cli(project, "contract", box, "--target", "sourcify", "--json")
        document = as_json(proc)
        assert proc.returncode == 0, proc.stderr[-2000:]
        assert [(r["target"], r["outcome"], r["match"]) for r in document["reports"]] == [
            ("sourcify", "verified", "full")
        ]
        chain_id = 31337
        lookup = requests.get(f"{sourcify_base(server)}v2/contract/{chain_id}/{box}", timeout=30)
        assert lookup.status_code == 200 and lookup.json()["match"] == "exact_match"
        # The summary names the target on every row.
        text = verify_cli(project, "contract", box, "--target", "sourcify")
        assert text.returncode == 0
        row = next(line for line in text.stdout.splitlines() if box in line)
        assert "already verified" in row and "sourcify" in row
        # An unknown target is bad input: exit 2, the names that exist listed.
        bad = verify_cli(project, "contract", box, "--target", "nope")
        assert bad.returncode == 2
        assert "nope" in bad.stderr and "sourcify" in bad.stderr and "etherscan" in bad.stderr
    finally:
        server.stop()


def test_a_target_killed_in_the_middle_of_every_deployment_is_found_down_once(example_on_anvil, tmp_path, monkeypatch):
    """Issue 23: every recorded deployment (20 contracts) on two fresh explorers, the default
    retries (5, backoff up to 16 s); one explorer killed after its first submission. The run ends soon
    after the kill, not after each contract's own backoff: the target is marked down once and its
    remaining rows carry that one reason, while the other target verifies everything. The other
    target's own work (20 contracts, compiled on a shared machine) may outlast the 30 s: the command
    then ends with it, and the dead target's rows end no later."""
    from ape_contract_verify.workflow.verification import VerificationRun

    ends: dict = {}  # target -> when each of its rows ended
    verify = VerificationRun.verify

    def timed(self, items, on_done=None):
        def done(item, reports):
            for report in reports:
                ends.setdefault(report.target, []).append(time.monotonic())
            if on_done is not None:
                on_done(item, reports)

        return verify(self, items, on_done=done)

    monkeypatch.setattr(VerificationRun, "verify", timed)
    project = copy_project(example_on_anvil.project, tmp_path / "example")
    shutil.copytree(example_on_anvil.project / ".build" / "contract_verify", project / ".build" / "contract_verify")
    from ape_contract_verify.workflow.ledger import Ledger

    recorded = sum(
        len(Ledger(p).entries()) for p in (project / ".build" / "contract_verify").glob("deployments-*.sqlite")
    )
    assert recorded >= 20, recorded
    servers = [
        ServerProcess(example_on_anvil.anvil.url, tmp_path / f"{name}.sqlite", use_ape=True)
        for name in ("etherscan", "sourcify")
    ]
    etherscan, sourcify = servers
    try:
        configure(
            project,
            contract_verify={
                "auto": False,
                "poll_interval": 0.5,
                "calls_per_second": 50,
                "max_retries": 5,  # the default, not the example's 1
                "explorers": {
                    "ethereum": {"local": {"url": etherscan.base_url, "sourcify": {"url": sourcify_base(sourcify)}}}
                },
            },
        )
        killed: list = []

        def kill_after_the_first_submission():
            deadline = time.monotonic() + 300
            while time.monotonic() < deadline:
                try:
                    if submissions(tmp_path / "sourcify.sqlite") >= 1:
                        break
                except Exception:
                    pass  # the table appears with the first write
                time.sleep(0.05)
            sourcify.kill()
            killed.append(time.monotonic())

        found_down: list = []

        class WhenDown(logging.Handler):
            def emit(self, record):
                if "is down" in record.getMessage():
                    found_down.append(time.monotonic())

        handler = WhenDown(logging.WARNING)
        logging.getLogger("ape.contract_verify").addHandler(handler)
        killer = threading.Thread(target=kill_after_the_first_submission, daemon=True)
        killer.start()
        try:
            proc = verify_cli(project, "all", "--json", timeout=900)
        finally:
            logging.getLogger("ape.contract_verify").removeHandler(handler)
        ended = time.monotonic()
        killer.join(30)
        document = as_json(proc)
        assert killed, "the Sourcify-face explorer never got a submission"
        after_kill = ended - killed[0]
        assert proc.returncode == 1, proc.stderr[-2000:]
        rows = document["reports"]
        etherscan_rows = [r for r in rows if r["target"] == "etherscan"]
        found = found_down[0] - killed[0] if found_down else float("nan")
        healthy_done, dead_done = max(ends["etherscan"]), max(ends["sourcify"])
        print(
            f"the run ended {after_kill:.1f} s after the kill; the target was found down after {found:.1f} s; "
            f"its last row ended {dead_done - killed[0]:.1f} s and the other target's {healthy_done - killed[0]:.1f} s after the kill"
        )
        brief = [(r["contract"], r["target"], r["outcome"], r["reason"][:200]) for r in rows if not r["ok"]]
        assert etherscan_rows and all(r["ok"] for r in etherscan_rows), brief
        assert {r["address"].lower() for r in etherscan_rows} >= {a.lower() for a in example_on_anvil.deployed.values()}
        down = [r for r in rows if r["target"] == "sourcify" and not r["ok"]]
        assert down, rows
        reasons = {r["reason"].split("; submitted as ")[0] for r in down}
        assert len(reasons) == 1, reasons
        (reason,) = reasons
        assert (
            reason.startswith("target sourcify is down: ")
            and "tries in" in reason
            and "the other targets went on" in reason
        ), reason
        assert len(found_down) == 1 and found < 15, (found_down, killed)  # once, and soon
        assert dead_done <= max(killed[0] + 30, healthy_done + 2), "the dead target held the run up"
        assert ended <= max(killed[0] + 30, healthy_done + 5), f"{after_kill:.0f} s after the kill; {reason}"
    finally:
        for server in servers:
            server.stop()
