"""From build artifacts and the chain to verified contracts, through the real commands:
`ape run deploy` with auto mode (embedded explorer on ethereum:local:test; standalone explorer on
anvil), `ape verify contract`, `ape verify all`, and the local pre-check's refusals. That `ape test`
never verifies is tests/e2e/test_after_deploy_hook.py's."""

import json
import re
import subprocess
import threading
from pathlib import Path

import pytest
import yaml

from support import BIN, run, tool_env
from support.e2e import DEPLOYED, ROW, anvil_project, as_json, configure, copy_project, submissions, summary, verify_cli
from support.service import Anvil, ServerProcess

# Every contract the example deploys, and what the summary must say of it.
SOURCES = [
    "Token",
    "MathLib",
    "Calculator",
    "Box",
    "SimpleProxy",
    "BoxUUPS",
    "UpgradeableBeacon",
    "BeaconProxy",
    "CloneFactory",
    "LegacyStore",
    "Vault",
    "Escrow",
    "viair:ViaIRCounter",
    "tuned:TunedStore",
    "openzeppelin:ERC1967Proxy",
    "openzeppelin:TransparentUpgradeableProxy",
    "openzeppelin:UpgradeableBeacon",
    "openzeppelin:BeaconProxy",
]
# Created inside TransparentUpgradeableProxy's constructor: found through the run's events, and
# its constructor arguments through the node's traces (anvil), or by replaying its block in the
# process (eth-tester, which has no traces and no node to fork: issue 28).
PROXY_ADMIN = "openzeppelin:ProxyAdmin"
PROXY_LINKS = [
    "SimpleProxy (proxy link)",
    "BeaconProxy (proxy link)",
    "EIP-1167 clone (proxy link)",
    "openzeppelin:ERC1967Proxy (proxy link)",
    "openzeppelin:TransparentUpgradeableProxy (proxy link)",
    "openzeppelin:BeaconProxy (proxy link)",
]
DEPLOY_LINES = 19
ADMIN_SLOT = "0xb53127684a568b3173ae13b9f8a6016e243e63b6e8ee1178d6a717850b5d6103"


# --- ethereum:local:test, the local explorer in process -------------------------------------------------


def test_ape_run_deploy_verifies_everything_on_the_embedded_explorer(deployed_local):
    rows = summary(deployed_local.stdout)
    # The ProxyAdmin TransparentUpgradeableProxy's constructor creates: eth-tester has no trace API
    # and no URL to fork, so its creation code comes from its block replayed in the process.
    for name in SOURCES + PROXY_LINKS + [PROXY_ADMIN]:
        assert name in rows, f"{name} missing from the summary:\n{deployed_local.stdout}"
        assert rows[name][1] == "verified", f"{name}: {rows[name]}"
    partial = [name for name, row in rows.items() if "partial match" in row[2]]
    assert not partial, f"the plugin sends what makes a full match: {partial}"
    # The deploy script's own output is intact: verification never replaces a deploy.
    assert len(DEPLOYED.findall(deployed_local.stdout)) == DEPLOY_LINES
    assert "not verified" not in deployed_local.stderr, deployed_local.stderr[-2000:]
    # The local explorer runs in the process: no server, no port.
    assert "LISTENING" not in deployed_local.stderr, deployed_local.stderr[-2000:]


# --- anvil, standalone `ape verify serve` ----------------------------------------------------


@pytest.fixture(scope="module")
def anvil(example_on_anvil):
    return example_on_anvil.anvil


@pytest.fixture(scope="module")
def explorer(example_on_anvil):
    return example_on_anvil.explorer


@pytest.fixture(scope="module")
def on_anvil(example_on_anvil):
    """The example deployed to anvil by `ape run deploy`, verified beside it on the standalone explorer
    (the session's: tests/conftest.py)."""
    return example_on_anvil.project, example_on_anvil.proc, example_on_anvil.deployed


def anvil_rpc(project: Path, method: str, *params):
    import requests

    url = yaml.safe_load((project / "ape-config.yaml").read_text())["foundry"]["host"]
    return requests.post(
        url, json={"jsonrpc": "2.0", "id": 1, "method": method, "params": list(params)}, timeout=30
    ).json()["result"]


