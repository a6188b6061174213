"""workflow/ape_builds.py with a stand-in for `solcx.compile_standard`: what ape-solidity's compile
is asked for and answers, and what is kept of it. The real path (ape-solidity, solc, a deploy whose
verification compiles nothing) is tests/e2e/test_as_built.py's."""

from __future__ import annotations

import json
import types

import pytest

from ape_contract_verify.engine import compilers
from ape_contract_verify.engine.compilers import SOLIDITY_OUTPUTS, CompileCache, with_output_selection
from ape_contract_verify.workflow import ape_builds

APE_SELECTS = ["abi", "bin-runtime", "evm.bytecode.object"]
VERSION = "0.8.26+commit.8a97fa7a"


def ape_input() -> dict:
    return {
        "language": "Solidity",
        "sources": {"contracts/A.sol": {"content": 'import "contracts/B.sol"; contract A {}'}},
        "settings": {"outputSelection": {"contracts/A.sol": {"*": list(APE_SELECTS), "": ["ast"]}}},
    }


def solc_output(metadata: str | None = json.dumps({"compiler": {"version": VERSION}})) -> dict:
    contract = {"abi": [], "evm": {"bytecode": {"object": "60"}, "deployedBytecode": {"object": "61"}}}
    if metadata is not None:
        contract["metadata"] = metadata
    return {
        "contracts": {"contracts/A.sol": {"A": contract}},
        "sources": {"contracts/A.sol": {"id": 0}, "contracts/B.sol": {"id": 1}},  # B read from disk
    }


class Solc:
    def __init__(self, output: dict):
        self.output, self.asked = output, []

    def __call__(self, input_data, **kwargs):
        self.asked.append((input_data, kwargs))
        return self.output


@pytest.fixture
def cache(monkeypatch):
    fresh = CompileCache()
    monkeypatch.setattr(compilers, "_PROCESS_CACHE", fresh)
    return fresh


@pytest.fixture
def project(tmp_path):
    (tmp_path / "contracts").mkdir()
    (tmp_path / "contracts" / "B.sol").write_text("contract B {}")
    return tmp_path


def test_apes_compile_also_selects_what_verification_reads_and_its_build_is_kept(cache, project):
    solc = Solc(solc_output())
    given = ape_input()
    answer = ape_builds.keeping(solc)(given, base_path=project, solc_version="0.8.26")
    assert answer is solc.output  # ape-solidity reads its answer as solc gave it
    ((sent, kwargs),) = solc.asked
    assert kwargs == {"base_path": project, "solc_version": "0.8.26"}
    assert sent["settings"]["outputSelection"]["contracts/A.sol"] == {
        "*": list(dict.fromkeys(APE_SELECTS + SOLIDITY_OUTPUTS)),
        "": ["ast"],
    }
    assert given == ape_input()  # ape-solidity's own input is left as it was
    # Kept under what was compiled: B.sol, which solc read from the project, is part of it.
    compiled = {**sent, "sources": {**sent["sources"], "contracts/B.sol": {"content": "contract B {}"}}}
    run = []
    output = cache.get_or_compile(
        f"v{VERSION}", with_output_selection(compiled, "contracts/A.sol", "A"), lambda: run.append(1)
    )
    assert run == [] and output["contracts"]["contracts/A.sol"]["A"]["evm"]["deployedBytecode"]["object"] == "61"
    # Without B.sol: not the input solc compiled.
    assert not cache.holds_build(f"v{VERSION}", with_output_selection(sent, "contracts/A.sol", "A"))


@pytest.mark.parametrize(
    "output",
    [solc_output(metadata=None), solc_output(metadata="not json"), {"errors": [{"severity": "error"}]}],
    ids=["no metadata", "bad metadata", "nothing compiled"],
)
def test_a_build_that_cannot_be_kept_is_still_apes_answer(cache, project, output):
    solc = Solc(output)
    assert ape_builds.keeping(solc)(ape_input(), base_path=project) is output
    assert not cache._memory


def test_an_input_of_another_shape_runs_as_given_and_nothing_is_kept(cache):
    solc = Solc(solc_output())
    odd = {"language": "Solidity", "sources": {}, "settings": {"outputSelection": "everything"}}
    ape_builds.keeping(solc)(odd)
    assert solc.asked[0][0] is odd and not cache._memory


def test_the_wrapper_goes_in_once_and_only_over_a_compile_standard():
    solc = Solc(solc_output())
    module = types.ModuleType("ape_solidity.compiler")
    module.compile_standard = solc
    ape_builds._wrap(module)
    wrapped = module.compile_standard
    ape_builds._wrap(module)
    assert wrapped is module.compile_standard and wrapped is not solc
    empty = types.ModuleType("ape_solidity.compiler")
    ape_builds._wrap(empty)  # an ape-solidity without it: nothing to wrap, nothing raised
    assert not hasattr(empty, "compile_standard")
