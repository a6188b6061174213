"""Vyper through the plugin, end to end on anvil and a standalone `ape verify serve`: what the
vyper-json submission carries (every module and interface, no built-in, the exact settings, no
host paths), `ape run deploy`, `ape verify contract`, `ape verify all`, and the local pre-check's
refusals (nothing submitted) for wrong constructor arguments, another optimization mode and an
edited source; a comment alone is a partial match. One anvil and one explorer for the module."""

import json
from pathlib import Path

import pytest
import requests

from support import BIN, load_manifest, run
from support.e2e import anvil_project, copy_project, submissions, summary, verify_cli
from support.service import Anvil, ServerProcess, encode
from support.vyper import DATA, DEPLOYER, ESCROW_SOURCES, ESCROW_TYPES, TOKEN, deploy_escrow, edited_copy


@pytest.fixture(scope="module")
def anvil():
    node = Anvil()
    yield node
    node.stop()


@pytest.fixture(scope="module")
def explorer(anvil, tmp_path_factory):
    db = tmp_path_factory.mktemp("vyper-explorer") / "explorer.sqlite"
    server = ServerProcess(anvil.url, db, use_ape=True)
    server.db = db
    yield server
    server.stop()


@pytest.fixture(scope="module")
def vyproj(anvil, explorer, tmp_path_factory):
    """tests/data/vyper_project compiled, pointed at the module's anvil and explorer, and deployed
    by `ape run deploy` with auto verification on."""
    base = tmp_path_factory.mktemp("vyproj")
    compiled = copy_project(DATA, base / "compiled")
    run([BIN / "ape", "compile"], cwd=compiled, timeout=300)
    project = anvil_project(compiled, base / "vyproj", anvil, explorer.base_url)
    proc = run([BIN / "ape", "run", "deploy", "--network", "ethereum:local:foundry"], cwd=project, timeout=600)
    address = next(line.split()[1] for line in proc.stdout.splitlines() if line.startswith("Escrow 0x"))
    return project, proc, address


def record(explorer, address: str) -> dict:
    answer = requests.get(
        explorer.base_url, params={"module": "contract", "action": "getsourcecode", "address": address}, timeout=10
    ).json()
    return answer["result"][0]


def escrow_runtime(project: Path) -> str:
    return load_manifest(project)["contractTypes"]["Escrow"]["runtimeBytecode"]["bytecode"]


def test_ape_run_deploy_verifies_escrow(vyproj, explorer):
    _, proc, address = vyproj
    rows = summary(proc.stdout)
    assert rows["Escrow"][:2] == (address, "verified"), proc.stdout[-3000:]
    found = record(explorer, address)
    assert found["CompilerVersion"] == "vyper:0.4.3" and found["ContractName"] == "Escrow"
    assert found["CodeFormat"] == "vyper-json" and found["MatchType"] == "full"
    assert found["ConstructorArguments"] == encode(ESCROW_TYPES, [TOKEN, 250, DEPLOYER]).hex()


def test_the_submission_carries_modules_and_interfaces_and_the_exact_settings(vyproj, explorer):
    project, _, address = vyproj
    source_code = record(explorer, address)["SourceCode"]
    assert source_code.startswith("{{") and source_code.endswith("}}")
    sent = json.loads(source_code[1:-1])
    assert sent["language"] == "Vyper"
    # The contract, the .vyi interface it implements and the module it initializes; the built-in
    # `ethereum.ercs.IERC20` stays with the compiler.
    assert set(sent["sources"]) == ESCROW_SOURCES
    for path in ESCROW_SOURCES:
        assert sent["sources"][path]["content"] == (project / path).read_text()
    assert "ethereum/ercs" not in source_code and "interfaces" not in sent
    settings = {k: v for k, v in sent["settings"].items() if k != "outputSelection"}
    assert settings == {"enable_decimals": True, "evmVersion": "cancun", "optimize": "gas"}
    assert "search_paths" not in source_code and "site-packages" not in source_code
    # What ape-vyper recorded, minus the host's search paths.
    recorded = next(c for c in load_manifest(project)["compilers"] if c["name"] == "vyper")["settings"]
    assert recorded["search_paths"] and {k: v for k, v in recorded.items() if k in settings} == settings


