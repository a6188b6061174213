"""A Vyper 0.3.7 project through the plugin on anvil, verified on the embedded local explorer: its
VaultFactory keeps four immutables after the runtime code. `ape run deploy` with auto verification
then `ape verify contract ADDRESS` in this process for another deployment, each read back from
the store `ape` keeps for the anvil; an edited constant and a
deployment running past its immutables are refused by the pre-check. The engine's side of it is
tests/engine/test_engine_vyper03.py."""

import json

import pytest
from eth_utils import to_checksum_address

from support import BIN, load_manifest, run
from support.e2e import configure, copy_project, summary, verify_cli
from support.service import Anvil, encode
from support.vyper03 import FILE, PROJECT, TYPES, kept_record, vyper_executable, with_extra_trailing

OWN_PROJECT = True  # its own project, no dependency: beside the example's group (conftest.py)

IMPLEMENTATION = "0x" + "22" * 20


@pytest.fixture(scope="module")
def anvil():
    node = Anvil()
    yield node
    node.stop()


@pytest.fixture(scope="module")
def project(anvil, tmp_path_factory):
    """tests/data/vyper03_project compiled by ape-vyper with vyper 0.3.7 (vvm finds
    .vyper/vvm/vyper-0.3.7, made by toolchain/install.sh) and pointed at anvil, with no explorer
    URL: verification goes to the embedded explorer."""
    vvm = vyper_executable("0.3.7").parents[2] / "vvm"
    assert (vvm / "vyper-0.3.7").exists(), "run toolchain/install.sh: it links vyper 0.3.7 for vvm"
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("VVM_BINARY_PATH", str(vvm))
        project = copy_project(PROJECT, tmp_path_factory.mktemp("vyper03") / "project")
        run([BIN / "ape", "compile"], cwd=project, timeout=300)
        configure(
            project, foundry={"host": anvil.url}, contract_verify={"auto": True, "max_retries": 1, "poll_interval": 0.5}
        )
        yield project  # the variable holds for the module's tests (they compile edited copies)


def manifest_type(project) -> dict:
    return load_manifest(project)["contractTypes"]["VaultFactory"]


def deploy(anvil, project, fee: int, label: str, creation: bytes = b"") -> tuple[str, bytes]:
    args = encode(TYPES, [anvil.accounts[0], fee, IMPLEMENTATION, label])
    address = anvil.deploy(creation or manifest_type(project)["deploymentBytecode"]["bytecode"], args)
    return to_checksum_address(address), args


def assert_verified_record(record: dict, args: bytes) -> None:
    assert (record["CompilerVersion"], record["ContractName"], record["MatchType"]) == (
        "vyper:0.3.7",
        "VaultFactory",
        "full",
    )
    assert record["ConstructorArguments"] == args.hex() and record["CodeFormat"] == "vyper-json"
    sent = json.loads(record["SourceCode"][1:-1])
    assert sent["sources"][FILE]["content"] == (PROJECT / FILE).read_text()
    assert {k: v for k, v in sent["settings"].items() if k != "outputSelection"} == {
        "evmVersion": "paris",
        "optimize": True,
    }


def test_the_manifest_says_vyper_0_3_7_and_the_chain_keeps_the_immutables_after_the_runtime(project, anvil):
    assert next(c for c in load_manifest(project)["compilers"] if c["name"] == "vyper")["version"] == "0.3.7"
    address, _ = deploy(anvil, project, 5, "layout")
    on_chain = bytes.fromhex(anvil.rpc("eth_getCode", address, "latest")[2:])
    runtime = bytes.fromhex(manifest_type(project)["runtimeBytecode"]["bytecode"][2:])
    # ADMIN, FEE_BPS, IMPLEMENTATION and LABEL (String[32]: length and one word) follow the runtime.
    assert on_chain[: len(runtime)] == runtime
    assert on_chain[len(runtime) :] == encode(
        ["address", "uint256", "address", "uint256", "bytes32"],
        [anvil.accounts[0], 5, IMPLEMENTATION, 6, b"layout".ljust(32, b"\0")],
    )


