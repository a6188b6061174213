"""The foundation: the plugin installs and registers, the offline toolchain is complete,
and the example project compiles and deploys with the settings its config asks for."""

import json
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from support import (
    BIN,
    EXAMPLE,
    REPO,
    SOLC_CACHE_ENV,
    SOLC_DAEMON_SOCKET,
    cpu_seconds,
    load_manifest,
    run,
    start_solc_daemon,
    stop_solc_daemon,
    tool_env,
)
from support.e2e import ape_in_process

SOLC_VERSIONS = ["0.4.26", "0.5.17", "0.8.26", "0.8.37"]
NATIVE_VERSION = re.compile(r"^Version: (\d+\.\d+\.\d+)\+commit\.([0-9a-f]{8})\.Linux\.g\+\+$", re.M)


# --- the toolchain -------------------------------------------------------------------------


@pytest.mark.parametrize("version", SOLC_VERSIONS)
def test_solc_shim_answers_like_native_solc(version):
    shim = REPO / ".solcx" / f"solc-v{version}"
    assert shim.is_file(), f"{shim} missing: run `make install`"
    out = run([shim, "--version"], cwd=REPO).stdout
    match = NATIVE_VERSION.search(out)
    assert match and match.group(1) == version, out
    # The shim answers --version without solc-js (install.sh kept its answer): still solc-js's own.
    package = REPO / "toolchain" / "node_modules" / f"solc-{version}"
    assert out == run(["node", REPO / "toolchain" / "solc-native.js", package, "--version"], cwd=REPO).stdout


def test_py_solc_x_sees_every_shim():
    import solcx

    installed = {str(v) for v in solcx.get_installed_solc_versions()}
    assert set(SOLC_VERSIONS) <= installed


def test_solc_shim_compiles_and_links():
    import solcx
    from solcx.install import get_executable

    source = (
        "pragma solidity ^0.8.0; library L { function f() public pure returns (uint) { return 7; } }"
        " contract C { function g() public pure returns (uint) { return L.f(); } }"
    )
    out = solcx.compile_standard(
        {
            "language": "Solidity",
            "sources": {"c.sol": {"content": source}},
            "settings": {"outputSelection": {"*": {"*": ["evm.bytecode.object"]}}},
        },
        solc_binary=get_executable("0.8.26"),
    )
    unlinked = out["contracts"]["c.sol"]["C"]["evm"]["bytecode"]["object"]
    assert "__$" in unlinked  # a placeholder for L
    linked = solcx.link_code(unlinked, {"c.sol:L": "0x" + "ab" * 20}, solc_binary=get_executable("0.8.26"))
    assert "__$" not in linked and "ab" * 20 in linked


def test_solc_shim_keeps_an_answer_only_when_no_import_was_read(tmp_path):
    """SOLC_NATIVE_CACHE (the suite's, one run): the same input from another base path is answered
    from what solc-js said once; an input that read an import from disk is compiled every time."""
    shim, cache = REPO / ".solcx" / "solc-v0.8.26", tmp_path / "kept"
    (tmp_path / "B.sol").write_text("pragma solidity ^0.8.0; contract B {}")

    def compile_(content: str, base: Path, kept: bool = True) -> tuple[str, str]:
        selection = {"*": {"*": ["evm.bytecode.object"]}}
        body = {
            "language": "Solidity",
            "sources": {"A.sol": {"content": content}},
            "settings": {"outputSelection": selection},
        }
        env = {**tool_env(), SOLC_CACHE_ENV: str(cache) if kept else ""}
        proc = subprocess.run(
            [shim, "--standard-json", "--base-path", base],
            input=json.dumps(body),
            env=env,
            capture_output=True,
            text=True,
        )
        assert proc.returncode == 0, proc.stderr
        return proc.stdout, json.loads(proc.stdout)["contracts"]["A.sol"]["A"]["evm"]["bytecode"]["object"]

    alone = "pragma solidity ^0.8.0; contract A { uint x = 1; }"
    first, code = compile_(alone, tmp_path)
    assert code and len(list(cache.iterdir())) == 1
    (entry,) = cache.iterdir()
    entry.write_text(first.replace(code, "ab"))  # what a second compile answers comes from the entry
    assert compile_(alone, tmp_path / "elsewhere")[1] == "ab"
    assert compile_(alone, tmp_path, kept=False)[1] == code  # unset: solc-js compiles
    importing = 'pragma solidity ^0.8.0; import "B.sol"; contract A is B {}'
    assert compile_(importing, tmp_path)[1]
    assert list(cache.iterdir()) == [entry], "an answer shaped by a file read from disk was kept"