def test_ape_run_deploy_verifies_everything_on_a_standalone_explorer(on_anvil):
    _, proc, deployed = on_anvil
    rows = summary(proc.stdout)
    for name in SOURCES + PROXY_LINKS + [PROXY_ADMIN]:
        assert rows.get(name, (None, None))[1] == "verified", f"{name}: {rows.get(name)}\n{proc.stdout[-3000:]}"
    partial = [name for name, row in rows.items() if "partial match" in row[2]]
    assert not partial, f"the plugin sends what makes a full match: {partial}"
    assert rows["Token"][0] == deployed["Token"]
    assert rows["EIP-1167 clone (proxy link)"][0] == deployed["Clone"]


def test_the_clone_and_the_proxy_admin_read_back_through_getsourcecode(on_anvil, explorer):
    """What the run verified beyond the script's own deploys: the EIP-1167 clone answers as a proxy
    of Box (its implementation's ABI and sources), the factory-made ProxyAdmin with its own source."""
    import requests

    project, _, deployed = on_anvil

    def record(address: str) -> dict:
        params = {"module": "contract", "action": "getsourcecode", "address": address}
        return requests.get(explorer.base_url, params=params, timeout=10).json()["result"][0]

    clone, box = record(deployed["Clone"]), record(deployed["Box"])
    assert clone["Proxy"] == "1" and clone["Implementation"].lower() == deployed["Box"].lower(), clone["Implementation"]
    assert clone["ABI"] == box["ABI"] and clone["ContractName"] == "Box" and clone["SourceCode"] == box["SourceCode"]
    admin_word = anvil_rpc(project, "eth_getStorageAt", deployed["TransparentProxy"], ADMIN_SLOT, "latest")
    admin = record("0x" + admin_word[-40:])
    assert admin["ContractName"] == "ProxyAdmin" and "contract ProxyAdmin" in admin["SourceCode"], admin["ContractName"]
    assert admin["MatchType"] == "full"


def test_verify_all_and_contract_name_read_apes_own_deployment_records(on_anvil, tmp_path):
    """A project with no ledger (auto was off), whose deployments Ape knows from the
    `deployments:` section of ape-config.yaml: `ape verify all` and `ape verify contract NAME`
    find them through Ape's records."""
    project, _, deployed = on_anvil
    bare = copy_project(project, tmp_path / "records")  # the copy leaves the plugin's ledger behind
    assert not list((bare / ".build").glob("contract_verify/deployments-*"))
    configure(
        bare,
        deployments={
            "ethereum": {
                "local": [
                    {"contract_type": "Box", "address": deployed["Box"]},
                    {"contract_type": "Calculator", "address": deployed["Calculator"]},
                ]
            }
        },
    )
    proc = verify_cli(bare, "all", "--json")
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    found = {r["address"].lower(): r for r in as_json(proc)["reports"] if r["kind"] == "source"}
    for name in ("Box", "Calculator"):
        assert found[deployed[name].lower()]["ok"], found.get(deployed[name].lower())
    proc = verify_cli(bare, "contract", "Calculator", "--json")
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert [r["address"].lower() for r in as_json(proc)["reports"]] == [deployed["Calculator"].lower()]
    proc = verify_cli(bare, "contract", "NoSuchType")
    assert proc.returncode == 2 and "No contract type named 'NoSuchType'" in proc.stdout + proc.stderr


def test_verify_all_finds_everything_already_verified(on_anvil, explorer):
    project, _, _ = on_anvil
    before = submissions(explorer.db)
    proc = verify_cli(project, "all", "--json")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    report = as_json(proc)
    sources = [r for r in report["reports"] if r["kind"] == "source"]
    assert len(sources) >= len(SOURCES) and all(r["outcome"] == "already verified" for r in sources), sources
    assert submissions(explorer.db) - before == sum(r["kind"] == "proxy" for r in report["reports"])


