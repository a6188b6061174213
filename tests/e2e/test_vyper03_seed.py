"""A Vyper 0.3.7 factory whose internal-function order follows Python's hash seed
(tests/data/vyper03_seed_project), compiled by Ape (ape-vyper through vvm, a `vyper` subprocess
inheriting Ape's environment) under the first PYTHONHASHSEED whose code is not the one the
plugin's own compile gives: as a user's `ape compile` under another seed would. `ape run deploy`
with auto verification verifies it on the embedded explorer, and `ape verify contract ADDRESS`
another deployment of it, each pre-check and explorer finding the internal-function order that
reproduces the deployed code; the summary and the report name it. The engine's side is
tests/engine/test_engine_hash_seed.py.

The search names the orders rather than replaying seeds, so whatever Ape's environment and input
made of the seed, its code is one of the orders: no seed is skipped."""

import json
import re
from pathlib import Path

import pytest
from eth_utils import to_checksum_address

from ape_contract_verify.engine.compilers import compile_input, with_output_selection
from support import BIN, load_manifest, run
from support.e2e import configure, copy_project, summary, verify_cli
from support.service import Anvil, encode
from support.vyper03 import kept_record, vyper_executable

OWN_PROJECT = True  # its own project, no dependency: beside the example's group (conftest.py)

PROJECT = Path(__file__).resolve().parents[1] / "data" / "vyper03_seed_project"
FILE = "contracts/ProxyFactory.vy"
IMPLEMENTATION = "0x" + "22" * 20
# What ape-vyper sends for vyper 0.3.7 (tests/support/vyper03.py).
SETTINGS = {"evmVersion": "paris", "optimize": True}
NOTE = re.compile(
    r"hash seed: internal functions in the order _\w+(, _\w+)* reproduced the deployed code "
    r"\(vyper 0\.3\.7 lays them out by a set hashed by address, vyper#3369"
)


@pytest.fixture(scope="module")
def anvil():
    node = Anvil()
    yield node
    node.stop()


def plugin_runtime() -> str:
    """The code the plugin's own compile (seed 0, its fixed environment) gives for what it sends."""
    sent = {
        "language": "Vyper",
        "sources": {FILE: {"content": (PROJECT / FILE).read_text()}},
        "settings": dict(SETTINGS),
    }
    output = compile_input("vyper:0.3.7", with_output_selection(sent, FILE, "ProxyFactory"))
    return output["contracts"][FILE]["ProxyFactory"]["evm"]["deployedBytecode"]["object"].removeprefix("0x")


def manifest_type(project) -> dict:
    return load_manifest(project)["contractTypes"]["ProxyFactory"]


@pytest.fixture(scope="module")
def project(anvil, tmp_path_factory):
    """The project compiled by `ape compile` under the first PYTHONHASHSEED (1 to 8) whose code
    differs from the plugin's compile: the seeds differ on purpose."""
    vvm = vyper_executable("0.3.7").parents[2] / "vvm"
    assert (vvm / "vyper-0.3.7").exists(), "run toolchain/install.sh: it links vyper 0.3.7 for vvm"
    plain = plugin_runtime()
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("VVM_BINARY_PATH", str(vvm))
        project = copy_project(PROJECT, tmp_path_factory.mktemp("vyper03_seed") / "project")
        for seed in range(1, 9):
            patch.setenv("PYTHONHASHSEED", str(seed))
            run([BIN / "ape", "compile", "--force"], cwd=project, timeout=300)
            if manifest_type(project)["runtimeBytecode"]["bytecode"].removeprefix("0x") != plain:
                break
        else:
            pytest.fail("every Ape compile under seeds 1 to 8 gave the plugin's code: nothing to search")
        print(f"Ape's compile under PYTHONHASHSEED={seed}")
        patch.delenv("PYTHONHASHSEED")  # the user's later commands run under random seeds
        configure(
            project, foundry={"host": anvil.url}, contract_verify={"auto": True, "max_retries": 1, "poll_interval": 0.5}
        )
        yield project


def assert_verified_record(record: dict) -> None:
    assert (record["CompilerVersion"], record["ContractName"], record["MatchType"]) == (
        "vyper:0.3.7",
        "ProxyFactory",
        "full",
    )
    sent = json.loads(record["SourceCode"][1:-1])
    assert sent["sources"][FILE]["content"] == (PROJECT / FILE).read_text()
    assert {k: v for k, v in sent["settings"].items() if k != "outputSelection"} == SETTINGS


def test_ape_run_deploy_verifies_it_and_the_summary_names_the_order(project):
    proc = run([BIN / "ape", "run", "deploy", "--network", "ethereum:local:foundry"], cwd=project, timeout=600)
    address = next(line.split()[1] for line in proc.stdout.splitlines() if line.startswith("ProxyFactory 0x"))
    row = summary(proc.stdout)["ProxyFactory"]
    assert row[:2] == (address, "verified"), proc.stdout[-3000:] + proc.stderr[-3000:]
    assert NOTE.search(row[2]), row
    assert_verified_record(kept_record(project, address))


def test_ape_verify_contract_by_address_names_the_order(project, anvil):
    creation = manifest_type(project)["deploymentBytecode"]["bytecode"]
    address = to_checksum_address(anvil.deploy(creation, encode(["address"], [IMPLEMENTATION])))
    proc = verify_cli(project, "contract", address, "--json")
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    (report,) = json.loads(proc.stdout)["reports"]
    assert (report["contract"], report["outcome"], report["match"]) == ("ProxyFactory", "verified", "full"), report
    assert any(NOTE.match(warning) for warning in report["warnings"]), report["warnings"]
    assert_verified_record(kept_record(project, address))
