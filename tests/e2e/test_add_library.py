"""Libraries added one after another with ape-solidity's `add_library`, verified as exact matches.

ape-solidity compiles with every library added so far, linked or not, and solc hashes all of
settings.libraries into the metadata: LibB (linked to LibA) is compiled after LibC was added, User
after all four. A submission with only the libraries a contract links is a partial match; the
deploy's own verification and a later `ape verify contract ADDRESS` must both be full matches.
One anvil, a project of our own, deployed by `ape run` in this process with auto verification.
"""

import contextlib
import io
import json
import os
import re

import pytest
import requests

from support import REPO
from support.e2e import ape_in_process, as_json, configure, summary, verify_cli
from support.service import Anvil

OWN_PROJECT = True  # its own project, no dependency: beside the example's group (conftest.py)

SOURCES = {
    "LibA.sol": """// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;

library LibA {
    function twice(uint256 x) public pure returns (uint256) {
        return x * 2;
    }
}
""",
    "LibC.sol": """// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;

library LibC {
    function square(uint256 x) public pure returns (uint256) {
        return x * x;
    }
}
""",
    # Linked to LibA: its code holds LibA's address, its metadata every library added before it.
    "LibB.sol": """// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;

import {LibA} from "./LibA.sol";

library LibB {
    function twicePlusOne(uint256 x) public pure returns (uint256) {
        return LibA.twice(x) + 1;
    }
}
""",
    "LibD.sol": """// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;

library LibD {
    function negate(int256 x) public pure returns (int256) {
        return -x;
    }
}
""",
    # Links LibB and LibC, not LibA or LibD, which are in its libraries setting all the same.
    "User.sol": """// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;

import {LibB} from "./LibB.sol";
import {LibC} from "./LibC.sol";

contract User {
    function compute(uint256 x) external pure returns (uint256) {
        return LibC.square(LibB.twicePlusOne(x));
    }
}
""",
}

LIBRARIES = ("LibA", "LibC", "LibB", "LibD")  # the order they are deployed and added in

DEPLOY = f"""
from ape import accounts, compilers, project


def main():
    deployer = accounts.test_accounts[0]
    for name in {LIBRARIES!r}:
        library = deployer.deploy(getattr(project, name))
        compilers.solidity.add_library(library)
        print("DEPLOYED", name, library.address)
    user = deployer.deploy(project.User)
    assert user.compute(3) == 49
    print("DEPLOYED User", user.address)
"""

# LibA deployed again and added again: the manifest now records an address User was not compiled with.
REDEPLOY_A = """
from ape import accounts, compilers, project


def main():
    library = accounts.test_accounts[0].deploy(project.LibA)
    compilers.solidity.add_library(library)
    print("DEPLOYED LibA", library.address)
"""

DEPLOYED = re.compile(r"^DEPLOYED (\w+) (0x[0-9a-fA-F]{40})$", re.M)


def _solidity():
    from ape import compilers

    return compilers.solidity


def _forget_added_libraries() -> None:
    """As a new `ape` process starts: ape-solidity's added libraries live in a class attribute."""
    _solidity()._libraries.clear()


def _explorer(anvil):
    from ape_contract_verify.evm.chain import JsonRpcChain
    from ape_contract_verify.server.runner import start_embedded

    return start_embedded(JsonRpcChain(anvil.url))


def _record(explorer, address: str) -> dict:
    answer = requests.get(
        explorer.base_url, params={"module": "contract", "action": "getsourcecode", "address": address}, timeout=30
    ).json()
    return answer["result"][0]


def _deploy(project, script: str):
    """`ape run SCRIPT` in this process. Under pytest the run's outermost network context is not
    the last one to exit, so the deploy hook's summary is still pending: printed here, as `ape run` would."""
    from ape_contract_verify.workflow import after_deploy
    from support.e2e import reset_hook

    proc = ape_in_process(project, "run", script, "--network", "ethereum:local:foundry")
    pending = io.StringIO()
    with contextlib.redirect_stdout(pending):
        after_deploy.HOOK.print_summary()
    reset_hook()
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-4000:]
    proc.stdout += pending.getvalue()
    return proc