def test_address_alone_identifies_every_example_contract(on_anvil):
    project, _, deployed = on_anvil
    script = (
        "import json, sys\n"
        "from ape import networks, project\n"
        "from ape_contract_verify.derive.artifacts import identify\n"
        "addresses = json.loads(sys.argv[1])\n"
        "with networks.parse_network_choice('ethereum:local:foundry'):\n"
        "    print(json.dumps({name: identify(a, project).label for name, a in addresses.items()}))\n"
    )
    wanted = {k: v for k, v in deployed.items() if k != "Clone"}
    # The ProxyAdmin that OpenZeppelin's transparent proxy created: its address is in the admin slot.
    admin_word = anvil_rpc(project, "eth_getStorageAt", deployed["TransparentProxy"], ADMIN_SLOT, "latest")
    wanted["ProxyAdmin"] = "0x" + admin_word[-40:]
    proc = run([BIN / "python", "-c", script, json.dumps(wanted)], cwd=project, timeout=300)
    found = json.loads(proc.stdout.strip().splitlines()[-1])
    labels = {
        "ViaIRCounter": "viair:ViaIRCounter",
        "TunedStore": "tuned:TunedStore",
        "UUPSProxy": "openzeppelin:ERC1967Proxy",
        "TransparentProxy": "openzeppelin:TransparentUpgradeableProxy",
        "OZBeacon": "openzeppelin:UpgradeableBeacon",
        "OZBeaconProxy": "openzeppelin:BeaconProxy",
        "ProxyAdmin": PROXY_ADMIN,
    }
    assert found == {name: labels.get(name, name) for name in wanted}


def test_address_alone_verifies_a_clone_as_a_proxy(on_anvil):
    project, _, deployed = on_anvil
    proc = verify_cli(project, "contract", deployed["Clone"], "--json")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    reports = as_json(proc)["reports"]
    link = next(r for r in reports if r["kind"] == "proxy")
    assert link["address"] == deployed["Clone"] and link["outcome"] == "verified"
    assert deployed["Box"].lower() in link["reason"].lower()


def test_precheck_stops_wrong_constructor_args(on_anvil, explorer):
    project, _, deployed = on_anvil
    before = submissions(explorer.db)
    args = '"Wrong Name", "EXT", 1000000000000000000000, "0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266", []'
    proc = verify_cli(project, "contract", "Token", deployed["Token"], "--constructor-args", args, "--force", real=True)
    assert proc.returncode == 1
    assert "pre-check failed" in proc.stdout and "constructor arguments" in proc.stdout
    assert "name_ (string): submitted 'Wrong Name', deployed 'Example Token'" in proc.stdout
    assert "holders" in proc.stdout  # the array differs too
    assert submissions(explorer.db) == before, "nothing may be submitted after a failed pre-check"


def test_precheck_stops_a_source_edited_after_deployment(on_anvil, explorer, tmp_path):
    project = copy_project(on_anvil[0], tmp_path / "edited")
    deployed = on_anvil[2]
    source = project / "contracts" / "math" / "Calculator.sol"
    source.write_text(
        source.read_text().replace("value * scale, basisPoints, 10_000", "value * scale, basisPoints, 100_000")
    )
    before = submissions(explorer.db)
    proc = verify_cli(project, "contract", "Calculator", deployed["Calculator"], "--force")
    assert proc.returncode == 1, proc.stdout
    assert "pre-check failed" in proc.stdout and "source:" in proc.stdout
    assert re.search(r"differs from the deployed code at byte \d+", proc.stdout)
    assert submissions(explorer.db) == before


def test_precheck_names_changed_optimizer_runs(on_anvil, explorer, tmp_path):
    project = copy_project(on_anvil[0], tmp_path / "runs")
    deployed = on_anvil[2]
    configure(project, solidity={"optimize": True, "optimization_runs": 10000})
    run([BIN / "ape", "compile", "--force"], cwd=project, timeout=600)
    before = submissions(explorer.db)
    proc = verify_cli(project, "contract", "Token", deployed["Token"], "--force")
    assert proc.returncode == 1, proc.stdout
    assert "pre-check failed" in proc.stdout and "optimizer runs" in proc.stdout
    assert (
        "compiled with optimizer.runs=200: resubmit with that setting." in proc.stdout
    )  # what the deployed code was built with
    assert submissions(explorer.db) == before


def test_every_example_contract_verifies_flattened(on_anvil, anvil, tmp_path):
    """A second, empty explorer on the same chain: `ape verify all --flatten` verifies them all."""
    project, _, deployed = on_anvil
    fresh = ServerProcess(anvil.url, tmp_path / "flat.sqlite", use_ape=True)
    try:
        proc = verify_cli(project, "all", "--flatten", "--json", "--explorer-url", fresh.base_url, timeout=900)
        assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-4000:]
        reports = as_json(proc)["reports"]
        by_address = {r["address"]: r for r in reports if r["kind"] == "source"}
        for name in ("Token", "Calculator", "LegacyStore", "ViaIRCounter", "TunedStore", "Vault", "Escrow"):
            assert by_address[deployed[name]]["outcome"] == "verified", by_address.get(deployed[name])
        import requests

        record = requests.get(
            fresh.base_url,
            params={"module": "contract", "action": "getsourcecode", "address": deployed["Token"]},
            timeout=10,
        ).json()["result"][0]
        assert record["SourceCode"].lstrip().startswith("// SPDX-License-Identifier: MIT")
        assert "contract ERC20Base" in record["SourceCode"] and "import " not in record["SourceCode"]
        vault = requests.get(
            fresh.base_url,
            params={"module": "contract", "action": "getsourcecode", "address": deployed["Vault"]},
            timeout=10,
        ).json()["result"][0]
        assert vault["CompilerVersion"] == "vyper:0.4.3"
    finally:
        fresh.stop()