def test_vyper_and_anvil_are_on_path():
    env = tool_env()
    vyper = shutil.which("vyper", path=env["PATH"])
    anvil = shutil.which("anvil", path=env["PATH"])
    assert vyper and anvil, "vyper and anvil must be on the venv's PATH"
    assert run([vyper, "--version"], cwd=REPO).stdout.startswith("0.4.3")
    assert "anvil" in run([anvil, "--version"], cwd=REPO).stdout


def test_activate_script_exports_the_local_compilers():
    activate = (BIN / "activate").read_text()
    assert f'SOLCX_BINARY_PATH="{REPO / ".solcx"}"' in activate


# --- the plugin ----------------------------------------------------------------------------


def test_ape_verify_help_lists_the_command_group(tmp_path):
    # The executable finds the command through the plugin's entry point; Ape's own listing of its
    # commands, the same entry points read by Ape's CLI object, is asked in this process.
    proc = run([BIN / "ape", "verify", "--help"], cwd=EXAMPLE)
    assert "Verify deployed contracts" in proc.stdout
    top = ape_in_process(tmp_path, "--help")
    assert top.returncode == 0, top.stderr
    assert re.search(r"^\s+verify\s", top.stdout, re.M), top.stdout


def test_ape_commands_print_no_pydantic_settings_warning(compiled_example):
    """ape-solidity's `import_remapping` field made pydantic-settings warn on every command; the
    plugin silences exactly that warning (the command still compiles, and says so). The command:
    the session's `ape compile --include-dependencies` (tests/conftest.py keeps what it printed)."""
    said = (compiled_example.parent / "ape-compile.out").read_text()
    assert "IncompleteFieldDefinitionWarning" not in said
    assert "compiled" in said or "Nothing to compile" in said


# What a new Python process in the compiled example sees, asked once for the tests below: the
# modules importing the plugin adds after Ape, the plugin's config section, the dependencies'
# manifests.
PROBE = """
import json, sys
import ape
before = set(sys.modules)
import ape_contract_verify
added = sorted(set(sys.modules) - before)
from ape import config, project
c = config.get_config("contract_verify")
manifests = {
    name: json.loads(project.dependencies[name]["local"].manifest.model_dump_json(by_alias=True))
    for name in ("viair", "tuned")
}
print(json.dumps({"added": added, "config": [type(c).__name__, c.auto, c.calls_per_second], "manifests": manifests}))
"""


@pytest.fixture(scope="module")
def probed(compiled_example) -> dict:
    out = run([BIN / "python", "-c", PROBE], cwd=compiled_example).stdout
    return json.loads(out.strip().splitlines()[-1])


def test_plugin_config_section_is_registered(probed):
    assert probed["config"] == ["ContractVerifyConfig", True, 3.0]


def test_example_config_documents_every_key():
    from ape_contract_verify.config import ContractVerifyConfig, ExplorerConfig, TargetConfig

    text = (REPO / "ape-config.example.yaml").read_text()
    section = yaml.safe_load(text)["contract_verify"]
    assert set(section) == set(ContractVerifyConfig.model_fields)
    for network in section["explorers"]["ethereum"].values():
        named = {key for key, value in network.items() if isinstance(value, dict)}  # further targets
        assert set(network) - named <= set(ExplorerConfig.model_fields)
        for key in named:
            assert set(network[key]) <= set(TargetConfig.model_fields), key
    for key in ContractVerifyConfig.model_fields:  # each key carries a comment
        assert re.search(rf"^\s+{key}:.*#", text, re.M) or re.search(rf"#.*\n\s+{key}:", text), key
    ContractVerifyConfig.model_validate(section)


def test_bad_config_value_names_the_key():
    from pydantic import ValidationError

    from ape_contract_verify.config import ContractVerifyConfig

    with pytest.raises(ValidationError) as err:
        ContractVerifyConfig.model_validate({"license": "NOT-A-LICENSE"})
    assert "license" in str(err.value) and "MIT" in str(err.value)
    with pytest.raises(ValidationError) as err:
        ContractVerifyConfig.model_validate({"calls_per_second": 0})
    assert "calls_per_second" in str(err.value)


