"""Contract types that live only in a dependency's imported file (issue 14, Fidelity).

A project imports OpenZeppelin 5 as an Ape dependency that is never compiled (no
`--include-dependencies`) and deploys its own subclass of TransparentUpgradeableProxy, whose
constructor creates a ProxyAdmin with CREATE. ProxyAdmin is in no manifest: the plugin finds it in
the import closure of the project's sources, in address-only mode and in auto mode, and the
request verifies on a real `ape verify serve` against a real anvil."""

import json
import shutil
from pathlib import Path

import pytest
import requests

from support import BIN, REPO, load_manifest, run
from support.e2e import DEPLOYED, configure, summary, verify_cli
from support.service import Anvil, ServerProcess, encode

ADMIN_SLOT = "0xb53127684a568b3173ae13b9f8a6016e243e63b6e8ee1178d6a717850b5d6103"
# The dependency's name is this test's own: Ape keeps a compiled dependency under its name and
# version, and the example's OpenZeppelin (compiled with --include-dependencies) is "openzeppelin".
DEPENDENCY = "oz-closure"
ADMIN_LABEL = f"{DEPENDENCY}:ProxyAdmin"
ADMIN_UNIT = f"contracts/.cache/{DEPENDENCY}/5.7.0/proxy/transparent/ProxyAdmin.sol"
NO_MATCH = "matches no contract type of the project or its dependencies"

CONFIG = """\
name: closure
solidity:
  optimize: true
  optimization_runs: 200
  import_remapping:
    - "@openzeppelin/contracts={name}/5.7.0"
dependencies:
  - name: {name}
    local: {oz}
    version: 5.7.0
    config_override:
      contracts_folder: .
"""

SOURCE = """\
// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;

import {TransparentUpgradeableProxy} from "@openzeppelin/contracts/proxy/transparent/TransparentUpgradeableProxy.sol";

contract Box {
    uint256 public value;

    function setValue(uint256 newValue) external {
        value = newValue;
    }
}

/// OpenZeppelin's constructor creates this proxy's ProxyAdmin (OpenZeppelin 5.7 wants init data).
contract BoxProxy is TransparentUpgradeableProxy {
    constructor(address logic, address owner)
        TransparentUpgradeableProxy(logic, owner, abi.encodeCall(Box.setValue, (7)))
    {}
}
"""

DEPLOY_SCRIPT = """\
from ape import accounts, project


def main():
    me = accounts.test_accounts[0]
    box = me.deploy(project.Box)
    print("Box", box.address)
    proxy = me.deploy(project.BoxProxy, box.address, me.address)
    print("BoxProxy", proxy.address)
"""

# Creation code that deploys 10 bytes of runtime no compiler made, which act (an SSTORE) and so
# are no data contract: nothing can match it.
STRANGER = "600a600c600039600a6000f3" + "600160005500deadbeef"


@pytest.fixture(scope="module")
def closure(tmp_path_factory):
    """The project compiled (its own sources only), anvil and `ape verify serve` beside it, and a
    BoxProxy deployed without auto mode: (project, anvil, explorer, deployed)."""
    root = tmp_path_factory.mktemp("closure")
    forget_package(DEPENDENCY)  # an interrupted run's
    project = root / "closure"
    (project / "contracts").mkdir(parents=True)
    (project / "scripts").mkdir()
    # A copy of the local OpenZeppelin: Ape also keeps a dependency under a name made of its path.
    oz = shutil.copytree(REPO / "toolchain" / "openzeppelin-contracts", root / "openzeppelin-contracts")
    (project / "ape-config.yaml").write_text(CONFIG.format(oz=oz, name=DEPENDENCY))
    (project / "contracts" / "Boxed.sol").write_text(SOURCE)
    (project / "scripts" / "deploy.py").write_text(DEPLOY_SCRIPT)
    run([BIN / "ape", "compile"], cwd=project, timeout=300)
    anvil = Anvil()
    explorer = None
    try:
        explorer = ServerProcess(anvil.url, root / "explorer.sqlite", use_ape=True)
        configure(
            project,
            foundry={"host": anvil.url},
            contract_verify={
                "auto": False,
                "max_retries": 1,
                "explorers": {"ethereum": {"local": {"url": explorer.base_url}}},
            },
        )
        types = load_manifest(project)["contractTypes"]
        box = anvil.deploy(types["Box"]["deploymentBytecode"]["bytecode"])
        proxy = anvil.deploy(
            types["BoxProxy"]["deploymentBytecode"]["bytecode"],
            encode(["address", "address"], [box, anvil.accounts[0]]),
        )
        admin = "0x" + anvil.rpc("eth_getStorageAt", proxy, ADMIN_SLOT, "latest")[-40:]
        stranger = anvil.deploy(STRANGER)
        yield project, anvil, explorer, {"Box": box, "BoxProxy": proxy, "ProxyAdmin": admin, "stranger": stranger}
    finally:
        if explorer is not None:
            explorer.stop()
        anvil.stop()
        forget_package(DEPENDENCY)
        forget_package(str(oz).replace("/", "_"))


def _ape_data_folder() -> Path:
    """Ape's own answer: this worker's folder (tests/conftest.py), the `ape` it starts inherit it."""
    from ape import config

    return Path(config.DATA_FOLDER)


def forget_package(name: str) -> None:
    """Ape's copies and builds of this test's dependency, by one of its two names."""
    for folder in (_ape_data_folder() / "packages").glob(f"*/{name}"):
        shutil.rmtree(folder, ignore_errors=True)


