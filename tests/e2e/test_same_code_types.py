"""Types with the same code (issue 21): a contract that inherits another and adds only a
constructor (Uniswap V2's test `ERC20 is UniswapV2ERC20`), and a copy of a contract under another
name in another file. With the metadata stripped their runtime codes are equal; each is still
verified as itself: by the type Ape deployed after a deploy, and by address alone from the full
runtime code (metadata hash included) and the creation code. The project's contracts folder is
a link, as over a published package's sources: every match is still full."""

import re
from types import SimpleNamespace

import pytest
import requests

from support import BIN, run
from support.e2e import ROW, configure, verify_cli
from support.service import Anvil, ServerProcess

OWN_PROJECT = True  # its own project, no dependency: beside the example's group (conftest.py)

CONFIG = """\
name: twins
solidity:
  version: 0.8.26
  optimize: true
  optimization_runs: 200
contract_verify:
  auto: true
"""

TOKEN = """\
// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;

contract Token {
    mapping(address => uint256) public balanceOf;
    uint256 public totalSupply;

    function transfer(address to, uint256 amount) external returns (bool) {
        balanceOf[msg.sender] -= amount;
        balanceOf[to] += amount;
        return true;
    }

    function _mint(address to, uint256 amount) internal {
        totalSupply += amount;
        balanceOf[to] += amount;
    }
}
"""

# Only a constructor added: the runtime code is Token's but for the metadata hash.
MINTED = """\
// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;

import {Token} from "../Token.sol";

contract Minted is Token {
    constructor(uint256 supply) {
        _mint(msg.sender, supply);
    }
}
"""

DEPLOY = """\
from ape import accounts, project


def main():
    me = accounts.test_accounts[0]
    for contract in (
        me.deploy(project.Token),
        me.deploy(project.Minted, 1000),
        me.deploy(project.Minted, 2000),
        me.deploy(project.Copy),
    ):
        print("DEPLOYED", contract.contract_type.name, contract.address)
"""


@pytest.fixture(scope="module")
def twins(tmp_path_factory):
    root = tmp_path_factory.mktemp("twins")
    project = root / "twins"
    # The contracts folder is a link to sources kept elsewhere, as a project over a published
    # package's sources has it (the corpus's Uniswap V2 links node_modules): the compile that was
    # deployed names them contracts/…, whatever the link's target.
    published = root / "published"
    (published / "test").mkdir(parents=True)
    (project / "scripts").mkdir(parents=True)
    (project / "contracts").symlink_to(published, target_is_directory=True)
    (project / "ape-config.yaml").write_text(CONFIG)
    (published / "Token.sol").write_text(TOKEN)
    (published / "Copy.sol").write_text(TOKEN.replace("contract Token", "contract Copy"))
    (published / "test" / "Minted.sol").write_text(MINTED)
    (project / "scripts" / "deploy.py").write_text(DEPLOY)
    run([BIN / "ape", "compile"], cwd=project, timeout=300)
    anvil = Anvil()
    servers = []
    try:
        for name in ("after-deploy", "by-address"):
            servers.append(ServerProcess(anvil.url, root / f"{name}.sqlite", use_ape=True))
        configure(
            project,
            foundry={"host": anvil.url},
            contract_verify={
                "auto": True,
                "max_retries": 1,
                "poll_interval": 0.5,
                "calls_per_second": 50,
                "explorers": {"ethereum": {"local": {"url": servers[0].base_url}}},
            },
        )
        # The deploy as a user runs it: its own process, with the hook Ape loads there.
        proc = run([BIN / "ape", "run", "deploy", "--network", "ethereum:local:foundry"], cwd=project, timeout=600)
        deployed = re.findall(r"^DEPLOYED (\w+) (0x[0-9a-fA-F]{40})$", proc.stdout, re.M)
        assert len(deployed) == 4, proc.stdout[-3000:] + proc.stderr[-3000:]
        yield SimpleNamespace(project=project, proc=proc, deployed=deployed, explorers=servers)
    finally:
        for server in servers:
            server.stop()
        anvil.stop()


def source_record(explorer: ServerProcess, address: str) -> dict:
    answer = requests.get(
        explorer.base_url, params={"module": "contract", "action": "getsourcecode", "address": address}, timeout=10
    ).json()
    return answer["result"][0]


def rows(output: str) -> dict:
    return {m.group(2).lower(): (m.group(1).strip(), m.group(3)) for m in ROW.finditer(output)}


def test_after_deploy_each_is_verified_as_the_type_deployed(twins):
    said = rows(twins.proc.stdout)
    for name, address in twins.deployed:
        assert said.get(address.lower()) == (name, "verified"), (
            twins.proc.stdout[-3000:] + "\n---stderr\n" + twins.proc.stderr[-3000:]
        )
        record = source_record(twins.explorers[0], address)
        assert (record["ContractName"], record["MatchType"]) == (name, "full"), record["ContractName"]
    assert "matches several contract types" not in twins.proc.stdout