def test_ape_verify_contract_by_name_and_address(vyproj, anvil, explorer):
    project, _, _ = vyproj
    address = deploy_escrow(anvil, project, rate_bps=300)
    proc = verify_cli(project, "contract", "Escrow", address, "--json")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    report = json.loads(proc.stdout)["reports"][0]
    assert (report["address"].lower(), report["outcome"], report["match"]) == (address.lower(), "verified", "full")
    assert record(explorer, address)["ConstructorArguments"] == encode(ESCROW_TYPES, [TOKEN, 300, DEPLOYER]).hex()


def test_ape_verify_all_finds_escrow_already_verified(vyproj, explorer):
    project, _, address = vyproj
    before = submissions(explorer.db)
    proc = verify_cli(project, "all", "--json")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    reports = {r["address"]: r for r in json.loads(proc.stdout)["reports"]}
    assert reports[address]["outcome"] == "already verified"
    assert submissions(explorer.db) == before


@pytest.fixture(scope="module")
def unverified(vyproj, anvil):
    """An Escrow that only the pre-check tests aim at, then the partial match."""
    return deploy_escrow(anvil, vyproj[0])


def precheck_refused(proc, explorer, before: int) -> str:
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "pre-check failed" in proc.stdout
    assert submissions(explorer.db) == before, "nothing may be submitted after a failed pre-check"
    return proc.stdout


def test_precheck_wrong_constructor_arguments(vyproj, unverified, explorer):
    before = submissions(explorer.db)
    args = f'"{TOKEN}", 999, "{DEPLOYER}"'
    out = precheck_refused(
        verify_cli(vyproj[0], "contract", "Escrow", unverified, "--constructor-args", args), explorer, before
    )
    assert "constructor arguments" in out
    assert "rate_bps (uint256): submitted 999, deployed 250" in out


def test_precheck_changed_optimization_mode(vyproj, unverified, explorer, tmp_path):
    project = vyproj[0]
    codesize = edited_copy(
        project,
        tmp_path / "codesize",
        "# pragma version 0.4.3\n",
        "# pragma version 0.4.3\n# pragma optimize codesize\n",
    )
    # `# pragma` with a space: vyper obeys it, ape-vyper's manifest still says "gas" (it only
    # reads `#pragma`); the submission must follow the pragma or vyper-json reports a conflict.
    assert escrow_runtime(codesize) != escrow_runtime(project), "codesize must really change the code"
    before = submissions(explorer.db)
    out = precheck_refused(verify_cli(codesize, "contract", "Escrow", unverified), explorer, before)
    assert (
        "optimizer: Compiled contract deployment bytecode does NOT match the transaction deployment bytecode. Compiled bytecode differs from the deployed code at byte"
        in out
    )
    assert "the deployed code was compiled with settings.optimize=gas: resubmit with that setting." in out


def test_precheck_changed_source_line(vyproj, unverified, explorer, tmp_path):
    edited = edited_copy(vyproj[0], tmp_path / "edited", "/ 10000.0", "/ 1000.0")
    before = submissions(explorer.db)
    out = precheck_refused(verify_cli(edited, "contract", "Escrow", unverified), explorer, before)
    assert (
        "source: Compiled contract deployment bytecode does NOT match the transaction deployment bytecode. Compiled bytecode differs from the deployed code at byte"
        in out
    )
    assert "so the source or the compiler most likely differs." in out


def test_a_comment_verifies_as_a_partial_match(vyproj, unverified, explorer, tmp_path):
    commented = edited_copy(
        vyproj[0], tmp_path / "commented", "# Escrow: implements", "# Escrow (edited comment): implements"
    )
    assert escrow_runtime(commented) == escrow_runtime(vyproj[0])
    proc = verify_cli(commented, "contract", "Escrow", unverified, "--json")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    report = json.loads(proc.stdout)["reports"][0]
    assert (report["outcome"], report["match"]) == ("verified", "partial")
    found = record(explorer, unverified)
    assert found["MatchType"] == "partial"
    assert "(edited comment)" in json.loads(found["SourceCode"][1:-1])["sources"]["contracts/Escrow.vy"]["content"]