def source_record(explorer: ServerProcess, address: str) -> dict:
    answer = requests.get(
        explorer.base_url, params={"module": "contract", "action": "getsourcecode", "address": address}, timeout=10
    ).json()
    return answer["result"][0]


def test_the_project_compiles_no_dependency(closure):
    project, _, _, _ = closure
    manifest = load_manifest(project)
    # What makes the case: ProxyAdmin is in no manifest the plugin reads without a compile.
    assert set(manifest["contractTypes"]) == {"Box", "BoxProxy"}
    manifests = list((_ape_data_folder() / "packages" / "manifests").glob(f"{DEPENDENCY}/*.json"))
    assert manifests, f"Ape installed no {DEPENDENCY} in {_ape_data_folder()}"
    for path in manifests:
        assert not json.loads(path.read_text()).get("contractTypes"), path


def test_address_alone_verifies_the_proxy_admin(closure):
    project, _, explorer, deployed = closure
    proc = verify_cli(project, "contract", deployed["ProxyAdmin"], "--json")
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    reports = json.loads(proc.stdout)["reports"]
    source = next(r for r in reports if r["kind"] == "source")
    assert source["contract"] == ADMIN_LABEL and source["outcome"] == "verified", source
    record = source_record(explorer, deployed["ProxyAdmin"])
    assert record["ContractName"] == "ProxyAdmin" and record["MatchType"] == "full", record["ContractName"]
    submitted = json.loads(record["SourceCode"][1:-1])  # Etherscan's {{…}}
    assert "contract ProxyAdmin is Ownable" in submitted["sources"][ADMIN_UNIT]["content"]
    # The settings of the project source that imports it: its optimizer and its remapping.
    assert submitted["settings"]["optimizer"] == {"enabled": True, "runs": 200}
    assert submitted["settings"]["remappings"] == [f"@openzeppelin/contracts=contracts/.cache/{DEPENDENCY}/5.7.0"]
    # Ape compiled ProxyAdmin's file with the project's sources, at once: that input is sent (issue 40).
    assert {"contracts/Boxed.sol", ADMIN_UNIT} <= set(submitted["sources"])
    # Its constructor argument (the owner) came from the creating transaction's trace.
    assert record["ConstructorArguments"].lower().endswith(closure[1].accounts[0][2:].lower())


def test_code_that_matches_nothing_still_gets_the_clear_error(closure):
    project, _, explorer, deployed = closure
    proc = verify_cli(project, "contract", deployed["stranger"], "--json")
    assert proc.returncode != 0
    said = proc.stdout + proc.stderr
    assert NO_MATCH in said, said[-3000:]
    # The dependency was not compiled whole (minutes for OpenZeppelin): the answer says so, and how.
    assert f"not compiled, so not searched beyond what the project imports: {DEPENDENCY}" in said
    assert "`ape compile --include-dependencies`" in said
    assert "Traceback" not in proc.stderr
    assert source_record(explorer, deployed["stranger"])["SourceCode"] == ""


def test_the_closure_is_compiled_only_when_needed_and_once(closure, tmp_path):
    """In process, with the project's own compile cache: the project's own types need no compile;
    the first unmatched address compiles the closure once, the second reuses it."""
    from ape import Project

    from ape_contract_verify.derive import artifacts
    from ape_contract_verify.engine.compilers import CompileCache

    project_dir, anvil, _, deployed = closure
    artifacts._MEMO.clear()
    project = Project(project_dir)
    cache = CompileCache(directory=tmp_path)
    code = {name: bytes.fromhex(anvil.rpc("eth_getCode", address, "latest")[2:]) for name, address in deployed.items()}
    assert artifacts.identify(deployed["Box"], project, runtime=code["Box"], cache=cache).label == "Box"
    assert cache.compiles == 0
    admin = artifacts.identify(deployed["ProxyAdmin"], project, runtime=code["ProxyAdmin"], cache=cache)
    assert (admin.label, admin.source_id, admin.dependency) == (ADMIN_LABEL, ADMIN_UNIT, DEPENDENCY)
    assert admin.compiler_version == load_manifest(project_dir)["compilers"][0]["version"]
    assert cache.compiles == 1
    with pytest.raises(artifacts.ArtifactNotFound, match=NO_MATCH):
        artifacts.identify(deployed["stranger"], project, runtime=code["stranger"], cache=cache)
    assert (cache.compiles, cache.hits) == (1, 0)  # memoised for the run: not even a cache lookup
    assert artifacts.find_artifact(ADMIN_LABEL, project).source_id == ADMIN_UNIT


def test_auto_mode_verifies_the_proxy_admin_a_deploy_created(closure, tmp_path):
    project, _, explorer, _ = closure
    configure(project, contract_verify={"auto": True})
    try:
        proc = run([BIN / "ape", "run", "deploy", "--network", "ethereum:local:foundry"], cwd=project, timeout=300)
    finally:
        configure(project, contract_verify={"auto": False})
    rows = summary(proc.stdout)
    deployed = dict(DEPLOYED.findall(proc.stdout))
    assert rows.get(ADMIN_LABEL, (None, None))[1] == "verified", proc.stdout[-3000:] + proc.stderr[-3000:]
    admin = rows[ADMIN_LABEL][0]
    assert admin.lower() not in {a.lower() for a in deployed.values()}  # made by the constructor, not by deploy
    record = source_record(explorer, admin)
    assert (record["ContractName"], record["MatchType"]) == ("ProxyAdmin", "full"), record["MatchType"]
    assert ADMIN_UNIT in json.loads(record["SourceCode"][1:-1])["sources"]
