"""Foundry's own client against the local explorer: `forge verify-contract --verifier custom`
verifies a contract that `forge create` deployed to anvil, and a wrong `--constructor-args` fails.

Offline, as docs/offline-toolchain.md says: solc where svm looks (a copy of the solc-js shim under a
temporary HOME), the version with its commit, no cache/ or out/ when verifying, `offline = true`.
"""

import os
import re
import shutil
import subprocess

import pytest

from ape_contract_verify.protocol.answers import Texts
from support.service import REPO, VENV_BIN, Anvil, ServerProcess, get

ANVIL_KEY_0 = "0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80"  # anvil's well-known dev key
VERSION = "0.8.26"
FULL_VERSION = "0.8.26+commit.8a97fa7a"
BOX = """// SPDX-License-Identifier: MIT
pragma solidity 0.8.26;

contract Box {
    uint256 public value;

    constructor(uint256 initial) {
        value = initial;
    }

    function set(uint256 next) external {
        value = next;
    }
}
"""


@pytest.fixture(scope="module")
def foundry(tmp_path_factory):
    root = tmp_path_factory.mktemp("forge")
    home = root / "home"
    svm = home / ".svm" / VERSION
    svm.mkdir(parents=True)
    solc = svm / f"solc-{VERSION}"
    shutil.copy(REPO / ".solcx" / f"solc-v{VERSION}", solc)
    solc.chmod(0o755)
    project = root / "project"
    (project / "src").mkdir(parents=True)
    (project / "src" / "Box.sol").write_text(BOX)
    (project / "foundry.toml").write_text('[profile.default]\nsrc = "src"\nout = "out"\nlibs = []\noffline = true\n')
    env = dict(
        os.environ,
        HOME=str(home),
        PATH=f"{VENV_BIN}{os.pathsep}{os.environ.get('PATH', '')}",
        FOUNDRY_DISABLE_NIGHTLY_WARNING="1",
        NO_COLOR="1",
    )
    forge = VENV_BIN / "forge"
    assert forge.exists(), f"forge is missing at {forge}: run `make` (toolchain/install.sh)"
    anvil = Anvil()
    server = None
    try:
        server = ServerProcess(anvil.url, root / "explorer.sqlite")
        yield {"root": root, "project": project, "env": env, "forge": str(forge), "anvil": anvil, "server": server}
    finally:
        if server is not None:
            server.stop()
        anvil.stop()


def _forge(foundry, *args):
    return subprocess.Popen(
        [foundry["forge"], *args],
        cwd=foundry["project"],
        env=foundry["env"],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )


def _create(foundry, initial: int) -> str:
    proc = _forge(
        foundry,
        "create",
        "src/Box.sol:Box",
        "--broadcast",
        "--rpc-url",
        foundry["anvil"].url,
        "--private-key",
        ANVIL_KEY_0,
        "--use",
        VERSION,
        "--constructor-args",
        str(initial),
    )
    out, _ = proc.communicate(timeout=180)
    assert proc.returncode == 0, out
    return re.search(r"Deployed to: (0x[0-9a-fA-F]{40})", out).group(1)


def _verify(foundry, address: str, constructor_args: str) -> subprocess.Popen:
    return _forge(
        foundry,
        "verify-contract",
        address,
        "src/Box.sol:Box",
        "--verifier",
        "custom",
        "--verifier-url",
        foundry["server"].base_url,
        "--compiler-version",
        FULL_VERSION,
        "--constructor-args",
        constructor_args,
        "--chain",
        "31337",
        "--watch",
    )


def test_forge_verify_contract_passes_and_wrong_constructor_args_fail(foundry):
    good = _create(foundry, 42)
    bad = _create(foundry, 42)
    # forge create left a cache keyed without the commit; forge would then look the commit up online.
    shutil.rmtree(foundry["project"] / "cache", ignore_errors=True)
    shutil.rmtree(foundry["project"] / "out", ignore_errors=True)
    args_42 = "00" * 31 + "2a"
    args_43 = "00" * 31 + "2b"
    # Both at once: forge waits 15 s between status polls, so in parallel the test takes one wait.
    verifying = _verify(foundry, good, args_42)
    failing = _verify(foundry, bad, args_43)
    good_out, _ = verifying.communicate(timeout=240)
    bad_out, _ = failing.communicate(timeout=240)

    assert verifying.returncode == 0, good_out
    assert "Contract successfully verified" in good_out, good_out
    assert "Pass - Verified" in good_out
    base = foundry["server"].base_url
    (entry,) = get(base, action="getsourcecode", address=good)["result"]
    assert entry["ContractName"] == "Box" and entry["CompilerVersion"] == "v" + FULL_VERSION
    assert entry["ConstructorArguments"] == args_42
    assert entry["SourceCode"].startswith("{{")  # forge submits standard-json

    assert failing.returncode != 0, bad_out
    assert (
        "Fail - Unable to verify. Please check if the correct constructor argument was entered. Constructor arguments differ"
        in bad_out
    ), bad_out
    assert "correct constructor argument" in bad_out  # what hardhat-verify 3 stops on
    assert get(base, action="getabi", address=bad)["result"] == Texts.NOT_VERIFIED
