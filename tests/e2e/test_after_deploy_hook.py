"""The deploy hook without `sys.argv`: on in any `ape run` (found on click's context stack), off in
`ape test`; every network a script deploys to verified on its own targets; with auto off, the
ledger records what `ape run` deployed and `ape verify all` verifies it, with Ape's own
`deployments:` records too."""

import json
import re
import sqlite3
import subprocess
import sys
import time
import types

import pytest
import requests

from support import BIN, run, tool_env
from support.e2e import ape_in_process, configure, copy_project, verify_cli
from support.service import Anvil, ServerProcess

# The summary's row with a network column: contract, address, outcome, target, network.
NETWORK_ROW = re.compile(
    r"^(\S+)\s{2,}(0x[0-9a-fA-F]{40})\s{2,}(verified|already verified|failed|pre-check failed|error|skipped)\s{2,}(\S+(?: \S+)?)\s{2,}(ethereum:\S+)",
    re.M,
)

TWO_CHAINS = """
from ape import accounts, networks, project


def main():
    deployer = accounts.test_accounts[0]
    first = [deployer.deploy(project.Box), deployer.deploy(project.LegacyStore, "first", 1)]
    with networks.parse_network_choice("ethereum:second:node"):
        second = [deployer.deploy(project.Box), deployer.deploy(project.LegacyStore, "second", 2)]
    for chain, deployed in (("first", first), ("second", second)):
        for contract in deployed:
            print("DEPLOYED", chain, contract.contract_type.name, contract.address)
"""

DEPLOY_TWO = """
from ape import accounts, project


def main():
    deployer = accounts.test_accounts[0]
    for contract in (deployer.deploy(project.Box), deployer.deploy(project.LegacyStore, "kept", 3)):
        print("DEPLOYED", contract.contract_type.name, contract.address)
"""

APE_TEST = """
def test_a_deploy_in_ape_test_is_not_verified(accounts, project):
    from ape_contract_verify.workflow import after_deploy
    from ape_contract_verify.workflow.ape_patches import PATCHES

    # The hook is in (so the rest says something): Ape's deploy path is wrapped in `ape test` too.
    assert "ape.managers._contractscache" in PATCHES.applied, PATCHES.problems
    box = accounts[0].deploy(project.Box)
    assert box.address
    assert after_deploy.deploy_mode() is None
    assert after_deploy.HOOK.holding(box.address) is None
    assert after_deploy.HOOK.runs == {}
"""

# `python -m ape` does not exist in eth-ape 0.8 (no ape/__main__.py); this is what it would run, from
# a file whose name is not `ape`: the old `sys.argv` test said "not `ape run`" to it.
WRAPPER = "import sys\nfrom ape._cli import cli\nsys.exit(cli())\n"


# -- end to end: `ape run`, `ape test`, `ape verify all` -------------------------------------------


@pytest.mark.e2e
def test_a_wrapper_started_run_verifies_every_network_the_script_deploys_to(compiled_example, tmp_path):
    """One script, two anvils with their own chain ids as two networks of the project: each
    network's deployments are verified on that network's target (the embedded explorer for
    ethereum:local, a standalone explorer for the custom one), in one summary."""
    first, second = Anvil(), Anvil(extra=("--chain-id", "31338"))
    explorer = None
    try:
        explorer = ServerProcess(second.url, tmp_path / "second.sqlite")
        project = copy_project(compiled_example, tmp_path / "two-chains")
        (project / "scripts" / "two_chains.py").write_text(TWO_CHAINS)
        configure(
            project,
            foundry={"host": first.url},
            networks={
                "custom": [{"name": "second", "chain_id": 31338, "ecosystem": "ethereum", "default_provider": "node"}]
            },
            node={"ethereum": {"second": {"uri": second.url}}},
            ethereum={"second": {"required_confirmations": 0, "transaction_acceptance_timeout": 60}},
            contract_verify={
                "auto": True,
                "max_retries": 1,
                "poll_interval": 0.5,
                "calls_per_second": 50,
                "explorers": {"ethereum": {"second": {"url": explorer.base_url}}},
            },
        )
        (project / "deploy-tool").write_text(WRAPPER)
        proc = run(
            [sys.executable, "deploy-tool", "run", "two_chains", "--network", "ethereum:local:foundry"],
            cwd=project,
            timeout=600,
        )
        deployed = re.findall(r"^DEPLOYED (\w+) (\w+) (0x[0-9a-fA-F]{40})$", proc.stdout, re.M)
        assert len(deployed) == 4, proc.stdout
        rows = {(network, name): outcome for name, _, outcome, _, network in NETWORK_ROW.findall(proc.stdout)}
        expected = {
            (network, name): "verified"
            for network in ("ethereum:local:foundry", "ethereum:second:node")
            for name in ("Box", "LegacyStore")
        }
        assert rows == expected, proc.stdout + proc.stderr
        # Each target named for what it is: the embedded explorer is no Etherscan.
        targets = {network: target for _, _, _, target, network in NETWORK_ROW.findall(proc.stdout)}
        assert targets == {"ethereum:local:foundry": "local explorer", "ethereum:second:node": "etherscan"}, proc.stdout

        # The second chain's explorer got the second chain's two contracts, and only those (both
        # chains have them at the same addresses: a queue that mixed networks would send four).
        with sqlite3.connect(tmp_path / "second.sqlite") as conn:
            assert conn.execute("SELECT COUNT(*) FROM submissions").fetchone()[0] == 2
        for chain, name, address in deployed:
            if chain == "second":
                answer = requests.get(
                    explorer.base_url,
                    params={"module": "contract", "action": "getsourcecode", "address": address},
                    timeout=10,
                ).json()
                assert answer["result"][0]["ContractName"].endswith(name), answer
        assert {first.rpc("eth_chainId"), second.rpc("eth_chainId")} == {hex(31337), hex(31338)}
        assert all(
            a.rpc("eth_getCode", addr, "latest") not in ("0x", "") for a in (first, second) for _, _, addr in deployed
        )

        # Later, every network with recorded deployments in one command, side by side, one table:
        # the second chain's explorer has them already; so does ethereum:local's embedded explorer,
        # which kept what the run verified (its anvil outlives the run: issue 30).
        # (the `ape` executable: a custom network is read from the project's config at Ape's start)
        later = run([BIN / "ape", "verify", "all", "--all-networks", "--json"], cwd=project, timeout=300, check=False)
        document = json.loads(later.stdout)
        assert later.returncode == 0 and document["ok"], later.stdout + later.stderr
        ended = {(r["network"], r["contract"]): r["outcome"] for r in document["reports"]}
        assert ended == {
            ("ethereum:local", "Box"): "already verified",
            ("ethereum:local", "LegacyStore"): "already verified",
            ("ethereum:second", "Box"): "already verified",
            ("ethereum:second", "LegacyStore"): "already verified",
        }, document
    finally:
        if explorer is not None:
            explorer.stop()
        first.stop()
        second.stop()