def test_the_ledger_keeps_the_deployed_type(twins):
    from ape_contract_verify.workflow.ledger import Ledger

    entries = [e for ledger in Ledger.in_project(SimpleNamespace(path=twins.project)) for e in ledger.entries()]
    types = {e["address"].lower(): e.get("type") for e in entries}
    expected = {
        "Token": "contracts/Token.sol:Token",
        "Minted": "contracts/test/Minted.sol:Minted",
        "Copy": "contracts/Copy.sol:Copy",
    }
    for name, address in twins.deployed:
        assert types[address.lower()] == expected[name]


def test_by_address_alone_each_is_identified_as_itself(twins):
    """On a second explorer that has seen nothing, with no name given."""
    configure(
        twins.project, contract_verify={"explorers": {"ethereum": {"local": {"url": twins.explorers[1].base_url}}}}
    )
    try:
        for name, address in twins.deployed:
            proc = verify_cli(twins.project, "contract", address)
            assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
            assert rows(proc.stdout).get(address.lower()) == (name, "verified"), proc.stdout
            record = source_record(twins.explorers[1], address)
            assert (record["ContractName"], record["MatchType"]) == (name, "full")
    finally:
        configure(
            twins.project, contract_verify={"explorers": {"ethereum": {"local": {"url": twins.explorers[0].base_url}}}}
        )


def test_the_dry_run_names_each_as_itself(twins, tmp_path):
    for name, address in twins.deployed:
        proc = verify_cli(twins.project, "contract", address, "--dry-run", "--out", str(tmp_path / address))
        assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
        assert name in proc.stdout and "several contract types" not in proc.stdout


def test_types_identical_in_both_codes_are_ambiguous_and_named_fully(twins, monkeypatch):
    """Two types that nothing tells apart (the same contract in two files, deployed without a
    metadata hash and not through a creation transaction we can read): the answer names both,
    fully qualified, and says how to choose."""
    from dataclasses import replace

    from ape import Project

    from ape_contract_verify.derive import artifacts
    from ape_contract_verify.evm import bytecode

    token = artifacts.find_artifact("Token", Project(twins.project))
    twin = replace(token, source_id="contracts/b/Token.sol")
    monkeypatch.setattr(artifacts, "iter_artifacts", lambda project, **kw: iter([token, twin]))
    code = bytecode.to_bytes(token.contract_type.runtime_bytecode.bytecode)
    stripped = bytecode.strip_metadata(code)
    no_hash = stripped + b"\x00" * (len(code) - len(stripped))
    with pytest.raises(artifacts.ArtifactNotFound) as err:
        artifacts.identify("0x" + "ab" * 20, None, runtime=no_hash, creation=lambda: None)
    said = str(err.value)
    assert "contracts/Token.sol:Token" in said and "contracts/b/Token.sol:Token" in said
    assert "identical in runtime and creation code" in said
    assert (
        "ape verify contract contracts/Token.sol:Token 0x" in said
        or "ape verify contract contracts/b/Token.sol:Token 0x" in said
    )


def test_ties_are_broken_by_the_full_runtime_then_the_creation_code(twins, monkeypatch):
    from ape import Project

    from ape_contract_verify.derive import artifacts
    from ape_contract_verify.evm import bytecode

    project = Project(twins.project)
    token, minted = artifacts.find_artifact("Token", project), artifacts.find_artifact("Minted", project)
    monkeypatch.setattr(artifacts, "iter_artifacts", lambda project, **kw: iter([token, minted]))
    runtime = {a.name: bytecode.to_bytes(a.contract_type.runtime_bytecode.bytecode) for a in (token, minted)}
    stripped = bytecode.strip_metadata(runtime["Token"])
    assert stripped == bytecode.strip_metadata(runtime["Minted"]) and runtime["Token"] != runtime["Minted"]
    asked = []

    def creation(code):
        return lambda: asked.append(1) or code

    for name in ("Token", "Minted"):  # the metadata hash settles it: the creation code is not read
        assert artifacts.identify("0x" + "ab" * 20, None, runtime=runtime[name], creation=creation(None)).name == name
    assert asked == []
    no_hash = stripped + b"\x00" * (len(runtime["Token"]) - len(stripped))
    minted_creation = bytecode.to_bytes(minted.contract_type.deployment_bytecode.bytecode) + (1000).to_bytes(32, "big")
    assert (
        artifacts.identify("0x" + "ab" * 20, None, runtime=no_hash, creation=creation(minted_creation)).name == "Minted"
    )
    assert asked == [1]
    with pytest.raises(artifacts.ArtifactNotFound, match="several contract types"):
        artifacts.identify("0x" + "ab" * 20, None, runtime=no_hash, creation=creation(b"\x60\x80" * 40))