def test_ape_run_deploy_verifies_the_factory_on_the_embedded_explorer(project, anvil):
    proc = run([BIN / "ape", "run", "deploy", "--network", "ethereum:local:foundry"], cwd=project, timeout=600)
    address = next(line.split()[1] for line in proc.stdout.splitlines() if line.startswith("VaultFactory 0x"))
    row = summary(proc.stdout)["VaultFactory"]
    assert row[:2] == (address, "verified"), proc.stdout[-3000:]
    assert row[2] == "local explorer", row  # in process: no server, no link
    record = kept_record(project, address)
    assert_verified_record(record, encode(TYPES, [anvil.accounts[0], 30, IMPLEMENTATION, "first"]))


def test_ape_verify_contract_by_address_alone(project, anvil):
    address, args = deploy(anvil, project, 40, "second")
    proc = verify_cli(project, "contract", address, "--json")
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    (report,) = json.loads(proc.stdout)["reports"]
    assert (report["contract"], report["address"], report["outcome"], report["match"]) == (
        "VaultFactory",
        address,
        "verified",
        "full",
    )
    assert report["link"] is None  # in process: no server, no link
    assert_verified_record(kept_record(project, address), args)


def precheck_refused(proc) -> str:
    assert proc.returncode == 1, proc.stdout[-3000:] + proc.stderr[-3000:]
    (report,) = json.loads(proc.stdout)["reports"]
    assert report["outcome"] == "pre-check failed" and report["match"] is None, report
    return report["reason"]


def test_an_edited_constant_is_refused(project, anvil, tmp_path):
    edited = copy_project(project, tmp_path / "edited")
    path = edited / FILE
    assert "BPS: constant(uint256) = 10000\n" in path.read_text()
    path.write_text(path.read_text().replace("BPS: constant(uint256) = 10000\n", "BPS: constant(uint256) = 10001\n"))
    run([BIN / "ape", "compile", "--force"], cwd=edited, timeout=300)  # VVM_BINARY_PATH: the module's
    runtime = manifest_type(edited)["runtimeBytecode"]["bytecode"]
    assert runtime != manifest_type(project)["runtimeBytecode"]["bytecode"], "the constant must change the code"
    address, _ = deploy(anvil, project, 30, "original")
    reason = precheck_refused(verify_cli(edited, "contract", "VaultFactory", address, "--json"))
    assert reason.startswith(
        "source: Compiled contract deployment bytecode does NOT match the transaction deployment bytecode. "
        "Compiled bytecode differs from the deployed code at byte "
    ), reason
    offset = int(reason.split(" at byte ", 1)[1].split()[0])
    assert offset < len(runtime) // 2 - 1, reason  # inside the code, not where the immutables start


def test_a_deployment_running_past_its_immutables_is_refused(project, anvil):
    creation = bytes.fromhex(manifest_type(project)["deploymentBytecode"]["bytecode"][2:])
    runtime_length = len(manifest_type(project)["runtimeBytecode"]["bytecode"]) // 2 - 1
    address, _ = deploy(anvil, project, 30, "longer", creation=with_extra_trailing(creation, runtime_length))
    reason = precheck_refused(verify_cli(project, "contract", "VaultFactory", address, "--json"))
    assert "Compiled contract deployment bytecode does NOT match the transaction deployment bytecode. " in reason
    assert (
        f"The deployed code is the compiled runtime code ({runtime_length} bytes) followed by 192 bytes, "
        "but the contract's immutables take 160 bytes" in reason
    ), reason


def test_a_contract_importing_an_interface_verifies_by_address(project, anvil):
    """Registry imports interfaces/IVaultFactory.vy: the vyper-json sent carries it under
    `interfaces`, where vyper 0.3.7 looks it up (snekmate 0.0.1's ERC20 and ERC4626 do this)."""
    code = load_manifest(project)["contractTypes"]["Registry"]["deploymentBytecode"]["bytecode"]
    factory, _ = deploy(anvil, project, 7, "registry")
    address = to_checksum_address(anvil.deploy(code, encode(["address"], [factory])))
    proc = verify_cli(project, "contract", address, "--json")
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    (report,) = json.loads(proc.stdout)["reports"]
    assert (report["contract"], report["outcome"], report["match"]) == ("Registry", "verified", "full"), report
    record = kept_record(project, address)
    assert record["ContractName"] == "Registry" and record["MatchType"] == "full"
    sent = json.loads(record["SourceCode"][1:-1])
    assert list(sent["sources"]) == ["contracts/Registry.vy"]
    assert list(sent["interfaces"]) == ["contracts/interfaces/IVaultFactory.vy"]