def test_example_vault_through_ape_verify_contract(compiled_example, anvil, explorer, tmp_path):
    """The example's Vault (it imports a module) by `ape verify contract Vault ADDRESS`."""
    project = anvil_project(compiled_example, tmp_path / "example", anvil, explorer.base_url)
    creation = load_manifest(project)["contractTypes"]["Vault"]["deploymentBytecode"]["bytecode"]
    address = anvil.deploy(creation, encode(["string", "uint256", "address"], ["Vault", 25, DEPLOYER]))
    proc = verify_cli(project, "contract", "Vault", address, "--json")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    report = json.loads(proc.stdout)["reports"][0]
    assert (report["outcome"], report["match"]) == ("verified", "full")
    found = record(explorer, address)
    assert found["CompilerVersion"] == "vyper:0.4.3" and found["ContractName"] == "Vault"
    sent = json.loads(found["SourceCode"][1:-1])
    assert set(sent["sources"]) == {"contracts/vault/Vault.vy", "contracts/vault/fees.vy"}
    assert {k: v for k, v in sent["settings"].items() if k != "outputSelection"} == {
        "enable_decimals": False,
        "evmVersion": "cancun",
        "optimize": "gas",
    }


COUNTER_0310 = """# @version 0.3.10
# @license MIT

OWNER: public(immutable(address))
count: public(uint256)


@external
def __init__(owner_: address, start: uint256):
    OWNER = owner_
    self.count = start
"""


def test_vyper_0_3_10_contract_through_the_plugin(anvil, explorer, vyproj, tmp_path, monkeypatch):
    """ape-vyper compiles it with the side-venv Vyper (vvm finds .vyper/vvm/vyper-0.3.10, made by
    toolchain/install.sh); the pre-check and the explorer compile it with that version too."""
    vvm = Path(__file__).resolve().parents[2] / ".vyper" / "vvm"
    assert (vvm / "vyper-0.3.10").exists(), "run toolchain/install.sh: it installs vyper 0.3.10 for vvm"
    monkeypatch.setenv("VVM_BINARY_PATH", str(vvm))
    compiled = tmp_path / "compiled"
    (compiled / "contracts").mkdir(parents=True)
    (compiled / "ape-config.yaml").write_text("name: legacy-vyper\nvyper:\n  evm_version: shanghai\n")
    (compiled / "contracts" / "Counter310.vy").write_text(COUNTER_0310)
    run([BIN / "ape", "compile"], cwd=compiled, timeout=300)
    assert next(c for c in load_manifest(compiled)["compilers"] if c["name"] == "vyper")["version"] == "0.3.10"
    project = anvil_project(compiled, tmp_path / "project", anvil, explorer.base_url)
    creation = load_manifest(project)["contractTypes"]["Counter310"]["deploymentBytecode"]["bytecode"]
    address = anvil.deploy(creation, encode(["address", "uint256"], [DEPLOYER, 7]))
    proc = verify_cli(project, "contract", "Counter310", address, "--json")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    report = json.loads(proc.stdout)["reports"][0]
    assert (report["outcome"], report["match"]) == ("verified", "full")
    found = record(explorer, address)
    assert found["CompilerVersion"] == "vyper:0.3.10" and found["ContractName"] == "Counter310"
    assert json.loads(found["SourceCode"][1:-1])["sources"]["contracts/Counter310.vy"]["content"] == COUNTER_0310
    # Another contract type at that address: the pre-check names the compiler from the chain's metadata.
    before = submissions(explorer.db)
    out = precheck_refused(verify_cli(vyproj[0], "contract", "Escrow", address, "--force"), explorer, before)
    assert (
        "compiler: Compiled contract deployment bytecode does NOT match the transaction deployment bytecode. Compiler version differs: the deployed code's metadata says vyper 0.3.10, but vyper:0.4.3 was submitted"
        in out
    )
