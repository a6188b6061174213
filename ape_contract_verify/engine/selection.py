"""Output selections: the wide one a build uses, and the narrowed part of a wide output.

The engine narrows a compile to the one contract it verifies (`compilers.with_output_selection`);
solc 0.7.1 can crash on a narrowed input whose wide form (every contract, as the user's build
selected) compiles. `compilers.compile_input` then compiles wide and keeps the narrowed part.
"""

from __future__ import annotations

from typing import Final

from ape_contract_verify.engine.compiler_output import CompilerOutput, ContractOutput
from ape_contract_verify.protocol.inputs import CompilerInput, OutputSelection

# The key of a narrowed compile's output that came from the wide compile: what happened, in words.
WIDENED: Final = "widenedOutputSelection"


def widened(input_json: CompilerInput) -> CompilerInput | None:
    """`input_json` with every contract of every file selected (the same outputs), as a build
    selects them; None when it already is, or selects no contract output."""
    selection = (input_json.get("settings") or {}).get("outputSelection") or {}
    outputs: dict[str, set[str]] = {"": set(), "*": set()}
    for per_file in selection.values():
        for contract, wanted in _per_contract(per_file).items():
            outputs["" if contract == "" else "*"].update(wanted or [])
    wide: OutputSelection = {"*": {key: sorted(value) for key, value in outputs.items() if value}}
    if not outputs["*"] or _as_sets(selection) == _as_sets(wide):  # the outputs' order is no difference
        return None
    return {**input_json, "settings": {**input_json["settings"], "outputSelection": wide}}


def narrowed(output: CompilerOutput, input_json: CompilerInput, crash: str) -> CompilerOutput:
    """The wide compile's `output` cut to `input_json`'s selection, with the note saying why."""
    selection = input_json["settings"]["outputSelection"]
    contracts: dict[str, dict[str, ContractOutput]] = {
        file: kept
        for file, per_file in (output.get("contracts") or {}).items()
        if (kept := {name: c for name, c in per_file.items() if _selected(selection, file, name)})
    }
    asked = ", ".join(
        f"{file}:{name}" for file, per_file in sorted(selection.items()) for name in sorted(_per_contract(per_file))
    )
    note = (
        f"solc crashed with the output narrowed to {asked} ({crash[:200]}); "
        "compiled again with every contract selected, as a build does, and that output used"
    )
    return {**output, "contracts": contracts, WIDENED: note}


def _per_contract(per_file: dict[str, list[str]] | list[str] | None) -> dict[str, list[str]]:
    # Only Solidity selects per contract (and only Solidity is widened); Vyper's list names none.
    return per_file if isinstance(per_file, dict) else {}


def _as_sets(selection: OutputSelection) -> dict[str, dict[str, frozenset[str]]]:
    return {file: {c: frozenset(w or []) for c, w in _per_contract(v).items()} for file, v in selection.items()}


def _selected(selection: OutputSelection, file: str, name: str) -> bool:
    return any(
        name in _per_contract(selection.get(key)) or "*" in _per_contract(selection.get(key)) for key in (file, "*")
    )
