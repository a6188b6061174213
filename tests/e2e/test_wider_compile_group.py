"""A library whose code depends on the other files compiled with it (issue 38), verified with its
whole compile group's input.

solc 0.6.12 with the optimizer names the ABI coder's Yul functions after the structs' AST ids and
inlines them in an order that follows the names, so ReserveLogic compiled with the whole project
(as `ape compile` built the code deployed) differs from ReserveLogic compiled with its imports alone,
which is the input the plugin sends, and what `add_library` compiles again and keeps in the manifest.
The pre-check must try the whole group before blaming the source or the compiler. After a deploy,
Ape's own builds are kept (issue 40), so each contract is sent the input Ape built it from at once.
One anvil, the project under tests/data, deployed by `ape run` in this process with auto verification.
"""

import contextlib
import io
import json
import os
import re
import shutil

import pytest
import requests

from support import REPO
from support.e2e import ape_in_process, as_json, configure, summary, verify_cli
from support.service import Anvil

OWN_PROJECT = True  # its own project, no dependency: beside the example's group (conftest.py)

LIBRARIES = ("GenericLogic", "ReserveLogic", "ValidationLogic")
GROUP = {f"contracts/{name}.sol" for name in ("AToken", "DataTypes", *LIBRARIES)}
OWN = {"contracts/DataTypes.sol", "contracts/ReserveLogic.sol"}  # ReserveLogic and its imports
DEPLOYED = re.compile(r"^DEPLOYED (\w+) (0x[0-9a-fA-F]{40})$", re.M)
WARNING = "the whole compile group's input (5 sources, as Ape compiled them together) reproduces it"


def _solidity():
    from ape import compilers

    return compilers.solidity


def _record(explorer, address: str) -> dict:
    answer = requests.get(
        explorer.base_url, params={"module": "contract", "action": "getsourcecode", "address": address}, timeout=30
    ).json()
    return answer["result"][0]


def _explorer(anvil):
    from ape_contract_verify.evm.chain import JsonRpcChain
    from ape_contract_verify.server.runner import start_embedded

    return start_embedded(JsonRpcChain(anvil.url))


@pytest.fixture(scope="module")
def deployed(tmp_path_factory):
    """(project, anvil, explorer, {name: address}, the deploy's output): deployed and verified once."""
    from ape_contract_verify.workflow import after_deploy
    from support.e2e import reset_hook

    solidity = _solidity()
    kept = dict(solidity._libraries)  # other modules' projects must not see ours, nor we theirs
    solc_path = os.environ.get("SOLCX_BINARY_PATH")
    os.environ.setdefault("SOLCX_BINARY_PATH", str(REPO / ".solcx"))  # in-process compiles, as `make` sets it
    solidity._libraries.clear()
    anvil = Anvil()
    explorer = None
    try:
        explorer = _explorer(anvil)
        project = shutil.copytree(
            REPO / "tests" / "data" / "lending_compile_group", tmp_path_factory.mktemp("group") / "lending"
        )
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
        proc = ape_in_process(project, "run", "deploy", "--network", "ethereum:local:foundry")
        # Under pytest the run's outermost network context is not the last to exit: print the summary.
        pending = io.StringIO()
        with contextlib.redirect_stdout(pending):
            after_deploy.HOOK.print_summary()
        reset_hook()
        assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-4000:]
        proc.stdout += pending.getvalue()
        addresses = dict(DEPLOYED.findall(proc.stdout))
        assert set(addresses) == set(LIBRARIES), proc.stdout[-3000:]
        yield project, anvil, explorer, addresses, proc
    finally:
        if explorer is not None:
            explorer.stop()
        anvil.stop()
        solidity._libraries.clear()
        solidity._libraries.update(kept)
        if solc_path is None:
            os.environ.pop("SOLCX_BINARY_PATH", None)


def test_its_own_sources_do_not_reproduce_the_deployed_code(deployed):
    """The scenario holds the bug: the input of ReserveLogic and its imports compiles to other code
    than deployed (solc's, not the plugin's doing), and the manifest now holds that other code."""
    from ape import Project

    from ape_contract_verify.derive import artifacts
    from ape_contract_verify.engine.compilers import compile_input
    from ape_contract_verify.evm import bytecode
    from ape_contract_verify.evm.chain import JsonRpcChain

    project_dir, anvil, _, addresses, _ = deployed
    artifact = artifacts.find_artifact("ReserveLogic", Project(project_dir))
    on_chain = JsonRpcChain(anvil.url).get_code(addresses["ReserveLogic"])
    compiled = {}
    for which, input_json in (("own", artifacts.standard_input(artifact)), ("group", artifacts.group_input(artifact))):
        assert input_json is not None
        output = compile_input(artifact.explorer_compiler_version, input_json)
        evm = output["contracts"]["contracts/ReserveLogic.sol"]["ReserveLogic"]["evm"]
        compiled[which] = bytecode.strip_metadata(bytes.fromhex(evm["deployedBytecode"]["object"]))
    assert set(artifacts.standard_input(artifact)["sources"]) == OWN
    deployed_code = bytecode.strip_metadata(bytes(on_chain))[21:]  # after PUSH20 <the library's own address>
    assert len(compiled["own"][21:]) != len(deployed_code)
    assert compiled["group"][21:] == deployed_code
    assert not artifacts.has_code_of(artifact, on_chain)  # add_library's compile replaced the deployed one


