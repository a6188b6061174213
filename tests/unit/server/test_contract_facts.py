"""server/contract_facts.py: a stored verification's settings as the pages name them, and its files."""

from __future__ import annotations

import json

import pytest

from ape_contract_verify.explorer.store import VerifiedContract
from ape_contract_verify.server.contract_facts import ContractFacts

pytestmark = pytest.mark.unit


def contract(**fields) -> VerifiedContract:
    values = dict(
        address="0x" + "ab" * 20,
        contract_name="src/A.sol:A",
        compiler_version="v0.8.26+commit.8a97fa7a",
        code_format="solidity-single-file",
        source_code="// SPDX-License-Identifier: MIT\ncontract A {}",
        abi="[]",
    )
    values.update(fields)
    return VerifiedContract(**values)


def test_a_flat_file_with_the_optimizer_recorded():
    facts = ContractFacts(contract(settings={"optimizer": {"enabled": True}}))
    assert (facts.optimizer, facts.evm_version, facts.via_ir, facts.license) == (
        "Yes, 200 runs",
        "Default",
        False,
        "MIT",
    )
    assert facts.sources() == {"A.sol": "// SPDX-License-Identifier: MIT\ncontract A {}"}


def test_a_json_inputs_settings_win_over_the_recorded_ones():
    source = json.dumps(
        {"sources": {"src/A.sol": {"content": "x"}, "src/B.sol": {}}, "settings": {"optimizer": {"enabled": False}}}
    )
    facts = ContractFacts(
        contract(
            code_format="solidity-standard-json-input", source_code=source, settings={"optimizer": {"enabled": True}}
        )
    )
    assert facts.optimizer == "No"
    assert facts.sources() == {"src/A.sol": "x", "src/B.sol": ""}


@pytest.mark.parametrize("mode, shown", [(None, "Yes (gas)"), ("codesize", "Yes (codesize)"), ("none", "No")])
def test_vyper_has_modes_not_runs(mode, shown):
    settings = {"optimize": mode} if mode else {}
    facts = ContractFacts(contract(compiler_version="vyper:0.4.3", contract_name="a.vy:A", settings=settings))
    assert facts.is_vyper and facts.optimizer == shown
    assert list(facts.sources()) == ["A.vy"]


def test_an_input_that_is_not_json_is_one_file_named_input_json():
    facts = ContractFacts(contract(code_format="solidity-standard-json-input", source_code="{not json"))
    assert facts.sources() == {"input.json": "{not json"}
    assert ContractFacts(contract(abi="not json")).abi == []