def test_plugin_import_is_light(probed):
    """Ape imports every plugin on every command: the plugin must not pull heavy modules."""
    added = probed["added"]
    heavy = [
        m for m in added if m.split(".")[0] in {"requests", "starlette", "uvicorn", "solcx", "sqlite3", "vyper", "web3"}
    ]
    assert heavy == [], heavy


# --- the example project -------------------------------------------------------------------

EXPECTED_TYPES = {
    "Token",
    "ERC20Base",
    "Ownable",
    "MathLib",
    "Box",
    "SimpleProxy",
    "BoxUUPS",
    "UpgradeableBeacon",
    "BeaconProxy",
    "CloneFactory",
    "LegacyStore",
    "Vault",
    "Escrow",
}


def test_example_compiles_every_contract(compiled_example):
    manifest = load_manifest(compiled_example)
    assert EXPECTED_TYPES <= set(manifest["contractTypes"])
    for name in EXPECTED_TYPES:
        assert manifest["contractTypes"][name]["deploymentBytecode"]["bytecode"].startswith("0x")


def test_manifest_settings_match_ape_config(compiled_example, probed):
    config = yaml.safe_load((compiled_example / "ape-config.yaml").read_text())
    manifest = load_manifest(compiled_example)
    by_name = {}
    for compiler in manifest["compilers"]:
        for ct in compiler["contractTypes"]:
            by_name[ct] = compiler

    solidity = by_name["Token"]
    assert solidity["name"] == "solidity"
    assert re.fullmatch(r"0\.8\.\d+\+commit\.[0-9a-f]{8}", solidity["version"])
    assert solidity["settings"]["optimizer"] == {
        "enabled": config["solidity"]["optimize"],
        "runs": config["solidity"]["optimization_runs"],
    }
    assert "viaIR" not in solidity["settings"] and "evmVersion" not in solidity["settings"]
    assert by_name["LegacyStore"]["version"].startswith("0.5.17+commit.")

    vyper = by_name["Vault"]
    assert vyper["name"] == "vyper" and vyper["version"].startswith("0.4.3")
    assert vyper["settings"]["evmVersion"] == config["vyper"]["evm_version"]

    viair = probed["manifests"]["viair"]["compilers"][0]
    assert viair["settings"]["viaIR"] is True
    tuned = probed["manifests"]["tuned"]["compilers"][0]
    tuned_config = yaml.safe_load((compiled_example / "packages/tuned/ape-config.yaml").read_text())
    assert tuned["settings"]["evmVersion"] == tuned_config["solidity"]["evm_version"] == "paris"
    assert tuned["settings"]["optimizer"]["runs"] == tuned_config["solidity"]["optimization_runs"]
    assert tuned["version"].startswith("0.8.26+commit.8a97fa7a")


def test_deploy_script_deploys_everything(deployed_local):
    proc = deployed_local
    addresses = dict(re.findall(r"^(\w+)\s+(0x[0-9a-fA-F]{40})$", proc.stdout, re.M))
    expected = EXPECTED_TYPES - {"ERC20Base", "Ownable"} | {
        "Calculator",
        "Clone",
        "ViaIRCounter",
        "TunedStore",
        "UUPSProxy",
        "TransparentProxy",
        "OZBeacon",
        "OZBeaconProxy",
    }
    assert expected <= set(addresses), proc.stdout
    assert len(set(addresses.values())) == len(addresses)


def _shim_compile(body: dict, cwd: Path, kept: Path | None) -> subprocess.CompletedProcess:
    env = {**tool_env(), SOLC_CACHE_ENV: str(kept) if kept else ""}
    shim = REPO / ".solcx" / "solc-v0.8.26"
    return subprocess.run(
        [shim, "--standard-json"], input=json.dumps(body), env=env, cwd=cwd, capture_output=True, text=True, timeout=120
    )


def _log_lines(folder: Path, word: str) -> list[str]:
    log = folder / "daemon.log"
    return [line for line in log.read_text().splitlines() if line.startswith(word)] if log.exists() else []