def test_the_deploy_verifies_it_with_the_whole_compile_group(deployed, capsys):
    _, _, explorer, addresses, proc = deployed
    rows = summary(proc.stdout)
    assert {name: row[1] for name, row in rows.items()} == {name: "verified" for name in LIBRARIES}, proc.stdout[-3000:]
    for name, address in addresses.items():
        record = _record(explorer, address)
        assert (record["ContractName"], record["MatchType"]) == (name, "full"), (name, record)
    sent = json.loads(_record(explorer, addresses["ReserveLogic"])["SourceCode"][1:-1])
    assert set(sent["sources"]) == GROUP
    # ValidationLogic is sent what `add_library` compiled again with GenericLogic linked: its own sources.
    validation = json.loads(_record(explorer, addresses["ValidationLogic"])["SourceCode"][1:-1])
    assert set(validation["sources"]) == {
        f"contracts/{name}.sol" for name in ("DataTypes", "GenericLogic", "ValidationLogic")
    }
    # Ape's builds were kept, so nothing was tried first that does not reproduce the code.
    assert WARNING not in proc.stdout + proc.stderr + capsys.readouterr().err, proc.stdout[-3000:]


def test_derived_alone_the_request_carries_the_group_and_says_why(deployed):
    from ape import Project

    from ape_contract_verify.derive import artifacts
    from ape_contract_verify.derive.derive import PrecheckFailed, derive
    from ape_contract_verify.engine.compilers import CompileCache
    from ape_contract_verify.evm.chain import JsonRpcChain
    from ape_contract_verify.request import CodeFormat

    project_dir, anvil, _, addresses, _ = deployed
    artifact = artifacts.find_artifact("ReserveLogic", Project(project_dir))
    reader, cache = JsonRpcChain(anvil.url), CompileCache()
    derivation = derive(artifact, addresses["ReserveLogic"], chain_reader=reader, cache=cache)
    assert derivation.match == "full"
    assert set(derivation.compile_input["sources"]) == GROUP
    assert set(json.loads(derivation.request.source_code)["sources"]) == GROUP
    assert [w for w in derivation.warnings if WARNING in w and "its own sources (2)" in w], derivation.warnings
    # A flat file holds ReserveLogic's imports alone: standard-json is sent, unless a flat file was demanded.
    flat = derive(artifact, addresses["ReserveLogic"], chain_reader=reader, cache=cache, code_format="flatten")
    assert flat.match == "full" and flat.request.code_format == CodeFormat.STANDARD_JSON
    assert any(w.startswith("no flat file reproduces this contract's code") for w in flat.warnings), flat.warnings
    with pytest.raises(PrecheckFailed) as failed:
        derive(
            artifact,
            addresses["ReserveLogic"],
            chain_reader=reader,
            cache=cache,
            code_format="flatten",
            strict_format=True,
        )
    assert failed.value.field == "codeformat" and "whole compile group" in failed.value.reason
    assert "the source or the compiler most likely differs" not in failed.value.reason


def _verify_later(project, anvil, *args: str) -> tuple[dict, dict]:
    """A later `ape verify contract …` (a new process: no added libraries) on an explorer that has
    never seen it: (its report, the explorer's record)."""
    _solidity()._libraries.clear()
    fresh = _explorer(anvil)
    try:
        configure(project, contract_verify={"explorers": {"ethereum": {"local": {"url": fresh.base_url}}}})
        document = as_json(verify_cli(project, "contract", *args, "--json"))
        report = next(r for r in document["reports"] if r["address"] == args[-1])
        return report, _record(fresh, args[-1])
    finally:
        fresh.stop()


def test_verified_again_by_name_and_address(deployed):
    project, anvil, _, addresses, _ = deployed
    report, record = _verify_later(project, anvil, "ReserveLogic", addresses["ReserveLogic"])
    assert (report["contract"], report["outcome"], report["match"]) == ("ReserveLogic", "verified", "full"), report[
        "reason"
    ]
    assert record["MatchType"] == "full" and set(json.loads(record["SourceCode"][1:-1])["sources"]) == GROUP


def test_verified_again_by_address_alone(deployed):
    """By address alone the manifest's ReserveLogic (add_library's compile of it alone) has other
    code: the ledger's record of what Ape deployed there stands, and the group input verifies it."""
    project, anvil, _, addresses, _ = deployed
    report, record = _verify_later(project, anvil, addresses["ReserveLogic"])
    assert (report["contract"], report["outcome"], report["match"]) == ("ReserveLogic", "verified", "full"), report[
        "reason"
    ]
    assert record["MatchType"] == "full" and set(json.loads(record["SourceCode"][1:-1])["sources"]) == GROUP


def test_the_input_kept_at_the_deploy_verifies_after_the_sources_changed(deployed):
    """The ledger keeps the compile input Ape built each deployment from: after a source changes
    (its `require` message: other code), ReserveLogic by address alone is verified from the sources
    as deployed, a full match, not from the files as they are now. Last in the module: it edits
    the shared project, and puts the file back."""
    from ape_contract_verify.workflow.ledger import Ledger

    project, anvil, _, addresses, _ = deployed
    [ledger] = (project / ".build" / "contract_verify").glob("deployments-*.sqlite")
    [entry] = [e for e in Ledger(ledger).deployments() if e.address == addresses["ReserveLogic"]]
    kept = Ledger(ledger).kept_inputs([entry.compile_input or ""]).get(entry.compile_input or "")
    assert kept is not None and set(kept["sources"]) == GROUP, "the deploy kept the group's input"
    source = project / "contracts" / "ReserveLogic.sol"
    original = source.read_text()
    try:
        source.write_text(original.replace('"inactive"', '"reserve inactive"'))
        report, record = _verify_later(project, anvil, addresses["ReserveLogic"])
    finally:
        source.write_text(original)
    assert (report["contract"], report["outcome"], report["match"]) == ("ReserveLogic", "verified", "full"), report[
        "reason"
    ]
    sent = json.loads(record["SourceCode"][1:-1])["sources"]
    assert '"inactive"' in sent["contracts/ReserveLogic.sol"]["content"] and set(sent) == GROUP