# Enough deploys before and after the explorer dies (at Box) to lose none; the whole example's
# 19 would only make the test slower.
FEW_DEPLOYS = """
from ape import accounts, project


def main():
    deployer = accounts.test_accounts[0]
    deployed = {"Token": deployer.deploy(project.Token, "T", "T", 10**18, deployer.address, [])}
    deployed["Box"] = deployer.deploy(project.Box)
    deployed["LegacyStore"] = deployer.deploy(project.LegacyStore, "legacy", 5)
    deployed["Vault"] = deployer.deploy(project.Vault, "V", 25, deployer.address)
    deployed["BoxUUPS"] = deployer.deploy(project.BoxUUPS)
    for name, contract in deployed.items():
        print(f"{name:18} {contract.address}\\n", end="")  # one write: the plugin's warnings interleave
"""
FEW_DEPLOY_LINES = 5


def test_explorer_going_away_loses_no_deploy_and_verify_all_finishes(compiled_example, tmp_path):
    """The explorer dies in the middle of `ape run deploy`: every deploy completes, the summary
    says what is left, and `ape verify all` finishes it once the explorer is back."""
    node = Anvil()
    port = None
    try:
        server = ServerProcess(node.url, tmp_path / "gone.sqlite", use_ape=True)
        port = server.base_url.rsplit(":", 1)[1].split("/")[0]
        project = anvil_project(compiled_example, tmp_path / "example", node, server.base_url)
        (project / "scripts" / "few.py").write_text(FEW_DEPLOYS)
        proc = subprocess.Popen(
            [str(BIN / "ape"), "run", "few", "--network", "ethereum:local:foundry"],
            cwd=project,
            env=tool_env(),
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        lines: list[str] = []

        def pump():
            for line in proc.stdout:
                lines.append(line)
                if "Contract 'Box' deployed" in line:
                    server.kill()  # gone, mid-run

        reader = threading.Thread(target=pump, daemon=True)
        reader.start()
        proc.wait(timeout=900)
        reader.join(timeout=30)
        output = "".join(lines)
        assert proc.returncode == 0, output[-4000:]
        assert len(DEPLOYED.findall(output)) == FEW_DEPLOY_LINES, "every deploy completes"
        rows = summary(output)
        left = [name for name, row in rows.items() if row[1] != "verified"]
        assert left, "the explorer went away: something must be left"
        # Counted as they ended, and the advice that works on a node that outlives the run.
        every = ROW.findall(output)
        not_ok = [row for row in every if row[2] not in ("verified", "already verified")]
        assert f"contract_verify: ethereum:local:foundry: {len(every)} rows, " in output, output[-3000:]
        assert (
            f"{len(not_ok)} not verified; `ape verify all --network ethereum:local:foundry` finishes them" in output
        ), output[-3000:]

        back = ServerProcess(node.url, tmp_path / "gone.sqlite", use_ape=True, extra=("--port", port))
        try:
            again = run(
                [BIN / "ape", "verify", "all", "--network", "ethereum:local:foundry", "--json"],
                cwd=project,
                timeout=900,
                check=False,
            )
            assert again.returncode == 0, again.stdout[-4000:] + again.stderr[-4000:]
            reports = as_json(again)["reports"]
            assert all(r["ok"] for r in reports)
            from ape_contract_verify.workflow.ledger import Ledger

            ledger = next((project / ".build" / "contract_verify").glob("deployments-*.sqlite"))
            statuses = {e["contract"]: e["status"] for e in Ledger(ledger).entries()}
            assert all(s in ("verified", "already verified") for s in statuses.values()), statuses
        finally:
            back.stop()
    finally:
        node.stop()


# --- publish=True, fail_on_error, `ape verify proxy`, stale manifest libraries ----------------


def test_publish_true_on_a_dev_network_verifies_without_apes_error(compiled_example, tmp_path):
    project = copy_project(compiled_example, tmp_path / "published")
    (project / "scripts" / "publish.py").write_text(
        "from ape import accounts, project\n\n"
        "def main():\n"
        "    owner = accounts.test_accounts[0]\n"
        "    box = owner.deploy(project.Box, publish=True)\n"
        "    print('Box', box.address)\n"
    )
    proc = run([BIN / "ape", "run", "publish", "--network", "ethereum:local:test"], cwd=project, timeout=600)
    output = proc.stdout + proc.stderr
    assert "Can only publish deployments on a live network" not in output
    assert "explorer verification failed" not in output
    assert summary(proc.stdout)["Box"][1] == "verified"


def test_fail_on_error_makes_ape_run_fail_and_keeps_the_deploys(compiled_example, tmp_path):
    import socket

    project = copy_project(compiled_example, tmp_path / "strict")
    with socket.socket() as sock:  # a port nothing listens on: the explorer is down
        sock.bind(("127.0.0.1", 0))
        down = f"http://127.0.0.1:{sock.getsockname()[1]}/api"
    configure(
        project,
        contract_verify={
            "auto": True,
            "fail_on_error": True,
            "max_retries": 0,
            "explorers": {"ethereum": {"local": {"url": down}}},
        },
    )
    (project / "scripts" / "admin.py").write_text(
        "from ape import accounts, project\n\n"
        "def main():\n"
        "    owner = accounts.test_accounts[0]\n"
        "    box = owner.deploy(project.Box)\n"
        "    oz = project.dependencies['openzeppelin']['5.7.0']\n"
        "    init = box.initialize.encode_input(3, owner.address)\n"
        "    proxy = owner.deploy(oz.TransparentUpgradeableProxy, box.address, owner.address, init)\n"
        "    print('TransparentProxy', proxy.address)\n"
    )
    proc = run([BIN / "ape", "run", "admin", "--network", "ethereum:local:test"], cwd=project, timeout=600, check=False)
    assert proc.returncode == 1, proc.stdout[-3000:] + proc.stderr[-3000:]
    rows = summary(proc.stdout)
    for name in ("Box", "openzeppelin:TransparentUpgradeableProxy", PROXY_ADMIN):
        assert name in rows and rows[name][1] == "error" and "is down" in rows[name][2], (
            proc.stdout[-3000:] + proc.stderr[-3000:]
        )
    assert DEPLOYED.search(proc.stdout), "the deploy itself completed and printed"


def test_verify_proxy_command_links_and_enforces_the_expected_implementation(on_anvil):
    project, _, deployed = on_anvil
    ok = verify_cli(project, "proxy", deployed["SimpleProxy"], "--expected-implementation", deployed["Box"], "--json")
    assert ok.returncode == 0, ok.stdout + ok.stderr
    assert deployed["Box"].lower() in as_json(ok)["reports"][0]["reason"].lower()
    wrong = verify_cli(project, "proxy", deployed["SimpleProxy"], "--expected-implementation", deployed["Token"])
    assert wrong.returncode == 1
    assert "different than the retrieved implementation" in wrong.stdout + wrong.stderr
    bad = verify_cli(project, "proxy", "0x1234", real=True)
    assert bad.returncode == 2 and "0x followed by 40 hex digits" in bad.stderr and "Traceback" not in bad.stderr


def test_a_stale_library_address_in_the_manifest_is_replaced_by_the_chains(on_anvil, tmp_path):
    project = copy_project(on_anvil[0], tmp_path / "stale")
    deployed = on_anvil[2]
    manifest_path = project / ".build" / "__local__.json"
    manifest = json.loads(manifest_path.read_text())
    stale = "0x000000000000000000000000000000000000dEaD"
    for compiler in manifest["compilers"]:
        for libs in (compiler.get("settings") or {}).get("libraries", {}).values():
            for name in libs:
                libs[name] = stale
    manifest_path.write_text(json.dumps(manifest))
    proc = verify_cli(project, "contract", "Calculator", deployed["Calculator"], "--force", "--json")
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    report = as_json(proc)["reports"][0]
    assert report["ok"]
    assert any(stale in w and deployed["MathLib"].lower() in w.lower() for w in report["warnings"]), report