@pytest.mark.e2e
def test_ape_test_deploys_without_verifying(compiled_example, tmp_path):
    project = copy_project(compiled_example, tmp_path / "ape-test")
    configure(project, contract_verify={"auto": True})
    (project / "tests").mkdir(exist_ok=True)
    (project / "tests" / "test_hook.py").write_text(APE_TEST)
    proc = run(
        [BIN / "ape", "test", "tests/test_hook.py", "--network", "ethereum:local:test"],
        cwd=project,
        timeout=600,
        check=False,
    )
    assert proc.returncode == 0 and "1 passed" in proc.stdout, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert "contract_verify" not in proc.stdout + proc.stderr  # no summary, no warning
    assert not (project / ".build" / "contract_verify").exists()  # nothing recorded either


@pytest.mark.e2e
def test_auto_off_records_what_ape_run_deploys_and_verify_all_verifies_it(compiled_example, tmp_path):
    """`ape run` through Ape's CLI object in this process (argv is pytest's) with auto off: the
    ledger records both deployments; a Box deployed outside Ape is known only from the
    `deployments:` section. `ape verify all`, in a fresh `ape` process (no memory of the run),
    verifies all three; an unreadable ledger is a warning, not "no recorded deployments"."""
    from ape_contract_verify.workflow.ledger import Ledger
    from support.e2e import reset_hook

    anvil = Anvil()
    try:
        project = copy_project(compiled_example, tmp_path / "auto-off")
        (project / "scripts" / "deploy_two.py").write_text(DEPLOY_TWO)
        configure(project, foundry={"host": anvil.url}, contract_verify={"auto": False, "poll_interval": 0.5})
        proc = ape_in_process(project, "run", "deploy_two", "--network", "ethereum:local:foundry")
        reset_hook()
        assert proc.returncode == 0, proc.stdout + proc.stderr
        deployed = dict(re.findall(r"^DEPLOYED (\w+) (0x[0-9a-fA-F]{40})$", proc.stdout, re.M))
        assert set(deployed) == {"Box", "LegacyStore"}, proc.stdout
        assert "contract_verify" not in proc.stdout  # auto off: nothing verified during the run
        ledgers = list((project / ".build" / "contract_verify").glob("deployments-31337-*.sqlite"))
        assert len(ledgers) == 1
        entries = Ledger(ledgers[0]).entries()
        assert {(e["contract"], e["address"], e["status"]) for e in entries} == {
            (n, a, "pending") for n, a in deployed.items()
        }
        # The type deployed, for `ape verify all` to verify as such (types may share one code).
        assert {e["contract"]: e.get("type") for e in entries} == {
            "Box": "contracts/proxy/Box.sol:Box",
            "LegacyStore": "contracts/legacy/LegacyStore.sol:LegacyStore",
        }
        # And the compile group's input Ape built each from, whatever is recompiled or edited later.
        for entry in entries:
            kept = Ledger(ledgers[0]).kept_inputs([entry.get("input", "")]).get(entry.get("input", ""))
            assert kept is not None and entry["type"].split(":")[0] in kept["sources"], entry

        manifest = json.loads((project / ".build" / "__local__.json").read_text())
        from eth_utils import to_checksum_address

        other_box = to_checksum_address(
            anvil.deploy(manifest["contractTypes"]["Box"]["deploymentBytecode"]["bytecode"])
        )
        configure(project, deployments={"ethereum": {"local": [{"contract_type": "Box", "address": other_box}]}})

        proc = verify_cli(project, "all", "--json", real=True)
        assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
        outcomes = {r["address"]: r["outcome"] for r in json.loads(proc.stdout)["reports"]}
        assert outcomes == {deployed["Box"]: "verified", deployed["LegacyStore"]: "verified", other_box: "verified"}, (
            outcomes
        )
        statuses = {e["address"]: e["status"] for e in Ledger(ledgers[0]).entries()}
        assert statuses == {deployed["Box"]: "verified", deployed["LegacyStore"]: "verified", other_box: "verified"}

        # A ledger that cannot be read: said, and Ape's own record is still verified (the embedded
        # explorer kept it: its anvil still runs).
        ledgers[0].write_text("{not json")
        proc = verify_cli(project, "all", "--json")
        assert f"WARNING: cannot read the deployment ledger {ledgers[0]}" in proc.stderr, proc.stderr
        assert "No recorded deployments" not in proc.stdout + proc.stderr
        reports = json.loads(proc.stdout)["reports"]
        assert other_box in {r["address"] for r in reports} and all(r["ok"] for r in reports), reports
    finally:
        anvil.stop()


