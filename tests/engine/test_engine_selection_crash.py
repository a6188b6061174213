"""Issue 27: solc 0.7.1 crashes on a narrowed output selection that the user's build (every
contract selected) compiles. The engine retries such a crash wide, caches the result under the
narrowed input and says so; an ordinary error is not retried. Real solc-js 0.7.1, real anvil."""

from __future__ import annotations

import json
import logging

import pytest

from ape_contract_verify.engine import compilers
from ape_contract_verify.engine.compilers import (
    WIDENED,
    CompileCache,
    CompilerCrashed,
    CompilerFailed,
    compile_input,
    compile_standard_json,
    single_file_input,
    widened,
    with_output_selection,
)
from ape_contract_verify.engine.verifier import Verifier
from ape_contract_verify.evm.chain import JsonRpcChain
from support.engine import bytecode_of, encode, json_request, single_request, solc_version_of, source, standard_input
from support.service import Anvil

FILE = "src/BaseCreates.sol"


@pytest.fixture(scope="module")
def solc():
    return solc_version_of("0.7.1")


def wide_input() -> dict:
    """As the user's build (and derive's submission) has it: every file, every contract."""
    return standard_input(
        {FILE: "BaseCreates.sol"},
        optimizer={"enabled": True, "runs": 1500},
        outputSelection={"*": {"*": ["abi", "evm.bytecode", "evm.deployedBytecode", "metadata"]}},
    )


def narrowed_input() -> dict:
    return with_output_selection(wide_input(), FILE, "Main")


@pytest.fixture
def solc_runs(monkeypatch):
    """Every solc run of the engine, as the input's selection."""
    runs: list[dict] = []
    real = compilers.compile_standard_json

    def counting(version, input_json, timeout=compilers.DEFAULT_TIMEOUT):
        runs.append(input_json["settings"]["outputSelection"])
        return real(version, input_json, timeout)

    monkeypatch.setattr(compilers, "compile_standard_json", counting)
    return runs


def test_the_narrowed_input_crashes_solc_and_the_wide_one_does_not(solc):
    # The reproduction itself: if solc stops crashing here, the tests below prove nothing.
    with pytest.raises(CompilerCrashed, match="InternalCompilerError: .*Compiled contract not found"):
        compile_standard_json(solc, narrowed_input())
    assert compile_standard_json(solc, widened(narrowed_input()))["contracts"][FILE]["Main"]


def test_a_crash_is_retried_wide_said_and_cached(solc, solc_runs, tmp_path, caplog):
    cache = CompileCache(tmp_path / "cache")
    with caplog.at_level(logging.WARNING, logger="ape.contract_verify"):
        output = compile_input(solc, narrowed_input(), cache=cache)
    wide = {"*": {"*": sorted(compilers.SOLIDITY_OUTPUTS)}}
    assert solc_runs == [{FILE: {"Main": compilers.SOLIDITY_OUTPUTS}}, wide]
    # The narrowed part only, with the code the wide compile (the user's build) gives.
    assert output["contracts"] == {FILE: {"Main": output["contracts"][FILE]["Main"]}}
    direct = compile_standard_json(solc, widened(narrowed_input()))["contracts"][FILE]["Main"]
    assert bytecode_of(output["contracts"][FILE]["Main"]) == bytecode_of(direct)
    assert f"solc crashed with the output narrowed to {FILE}:Main" in output[WIDENED]
    assert "Compiled contract not found" in output[WIDENED] and "every contract selected" in output[WIDENED]
    assert [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING] == [
        f"contract_verify: {output[WIDENED]}"
    ]

    # The next compile of the same input is a hit, in memory and on disk: no solc, no crash.
    solc_runs.clear()
    assert compile_input(solc, narrowed_input(), cache=cache) == output
    assert compile_input(solc, narrowed_input(), cache=CompileCache(tmp_path / "cache")) == output
    assert solc_runs == [] and (cache.compiles, cache.hits) == (1, 1)


def test_an_ordinary_error_is_not_retried(solc, solc_runs):
    broken = narrowed_input()
    broken["sources"][FILE]["content"] = source("BaseCreates.sol").replace("value = value_;", "value = owner;")
    cache = CompileCache()
    with pytest.raises(CompilerFailed, match=r"DeclarationError: Undeclared identifier") as info:
        compile_input(solc, broken, cache=cache)
    assert not isinstance(info.value, CompilerCrashed)
    assert len(solc_runs) == 1 and (cache.compiles, cache.hits) == (0, 0)


def test_a_wide_input_is_not_retried_and_a_wide_crash_says_both(solc, monkeypatch):
    # Stand-in compiles: a crash of the wide input itself has nothing wider to try.
    asked: list[dict] = []

    def crashing(version, input_json, timeout=compilers.DEFAULT_TIMEOUT):
        asked.append(input_json["settings"]["outputSelection"])
        raise CompilerCrashed(f"solc crashed on {json.dumps(asked[-1])}")

    monkeypatch.setattr(compilers, "compile_standard_json", crashing)
    with pytest.raises(CompilerCrashed):
        compile_input(solc, widened(narrowed_input()))
    assert len(asked) == 1
    asked.clear()
    with pytest.raises(
        CompilerFailed,
        match=r"crashed on .*Main.*; and with every contract selected, as a build selects them: solc crashed on .*\*",
    ):
        compile_input(solc, narrowed_input())
    assert len(asked) == 2


@pytest.fixture(scope="module")
def deployed(solc):
    """Main deployed twice as a build compiles it (every contract selected): from the standard-json
    input, and from the one file as the single-file form names it (Main.sol)."""
    node = Anvil()
    flat = single_file_input(source("BaseCreates.sol"), file_name="Main.sol", optimizer=True, runs=1500)
    args = encode(["uint256"], [42])
    addresses = {}
    for form, input_json, file in (("standard-json", wide_input(), FILE), ("single file", flat, "Main.sol")):
        main = compile_standard_json(solc, widened(with_output_selection(input_json, file, "Main")))
        addresses[form] = node.deploy(bytecode_of(main["contracts"][file]["Main"]), args)
    yield node, addresses, args
    node.stop()


@pytest.mark.parametrize("form", ["standard-json", "single file"])
def test_the_verifier_and_so_the_explorer_verifies_it(solc, deployed, form, caplog):
    node, addresses, args = deployed
    if form == "standard-json":
        request = json_request(addresses[form], wide_input(), f"{FILE}:Main", args, version=solc)
    else:
        request = single_request(
            addresses[form], source("BaseCreates.sol"), "Main", args, version=solc, optimization_used=True, runs=1500
        )
    with caplog.at_level(logging.WARNING, logger="ape.contract_verify"):
        result = Verifier(JsonRpcChain(node.url), CompileCache()).verify(request)
    assert result.verified and result.match == "full", result.reason
    assert any("solc crashed with the output narrowed to" in r.getMessage() for r in caplog.records)