@pytest.fixture(scope="module")
def deployed(tmp_path_factory):
    """(project, anvil, explorer, {name: address}, the deploy's output): deployed and verified once."""
    solidity = _solidity()
    kept = dict(solidity._libraries)  # other modules' projects must not see ours, nor we theirs
    solc_path = os.environ.get("SOLCX_BINARY_PATH")
    os.environ.setdefault("SOLCX_BINARY_PATH", str(REPO / ".solcx"))  # in-process compiles, as `make` sets it
    _forget_added_libraries()
    anvil = Anvil()
    explorer = None
    try:
        explorer = _explorer(anvil)
        project = tmp_path_factory.mktemp("add-library") / "libs"
        (project / "contracts").mkdir(parents=True)
        (project / "scripts").mkdir()
        for name, text in SOURCES.items():
            (project / "contracts" / name).write_text(text)
        (project / "scripts" / "deploy.py").write_text(DEPLOY)
        (project / "scripts" / "redeploy_a.py").write_text(REDEPLOY_A)
        (project / "ape-config.yaml").write_text("name: libs\nsolidity:\n  version: 0.8.26\n")
        configure(
            project,
            foundry={"host": anvil.url},
            contract_verify={
                "auto": True,
                "max_retries": 1,
                "poll_interval": 0.5,
                "calls_per_second": 50,
                "explorers": {"ethereum": {"local": {"url": explorer.base_url}}},
            },
        )
        proc = _deploy(project, "deploy")
        addresses = dict(DEPLOYED.findall(proc.stdout))
        assert set(addresses) == {*LIBRARIES, "User"}, proc.stdout[-3000:]
        yield project, anvil, explorer, addresses, proc
    finally:
        if explorer is not None:
            explorer.stop()
        anvil.stop()
        solidity._libraries.clear()
        solidity._libraries.update(kept)
        if solc_path is None:
            os.environ.pop("SOLCX_BINARY_PATH", None)


def test_the_deploy_verifies_every_contract_as_a_full_match(deployed):
    project, _, explorer, addresses, proc = deployed
    rows = summary(proc.stdout)
    assert {name: row[1] for name, row in rows.items()} == {name: "verified" for name in addresses}, proc.stdout[-3000:]
    assert not [name for name, row in rows.items() if "partial match" in row[2]], proc.stdout[-3000:]
    for name, address in addresses.items():
        record = _record(explorer, address)
        assert (record["ContractName"], record["MatchType"]) == (name, "full"), (name, record["MatchType"])
    # What was submitted is what ape-solidity compiled with: every library added before, linked or not.
    user = json.loads(_record(explorer, addresses["User"])["SourceCode"][1:-1])
    assert user["settings"]["libraries"] == {f"contracts/{name}.sol": {name: addresses[name]} for name in LIBRARIES}, (
        user["settings"]["libraries"]
    )
    lib_b = json.loads(_record(explorer, addresses["LibB"])["SourceCode"][1:-1])
    assert lib_b["settings"]["libraries"] == {
        f"contracts/{name}.sol": {name: addresses[name]} for name in ("LibA", "LibC")
    }, lib_b["settings"]["libraries"]
    assert _record(explorer, addresses["User"])["Library"] == f"LibB:{addresses['LibB']};LibC:{addresses['LibC']}"
    assert _record(explorer, addresses["LibB"])["Library"] == f"LibA:{addresses['LibA']}"


def test_only_the_linked_libraries_would_be_a_partial_match(deployed):
    """The scenario holds the bug: LibB's and User's metadata carry libraries they do not link, so
    a libraries setting read from the link positions alone is a partial match, and it says why."""
    from ape import Project

    from ape_contract_verify.derive import artifacts
    from ape_contract_verify.derive.derive import derive
    from ape_contract_verify.engine.compilers import CompileCache
    from ape_contract_verify.evm.chain import JsonRpcChain

    project_dir, anvil, _, addresses, _ = deployed
    project = Project(project_dir)
    reader, cache = JsonRpcChain(anvil.url), CompileCache()
    for name in ("LibB", "User"):
        derivation = derive(
            artifacts.find_artifact(name, project),
            addresses[name],
            chain_reader=reader,
            cache=cache,
            manifest_libraries={},
        )
        assert derivation.match == "partial", name
        assert any(w.startswith("partial match: ") for w in derivation.warnings), derivation.warnings
    # With the manifest's record: full, and the input holds the unlinked libraries too.
    derivation = derive(artifacts.find_artifact("User", project), addresses["User"], chain_reader=reader, cache=cache)
    assert derivation.match == "full" and not derivation.warnings, derivation.warnings
    assert set(derivation.compile_input["settings"]["libraries"]) == {f"contracts/{name}.sol" for name in LIBRARIES}
    assert derivation.request.libraries == {"LibB": addresses["LibB"], "LibC": addresses["LibC"]}