DEPLOY_MANY = """
import time

from ape import accounts, project


def main():
    deployer = accounts.test_accounts[0]
    for n in range({count}):
        contract = deployer.deploy(project.Box) if n % 2 else deployer.deploy(project.LegacyStore, f"n{{n}}", n)
        print("DEPLOYED", contract.contract_type.name, contract.address, flush=True)
        time.sleep(0.5)  # spread over the `ape verify all` runs beside it
"""


@pytest.mark.e2e
def test_verify_all_beside_a_deploy_with_auto_off_loses_no_deployment(compiled_example, tmp_path):
    """`ape run` with auto off records each deployment while `ape verify all` processes, run again
    and again beside it, record how theirs ended in the same ledger: once both are done and a last
    `ape verify all` has run, every deployment is in the ledger, verified."""
    from ape_contract_verify.workflow.ledger import Ledger

    count = 12
    anvil = Anvil()
    deploy = None
    try:
        project = copy_project(compiled_example, tmp_path / "beside")
        (project / "scripts" / "deploy_many.py").write_text(DEPLOY_MANY.format(count=count))
        configure(project, foundry={"host": anvil.url}, contract_verify={"auto": False, "poll_interval": 0.5})
        deploy = subprocess.Popen(
            [BIN / "ape", "run", "deploy_many", "--network", "ethereum:local:foundry"],
            cwd=project,
            env=tool_env(),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        folder = project / ".build" / "contract_verify"
        deadline = time.monotonic() + 300
        while not any(lg.entries() for lg in Ledger.in_project(types.SimpleNamespace(path=project))):
            assert deploy.poll() is None and time.monotonic() < deadline, "the deploy recorded nothing"
            time.sleep(0.2)
        beside = 0
        while deploy.poll() is None:  # `ape verify all` again and again while the deploy goes on
            proc = run(
                [BIN / "ape", "verify", "all", "--network", "ethereum:local:foundry", "--json"],
                cwd=project,
                timeout=300,
                check=False,
            )
            assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
            beside += 1
            assert time.monotonic() < deadline, "the deploy did not end"
        out, err = deploy.communicate(timeout=60)
        assert deploy.returncode == 0, out[-3000:] + err[-3000:]
        assert beside >= 1
        deployed = re.findall(r"^DEPLOYED (\w+) (0x[0-9a-fA-F]{40})$", out, re.M)
        assert len(deployed) == count, out

        last = run(
            [BIN / "ape", "verify", "all", "--network", "ethereum:local:foundry", "--json"],
            cwd=project,
            timeout=300,
            check=False,
        )
        assert last.returncode == 0, last.stdout[-3000:] + last.stderr[-3000:]
        (ledger,) = folder.glob("deployments-31337-*.sqlite")
        # Each ended verified: by the run of `ape verify all` that sent it, or found verified by a
        # later one (the embedded explorer keeps what it verified while the anvil runs).
        statuses = {
            e["address"]: (e["contract"], e["status"].replace("already verified", "verified"))
            for e in Ledger(ledger).entries()
        }
        assert statuses == {address: (name, "verified") for name, address in deployed}, statuses
    finally:
        if deploy is not None and deploy.poll() is None:
            deploy.kill()
            deploy.communicate(timeout=30)
        anvil.stop()
