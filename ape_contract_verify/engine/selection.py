"""Output selections: the wide one a build uses, and the narrowed part of a wide output.

The engine narrows a compile to the one contract it verifies (`compilers.with_output_selection`);
solc 0.7.1 can crash on a narrowed input whose wide form (every contract, as the user's build
selected) compiles. `compilers.compile_input` then compiles wide and keeps the narrowed part.
"""

from __future__ import annotations

# The key of a narrowed compile's output that came from the wide compile: what happened, in words.
WIDENED = "widenedOutputSelection"


def widened(input_json: dict) -> dict | None:
    """`input_json` with every contract of every file selected (the same outputs), as a build
    selects them; None when it already is, or selects no contract output."""
    selection = (input_json.get("settings") or {}).get("outputSelection") or {}
    outputs: dict[str, set] = {"": set(), "*": set()}
    for per_file in selection.values():
        for contract, wanted in (per_file or {}).items():
            outputs["" if contract == "" else "*"].update(wanted or [])
    wide = {"*": {key: sorted(value) for key, value in outputs.items() if value}}
    if not outputs["*"] or selection == wide:
        return None
    return {**input_json, "settings": {**input_json["settings"], "outputSelection": wide}}


def narrowed(output: dict, input_json: dict, crash: str) -> dict:
    """The wide compile's `output` cut to `input_json`'s selection, with the note saying why."""
    selection = input_json["settings"]["outputSelection"]
    contracts = {
        file: kept
        for file, per_file in (output.get("contracts") or {}).items()
        if (kept := {name: c for name, c in per_file.items() if _selected(selection, file, name)})
    }
    asked = ", ".join(
        f"{file}:{name}" for file, per_file in sorted(selection.items()) for name in sorted(per_file or {})
    )
    note = (
        f"solc crashed with the output narrowed to {asked} ({crash[:200]}); "
        "compiled again with every contract selected, as a build does, and that output used"
    )
    return {**output, "contracts": contracts, WIDENED: note}


def _selected(selection: dict, file: str, name: str) -> bool:
    return any(name in (selection.get(key) or {}) or "*" in (selection.get(key) or {}) for key in (file, "*"))
