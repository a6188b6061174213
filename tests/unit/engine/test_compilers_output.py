"""engine/compilers.py: the compilers' JSON output as types, read as the engine reads it."""

import json

from ape_contract_verify.engine import compilers
from ape_contract_verify.engine.compilers import CompilerOutput, ContractOutput
from ape_contract_verify.evm.bytecode import immutable_ranges, link_positions

SOLC_OUTPUT = json.loads(
    """{"contracts": {"A.sol": {"A": {"abi": [], "evm": {
        "bytecode": {"object": "6080", "linkReferences": {"L.sol": {"L": [{"start": 10, "length": 20}]}}},
        "deployedBytecode": {"object": "6080", "immutableReferences": {"3": [{"start": 5, "length": 32}]}}}}}},
     "errors": [{"severity": "warning", "type": "Warning", "message": "w"}]}"""
)


def test_the_keys_the_engine_reads_are_the_compilers_own():
    assert set(CompilerOutput.__annotations__) >= {"contracts", "errors", "sources"}
    assert set(ContractOutput.__annotations__) == {"abi", "metadata", "evm"}
    assert set(compilers.Bytecode.__annotations__) == {"object", "linkReferences", "immutableReferences"}
    # A compiler leaves out what was not selected: nothing is required.
    assert not CompilerOutput.__required_keys__ and not ContractOutput.__required_keys__


def test_a_solc_output_reads_through_the_types_into_the_bytecode_helpers():
    output: CompilerOutput = SOLC_OUTPUT
    evm = output["contracts"]["A.sol"]["A"]["evm"]
    assert immutable_ranges(evm["deployedBytecode"]["immutableReferences"]) == [(5, 32)]
    (position,) = link_positions(evm["bytecode"]["linkReferences"])
    assert (position.file, position.library, position.start) == ("L.sol", "L", 10)