def test_a_wrong_recorded_library_address_is_a_partial_match_with_its_reason(deployed):
    from ape import Project

    from ape_contract_verify.derive import artifacts
    from ape_contract_verify.derive.derive import derive
    from ape_contract_verify.engine.compilers import CompileCache
    from ape_contract_verify.evm.chain import JsonRpcChain

    project_dir, anvil, _, addresses, _ = deployed
    wrong = {f"contracts/{name}.sol": {name: addresses[name]} for name in LIBRARIES}
    wrong["contracts/LibA.sol"]["LibA"] = "0x" + "5a" * 20  # not where LibA is
    derivation = derive(
        artifacts.find_artifact("User", Project(project_dir)),
        addresses["User"],
        chain_reader=JsonRpcChain(anvil.url),
        cache=CompileCache(),
        manifest_libraries=wrong,
    )
    assert derivation.match == "partial"
    reason = next(w for w in derivation.warnings if w.startswith("partial match: "))
    assert "LibA" in reason and "add_library" in reason, reason


def test_verified_again_by_address_alone_as_a_full_match(deployed):
    """A later `ape verify contract ADDRESS` (ape-solidity's added libraries forgotten, as in a new
    process) on an explorer that has never seen them: the manifest and the chain are enough."""
    project, anvil, _, addresses, _ = deployed
    _forget_added_libraries()
    fresh = _explorer(anvil)
    try:
        configure(project, contract_verify={"explorers": {"ethereum": {"local": {"url": fresh.base_url}}}})
        for name, address in addresses.items():
            document = as_json(verify_cli(project, "contract", address, "--json"))
            report = next(r for r in document["reports"] if r["address"] == address)
            assert (report["contract"], report["outcome"], report["match"]) == (name, "verified", "full"), report
            assert _record(fresh, address)["MatchType"] == "full", name
    finally:
        fresh.stop()


def test_a_library_deployed_and_added_again_leaves_a_partial_match_that_says_why(deployed):
    """LibA deployed and added again: the manifest now records its new address, which User was not
    compiled with and does not link, so User's libraries setting cannot be recovered. Verified,
    partial, and the summary says why; LibB links LibA, so the chain gives its address and it stays full."""
    project, anvil, _, addresses, _ = deployed
    # In the deploy's session still: ape-solidity holds the four libraries, the manifest will record all.
    _solidity()._libraries.update({f"contracts/{name}.sol": {name: addresses[name]} for name in LIBRARIES})
    configure(project, contract_verify={"auto": False})
    _deploy(project, "redeploy_a")
    _forget_added_libraries()
    fresh = _explorer(anvil)
    try:
        configure(project, contract_verify={"explorers": {"ethereum": {"local": {"url": fresh.base_url}}}})
        user = verify_cli(project, "contract", addresses["User"])
        assert user.returncode == 0, user.stdout[-3000:] + user.stderr[-3000:]
        row = summary(user.stdout)["User"]
        assert row[1] == "verified" and "(partial match: " in row[2] and "LibA" in row[2], user.stdout
        assert "Traceback" not in user.stdout + user.stderr
        assert _record(fresh, addresses["User"])["MatchType"] == "partial"
        lib_b = as_json(verify_cli(project, "contract", addresses["LibB"], "--json"))
        report = next(r for r in lib_b["reports"] if r["address"] == addresses["LibB"])
        assert (report["outcome"], report["match"]) == ("verified", "full"), report
        assert any("the chain uses" in w for w in report["warnings"]), report["warnings"]
    finally:
        fresh.stop()
