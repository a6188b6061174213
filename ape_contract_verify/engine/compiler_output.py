"""The compilers' JSON output (solc's standard JSON, vyper-json) as types: the keys the engine reads.

`total=False`: a compiler leaves out what was not selected, and an error output has no contracts.
Read from `json.loads`, so these say what the compilers document, not what was checked.
"""

from __future__ import annotations

from typing import TypeAlias, TypedDict

from ape_contract_verify.evm.bytecode import CodeReference
from ape_contract_verify.json_types import JsonObject

# file -> library -> where its address goes; an immutable's AST id -> where its value goes.
LinkReferences: TypeAlias = dict[str, dict[str, list[CodeReference]]]
ImmutableReferences: TypeAlias = dict[str, list[CodeReference]]


class Bytecode(TypedDict, total=False):
    object: str
    linkReferences: LinkReferences
    immutableReferences: ImmutableReferences  # the deployed bytecode's only


class EvmOutput(TypedDict, total=False):
    bytecode: Bytecode
    deployedBytecode: Bytecode


class ContractOutput(TypedDict, total=False):
    abi: list[JsonObject]
    metadata: str
    evm: EvmOutput


class SourceLocation(TypedDict, total=False):
    file: str
    start: int


class CompilerMessage(TypedDict, total=False):
    severity: str
    type: str
    message: str
    formattedMessage: str
    sourceLocation: SourceLocation


# engine/vyper03_callee_order.py's report: per contract, each function as (name, internal, callees).
CalleeReport: TypeAlias = list[list[tuple[str, bool, list[str]]]]


class CompilerOutput(TypedDict, total=False):
    contracts: dict[str, dict[str, ContractOutput]]  # file -> contract name -> its output
    errors: list[CompilerMessage]
    sources: dict[str, JsonObject]
    calleeOrder: CalleeReport  # the callee-order driver's compiles only
    widenedOutputSelection: str  # selection.WIDENED: a narrowed output taken from a wide compile
    buildOutputs: list[str]  # compilers.keep_build: what a kept build selected for every contract
