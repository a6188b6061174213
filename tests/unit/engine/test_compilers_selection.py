"""engine/compilers.py's output selections: the wide output selection a build uses, and the narrowed part of its output."""

from __future__ import annotations

from ape_contract_verify.engine import compilers

OUTPUTS = ["abi", "evm.bytecode.object"]


def narrow_input() -> dict:
    return {
        "language": "Solidity",
        "sources": {"A.sol": {"content": "contract A {}"}, "B.sol": {"content": "contract B {}"}},
        "settings": {"optimizer": {"enabled": True}, "outputSelection": {"A.sol": {"A": OUTPUTS}}},
    }


def test_widened_selects_every_contract_with_the_same_outputs():
    narrow = narrow_input()
    wide = compilers.widened(narrow)
    assert wide["settings"]["outputSelection"] == {"*": {"*": sorted(OUTPUTS)}}
    assert wide["settings"]["optimizer"] == {"enabled": True} and wide["sources"] == narrow["sources"]
    assert narrow["settings"]["outputSelection"] == {"A.sol": {"A": OUTPUTS}}  # the input is not changed


def test_file_level_outputs_stay_file_level():
    narrow = narrow_input()
    narrow["settings"]["outputSelection"]["A.sol"][""] = ["ast"]
    assert compilers.widened(narrow)["settings"]["outputSelection"] == {"*": {"": ["ast"], "*": sorted(OUTPUTS)}}


def test_already_wide_or_no_contract_output_is_none():
    wide = compilers.widened(narrow_input())
    assert compilers.widened(wide) is None
    only_ast = {"settings": {"outputSelection": {"A.sol": {"": ["ast"]}}}}
    assert compilers.widened(only_ast) is None
    assert compilers.widened({"sources": {}}) is None


def test_a_wide_selection_in_another_order_is_already_wide():
    """A build's own `{"*": {"*": outputs}}` in its order: no second compile after a crash."""
    unsorted = {"settings": {"outputSelection": {"*": {"*": ["evm.bytecode.object", "abi"]}}}}
    assert compilers.widened(unsorted) is None


def test_narrowed_keeps_the_selected_contracts_and_says_why():
    wide_output = {
        "contracts": {"A.sol": {"A": {"abi": []}, "Other": {"abi": []}}, "B.sol": {"B": {"abi": []}}},
        "sources": {"A.sol": {"id": 0}, "B.sol": {"id": 1}},
    }
    crash = "InternalCompilerError: Compiled contract not found. " + "x" * 500
    cut = compilers.narrowed(wide_output, narrow_input(), crash)
    assert cut["contracts"] == {"A.sol": {"A": {"abi": []}}}
    assert cut["sources"] == wide_output["sources"]
    note = cut[compilers.WIDENED]
    assert note.startswith("solc crashed with the output narrowed to A.sol:A (InternalCompilerError")
    assert "x" * 200 not in note  # the crash text is cut
    assert "compiled again with every contract selected" in note


def test_narrowed_with_a_star_file_or_name():
    output = {"contracts": {"A.sol": {"A": {}}, "B.sol": {"B": {}}}}
    star_file = {"settings": {"outputSelection": {"*": {"B": OUTPUTS}}}}
    assert compilers.narrowed(output, star_file, "crash")["contracts"] == {"B.sol": {"B": {}}}
    star_name = {"settings": {"outputSelection": {"A.sol": {"*": OUTPUTS}}}}
    assert compilers.narrowed(output, star_name, "crash")["contracts"] == {"A.sol": {"A": {}}}
    nothing = {"settings": {"outputSelection": {"C.sol": {"C": OUTPUTS}}}}
    assert compilers.narrowed(output, nothing, "crash")["contracts"] == {}
