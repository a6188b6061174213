"""The local explorer's Sourcify face (API v2), over real HTTP, with real anvil and solc.

- Its answers have the status codes, keys and `customCode`s that Sourcify 3.12.1 answered for the
  same cases (tests/data/sourcify-answers/; ids, times and texts may differ).
- One store for both faces: verified through one, verified on the other.
- Foundry's `forge verify-contract --verifier sourcify` verifies against it; forge sends no
  constructor arguments to Sourcify ("Only for Etherscan"), so the face takes them from the creation
  transaction, and a deployment whose arguments no call of the constructor can send (bytes after
  the ABI encoding), or a --creation-transaction-hash of another deployment, fails.
"""

import json
import os
import re
import shutil
import subprocess
import time
from pathlib import Path

import pytest
import requests

from ape_contract_verify.protocol.values import checksum
from support.service import (
    REPO,
    SOLC_0826,
    VENV_BIN,
    Anvil,
    ServerProcess,
    encode,
    get,
    json_form,
    poll,
    post,
    solc_compile,
)

OWN_PROJECT = (
    True  # its own anvil, explorers and forge project, no Ape dependency: beside the example's group (conftest.py)
)

ANSWERS = Path(__file__).parents[1] / "data" / "sourcify-answers"
CHAIN = "31337"
VERSION = "0.8.26+commit.8a97fa7a"
ANVIL_KEY_0 = "0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80"  # anvil's well-known dev key
BOX = """// SPDX-License-Identifier: MIT
pragma solidity 0.8.26;

contract Box {
    uint256 public value;
    string public label;
    address public immutable owner;

    constructor(uint256 v, string memory l) {
        value = v;
        label = l;
        owner = msg.sender;
    }

    function set(uint256 v) external {
        value = v;
    }
}
"""
LONGER = BOX.replace("        value = v;\n    }\n}", "        value = v + 1;\n    }\n}")  # 03: other length
RENAMED = BOX.replace("function set(", "function put(")  # 03b: same length, other code
COMMENTED = BOX.replace("contract Box {", "// a comment: only the metadata hash changes\ncontract Box {")
SETTINGS = {
    "optimizer": {"enabled": True, "runs": 321},
    "evmVersion": "cancun",
    "metadata": {"bytecodeHash": "ipfs", "appendCBOR": True, "useLiteralContent": False},
}
FORGE_BOX = """// SPDX-License-Identifier: MIT
pragma solidity 0.8.26;

contract Box {
    uint256 public value;

    constructor(uint256 initial) {
        value = initial;
    }
}
"""


def recorded(name: str) -> dict:
    return json.loads((ANSWERS / name).read_text())


def std_input(source: str) -> dict:
    return {"language": "Solidity", "sources": {"src/Box.sol": {"content": source}}, "settings": SETTINGS}


def body(source: str = BOX, **extra) -> dict:
    return {
        "stdJsonInput": std_input(source),
        "compilerVersion": VERSION,
        "contractIdentifier": "src/Box.sol:Box",
        **extra,
    }


@pytest.fixture(scope="module")
def env(tmp_path_factory):
    root = tmp_path_factory.mktemp("sourcify-face")
    anvil = Anvil()
    server = None
    try:
        server = ServerProcess(anvil.url, root / "explorer.sqlite")
        creation = {}
        for name, source in (("box", BOX), ("commented", COMMENTED)):
            out = solc_compile(std_input(source))
            creation[name] = bytes.fromhex(out["contracts"]["src/Box.sol"]["Box"]["evm"]["bytecode"]["object"])
        args = encode(["uint256", "string"], [7, "seven"])
        deployed = {
            name: checksum(anvil.deploy(creation[kind], args))
            for name, kind in (("exact", "box"), ("wrong", "box"), ("partial", "commented"), ("etherscan", "box"))
        }
        url = server.base_url.removesuffix("api")
        yield {
            "root": root,
            "anvil": anvil,
            "server": server,
            "url": url,
            "deployed": deployed,
            "args": args,
            "creation": creation,
        }
    finally:
        if server is not None:
            server.stop()
        anvil.stop()


def submit(env, address: str, data, chain: str = CHAIN) -> requests.Response:
    kwargs = (
        {"json": data}
        if not isinstance(data, (str, bytes))
        else {"data": data, "headers": {"content-type": "application/json"}}
    )
    return requests.post(f"{env['url']}v2/verify/{chain}/{address}", timeout=10, **kwargs)