def test_solc_daemon_answers_the_shims_as_solc_js_in_their_own_process(tmp_path):
    """toolchain/solc-daemon.js (the suite's, one run): a shim asks it instead of loading solc-js.
    The answer is byte for byte the shim's own, imports read from the shim's folder; a shim killed
    mid-compile stops that compile and the next is answered; with no daemon the shim compiles."""
    (tmp_path / "B.sol").write_text("pragma solidity ^0.8.0; contract B { uint public b = 2; }")
    importing = {  # an import read from disk: never kept, so every compile below asks the daemon
        "language": "Solidity",
        "sources": {"A.sol": {"content": 'pragma solidity ^0.8.0; import "B.sol"; contract A is B {}'}},
        "settings": {"outputSelection": {"*": {"*": ["abi", "evm.bytecode.object"]}}},
    }
    folder = tmp_path / "kept"
    own = _shim_compile(importing, tmp_path, None)
    assert own.returncode == 0 and "B.sol" in json.loads(own.stdout)["contracts"], own.stderr
    daemon = start_solc_daemon(folder, workers=1)
    try:
        assert (folder / SOLC_DAEMON_SOCKET).exists(), (folder / "daemon.log").read_text()
        asked = _shim_compile(importing, tmp_path, folder)
        assert asked.returncode == 0 and asked.stdout == own.stdout, asked.stderr
        assert len(_log_lines(folder, "compiled solc-0.8.26")) == 1

        # A compile of seconds (via IR), its shim killed once the daemon runs it.
        many = "\n".join(
            f"function f{i}(uint a) external pure returns (uint) {{ return a * {i} + (a ^ {i}); }}" for i in range(150)
        )
        slow = {
            "language": "Solidity",
            "sources": {"S.sol": {"content": f"pragma solidity ^0.8.0; contract S {{ {many} }}"}},
            "settings": {
                "viaIR": True,
                "optimizer": {"enabled": True},
                "outputSelection": {"*": {"*": ["evm.bytecode.object"]}},
            },
        }
        env = {**tool_env(), SOLC_CACHE_ENV: str(folder)}
        shim = subprocess.Popen(
            [REPO / ".solcx" / "solc-v0.8.26", "--standard-json"],
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            env=env,
        )
        shim.stdin.write(json.dumps(slow).encode())
        shim.stdin.close()
        deadline = time.monotonic() + 30
        while len(_log_lines(folder, "started")) < 2 and time.monotonic() < deadline:
            time.sleep(0.05)
        shim.kill()
        shim.wait(timeout=10)
        while not _log_lines(folder, "stopped") and time.monotonic() < deadline:
            time.sleep(0.05)
        assert _log_lines(folder, "stopped"), (folder / "daemon.log").read_text()
        busy = cpu_seconds(daemon.pid)
        time.sleep(1)
        assert cpu_seconds(daemon.pid) - busy < 0.3, "the daemon still compiles for a shim that is gone"
        # Its one worker was stopped with the compile: the next compile gets a new one.
        assert _shim_compile(importing, tmp_path, folder).stdout == own.stdout
        assert len(_log_lines(folder, "compiled solc-0.8.26")) == 2
    finally:
        stop_solc_daemon(daemon)
    assert not (folder / SOLC_DAEMON_SOCKET).exists()
    (folder / SOLC_DAEMON_SOCKET).write_text("")  # not a socket: nobody answers, the shim compiles
    alone = _shim_compile(importing, tmp_path, folder)
    assert alone.returncode == 0 and alone.stdout == own.stdout, alone.stderr
    assert len(_log_lines(folder, "compiled")) == 2


def test_solc_daemon_ends_with_the_process_that_started_it(tmp_path):
    starter = (
        "import subprocess, sys, time\n"
        f"daemon = subprocess.Popen(['node', {str(REPO / 'toolchain' / 'solc-daemon.js')!r}, {str(tmp_path)!r}])\n"
        "print(daemon.pid, flush=True)\n"
        "time.sleep(2)\n"
    )
    pid = int(subprocess.run([sys.executable, "-c", starter], capture_output=True, text=True, timeout=60).stdout)

    def alive() -> str:
        try:
            return Path(f"/proc/{pid}/status").read_text()
        except OSError:
            return ""

    # Ended: gone, or a zombie its new parent (init, a subreaper) has not reaped yet.
    deadline = time.monotonic() + 15
    while alive() and "zombie" not in alive() and time.monotonic() < deadline:
        time.sleep(0.1)
    status = alive()
    assert "zombie" in status or not status, f"the daemon {pid} outlived its parent"
    assert not (tmp_path / SOLC_DAEMON_SOCKET).exists()