def job(env, verification_id: str, timeout: float = 60) -> dict:
    """The job answer once completed (bounded); each answer in between must be a pending one."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        answer = requests.get(f"{env['url']}v2/verify/{verification_id}", timeout=10)
        assert answer.status_code == 200, answer.text
        data = answer.json()
        if data["isJobCompleted"]:
            return data
        assert keys(data) == keys(recorded("01-exact-job-pending.json")["body"])
        time.sleep(0.1)
    raise AssertionError(f"job {verification_id} not completed after {timeout} s")


def lookup(env, address: str, query: str = "") -> requests.Response:
    return requests.get(f"{env['url']}v2/contract/{CHAIN}/{address}{query}", timeout=10)


def keys(data) -> object:
    """The shape of an answer: its keys, nested (values left out)."""
    if isinstance(data, dict):
        return {key: keys(value) if isinstance(value, dict) else None for key, value in data.items()}
    return type(data).__name__


def same_as(response: requests.Response, name: str, nested: bool = True) -> dict:
    """Status and keys as Sourcify answered the recorded case; the customCode too when there is one."""
    want = recorded(name)
    assert response.status_code == want["status"], (response.status_code, response.text)
    data = response.json()
    if nested:
        assert keys(data) == keys(want["body"]), (data, want["body"])
    else:
        assert set(data) == set(want["body"]), (sorted(data), sorted(want["body"]))
    if isinstance(want["body"], dict) and "customCode" in want["body"]:
        assert data["customCode"] == want["body"]["customCode"]
    return data


def test_the_server_prints_its_sourcify_url(env):
    assert f"Sourcify API: {env['url']}" in env["server"].lines
    assert requests.get(env["url"] + "health", timeout=10).text == recorded("15-get_health.json")["body"]


def test_exact_match_then_lookups_then_already_verified(env):
    address = env["deployed"]["exact"]
    submitted = same_as(submit(env, address, body()), "01-exact-submit.json")
    assert re.fullmatch(r"[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[0-9a-f]{4}-[0-9a-f]{12}", submitted["verificationId"])
    final = job(env, submitted["verificationId"])
    assert keys(final) == keys(recorded("01-exact-job-final.json")["body"]), final
    assert final["contract"]["match"] == final["contract"]["creationMatch"] == "exact_match"

    default = same_as(lookup(env, address), "01-exact-lookup-default.json")
    assert default["match"] == "exact_match" and default["address"] == address
    fields = same_as(
        lookup(
            env, address, "?fields=" + recorded("01-exact-lookup-fields.json")["request"]["url"].split("fields=")[1]
        ),
        "01-exact-lookup-fields.json",
    )
    assert fields["compilation"] == {"name": "Box"}
    assert fields["creationBytecode"]["onchainBytecode"].endswith(env["args"].hex())
    everything = same_as(lookup(env, address, "?fields=all"), "01-exact-lookup-all.json", nested=False)
    assert everything["sources"] == {"src/Box.sol": {"content": BOX}}
    assert everything["compilation"]["fullyQualifiedName"] == "src/Box.sol:Box"
    assert everything["creationBytecode"]["transformationValues"] == {"constructorArguments": "0x" + env["args"].hex()}
    assert any(item.get("type") == "constructor" for item in everything["abi"])
    assert everything["metadata"]["settings"]["compilationTarget"] == {"src/Box.sol": "Box"}
    assert everything["proxyResolution"] == {"isProxy": False, "proxyType": None, "implementations": []}
    bad_field = lookup(env, address, "?fields=colour")
    assert bad_field.status_code == 400 and bad_field.json()["customCode"] == "invalid_parameter"
    assert "colour" in bad_field.json()["message"]

    again = same_as(submit(env, address, body()), "02-already-verified-submit.json")
    assert address in again["message"]

    # The same store: the Etherscan face serves it, constructor arguments read from the chain.
    (entry,) = get(env["server"].base_url, action="getsourcecode", address=address)["result"]
    assert entry["ContractName"] == "Box" and entry["ConstructorArguments"] == env["args"].hex()
    listed = same_as(
        requests.get(f"{env['url']}v2/contracts/{CHAIN}", timeout=10), "15-get_v2_contracts_31337.json", nested=False
    )
    assert address in [item["address"] for item in listed["results"]]


def test_wrong_sources_fail_with_both_bytecodes(env):
    address = env["deployed"]["wrong"]
    for source, name in ((LONGER, "03-wrong-source"), (RENAMED, "03b-wrong-source-same-length")):
        submitted = same_as(submit(env, address, body(source)), f"{name}-submit.json")
        final = job(env, submitted["verificationId"])
        want = recorded(f"{name}-job-final.json")["body"]
        assert keys(final) == keys(want), (final, want)
        assert final["error"]["customCode"] == want["error"]["customCode"]
    same_as(lookup(env, address), "03-wrong-source-lookup-404.json")


def test_partial_match_is_upgraded_by_the_exact_source(env):
    address = env["deployed"]["partial"]
    first = job(env, same_as(submit(env, address, body(BOX)), "04-partial-submit.json")["verificationId"])
    assert keys(first) == keys(recorded("04-partial-job-final.json")["body"])
    assert first["contract"]["match"] == "match"
    assert same_as(lookup(env, address), "04-partial-lookup-default.json")["match"] == "match"
    upgraded = job(
        env,
        same_as(submit(env, address, body(COMMENTED)), "04b-upgrade-partial-to-exact-submit.json")["verificationId"],
    )
    assert keys(upgraded) == keys(recorded("04b-upgrade-partial-to-exact-job-final.json")["body"])
    assert upgraded["contract"]["match"] == "exact_match"
    assert upgraded["contract"]["matchId"] == first["contract"]["matchId"]  # the same contract, upgraded
    assert upgraded["contract"]["verifiedAt"] == first["contract"]["verifiedAt"]


def test_refusals_have_sourcifys_codes(env):
    address = env["deployed"]["exact"]
    same_as(submit(env, address, body(), chain="1"), "09-unsupported-chain-submit.json")
    same_as(submit(env, "0x1234", body()), "10-invalid-address-submit.json")
    missing = same_as(
        submit(env, address, recorded("11-missing-fields.json")["request"]["body"]), "11-missing-fields.json"
    )
    assert "stdJsonInput" in missing["message"]
    broken = submit(env, address, "{not json")
    assert broken.status_code == 400 and broken.json()["customCode"] == "invalid_parameter"
    assert "JSON" in broken.json()["message"]
    huge = submit(env, address, b"{" + b" " * (21 * 1024 * 1024) + b"}")
    assert huge.status_code == 400 and "too large" in huge.json()["message"]
    missing_job = requests.get(f"{env['url']}v2/verify/00000000-0000-4000-8000-000000000000", timeout=10)
    same_as(missing_job, "12-job-not-found.json")
    same_as(lookup(env, "0x" + "12" * 20), "13-lookup-not-verified.json")
    same_as(lookup(env, "0x1234"), "14-lookup-invalid-address.json")
    (chain,) = requests.get(env["url"] + "chains", timeout=10).json()
    assert chain["chainId"] == 31337 and chain["supported"] is True
    assert set(chain) <= set(recorded("15-get_chains.json")["body"][0])
    wrong_method = requests.get(f"{env['url']}v2/verify/{CHAIN}/{address}", timeout=10)
    assert wrong_method.status_code == 405 and {"customCode", "message", "errorId"} <= set(wrong_method.json())


def test_verified_through_the_etherscan_face_is_verified_on_the_sourcify_face(env):
    address = env["deployed"]["etherscan"]
    form = json_form(address, std_input(BOX), "src/Box.sol:Box", args=env["args"], version=SOLC_0826)
    guid = post(env["server"].base_url, form)["result"]
    assert poll(env["server"].base_url, guid)["result"] == "Pass - Verified"
    answer = same_as(lookup(env, address), "01-exact-lookup-default.json")
    assert answer["match"] == "exact_match"
    assert submit(env, address, body()).status_code == 409


# -- forge ------------------------------------------------------------------------------------


def _forge(env, project: Path, home: Path, *args) -> subprocess.Popen:
    forge_env = dict(
        os.environ,
        HOME=str(home),
        PATH=f"{VENV_BIN}{os.pathsep}{os.environ.get('PATH', '')}",
        FOUNDRY_DISABLE_NIGHTLY_WARNING="1",
        NO_COLOR="1",
    )
    return subprocess.Popen(
        [str(VENV_BIN / "forge"), *args],
        cwd=project,
        env=forge_env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )


def test_forge_verifies_through_the_sourcify_face_and_wrong_constructor_arguments_fail(env):
    assert (VENV_BIN / "forge").exists(), f"forge is missing at {VENV_BIN / 'forge'}: run `make` (toolchain/install.sh)"
    root = env["root"] / "forge"
    home, project = root / "home", root / "project"
    (home / ".svm" / "0.8.26").mkdir(parents=True)
    solc = home / ".svm" / "0.8.26" / "solc-0.8.26"
    shutil.copy(REPO / ".solcx" / "solc-v0.8.26", solc)
    solc.chmod(0o755)
    (project / "src").mkdir(parents=True)
    (project / "src" / "Box.sol").write_text(FORGE_BOX)
    (project / "foundry.toml").write_text('[profile.default]\nsrc = "src"\nout = "out"\nlibs = []\noffline = true\n')

    def create(initial: int) -> tuple[str, str]:
        proc = _forge(
            env,
            project,
            home,
            "create",
            "src/Box.sol:Box",
            "--broadcast",
            "--rpc-url",
            env["anvil"].url,
            "--private-key",
            ANVIL_KEY_0,
            "--use",
            "0.8.26",
            "--constructor-args",
            str(initial),
        )
        out, _ = proc.communicate(timeout=180)
        assert proc.returncode == 0, out
        return re.search(r"Deployed to: (0x[0-9a-fA-F]{40})", out).group(1), re.search(
            r"Transaction hash: (0x[0-9a-f]{64})", out
        ).group(1)

    good, _ = create(42)
    other, other_tx = create(43)
    built = json.loads((project / "out" / "Box.sol" / "Box.json").read_text())["bytecode"]["object"]
    # Box(42) with one byte more after the arguments: the constructor runs, but no call of it sends that.
    padded = checksum(env["anvil"].deploy(built, encode(["uint256"], [42]) + b"\x01"))
    shutil.rmtree(project / "cache", ignore_errors=True)  # else forge looks the compiler's commit up online
    shutil.rmtree(project / "out", ignore_errors=True)

    def verify(address: str, *extra: str) -> subprocess.Popen:
        return _forge(
            env,
            project,
            home,
            "verify-contract",
            address,
            "src/Box.sol:Box",
            "--verifier",
            "sourcify",
            "--verifier-url",
            env["url"],
            "--compiler-version",
            VERSION,
            "--chain",
            CHAIN,
            "--watch",
            *extra,
        )

    # All at once: forge waits 15 s between polls, so in parallel the test takes one wait.
    runs = {
        "good": verify(good, "--constructor-args", "00" * 31 + "2b"),  # ignored for Sourcify, as forge says
        "padded": verify(padded),
        "other_tx": verify(other, "--creation-transaction-hash", _tx_of(env, good)),
    }
    outs = {name: proc.communicate(timeout=240)[0] for name, proc in runs.items()}

    assert runs["good"].returncode == 0, outs["good"]
    assert "exact_match" in outs["good"], outs["good"]
    answer = lookup(env, good, "?fields=compilation.name,deployment").json()
    assert answer["match"] == "exact_match" and answer["compilation"] == {"name": "Box"}
    (entry,) = get(env["server"].base_url, action="getsourcecode", address=good)["result"]
    assert entry["ConstructorArguments"] == "00" * 31 + "2a"  # the deployment's, not forge's --constructor-args

    assert runs["padded"].returncode != 0, outs["padded"]
    assert "creation_bytecode_match_error" in outs["padded"], outs["padded"]
    assert "not an ABI encoding of constructor(uint256)" in outs["padded"], outs["padded"]
    assert lookup(env, padded).status_code == 404

    assert runs["other_tx"].returncode != 0, outs["other_tx"]
    assert f"did not create {other}" in outs["other_tx"] or f"did not create {other.lower()}" in outs["other_tx"], outs[
        "other_tx"
    ]
    assert other_tx in outs["other_tx"], outs["other_tx"]  # the transaction that did create it
    assert lookup(env, other).status_code == 404


def _tx_of(env, address: str) -> str:
    """The transaction that created `address`, from the explorer's own getcontractcreation."""
    (found,) = get(env["server"].base_url, action="getcontractcreation", contractaddresses=address)["result"]
    return found["txHash"]
