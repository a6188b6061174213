"""engine/diagnose.py: the ordered variations, the hint texts, and the search for the one setting
that reproduces the deployed code, with the compiler replaced by a function of the settings."""

from __future__ import annotations

import pytest

from ape_contract_verify.engine import compilers
from ape_contract_verify.engine.compilers import SOLIDITY_OUTPUTS, CompilerFailed, ContractInput
from ape_contract_verify.engine.diagnose import (
    SETTINGS_HINT,
    diagnose,
    solidity_variations,
    variants,
    vyper_hint,
)

SOLC = "v0.8.26+commit.8a97fa7a"
DEPLOYED = bytes.fromhex("6080604052600a600b01")


def test_optimizer_off_tries_it_on_then_via_ir_then_evm_versions():
    found = solidity_variations({"settings": {"optimizer": {"enabled": False, "runs": 200}}})
    assert [label for _, label, _ in found] == [
        "the optimizer enabled with 200 runs (optimizer.enabled=true)",
        "viaIR=true",
        "evmVersion=paris",
        "evmVersion=shanghai",
        "evmVersion=london",
        "evmVersion=cancun",
        "evmVersion=prague",
    ]
    assert found[0][2]["settings"]["optimizer"] == {"enabled": True, "runs": 200}
    assert found[1][2]["settings"]["viaIR"] is True and found[2][2]["settings"]["evmVersion"] == "paris"


def test_optimizer_on_with_other_runs_tries_off_the_default_runs_and_the_frequent_ones():
    settings = {"optimizer": {"enabled": True, "runs": 1000}, "evmVersion": "paris", "viaIR": True}
    found = solidity_variations({"settings": settings})
    labels = [label for _, label, _ in found]
    assert labels[:4] == [
        "the optimizer disabled (optimizer.enabled=false)",
        "optimizer.runs=200",
        "viaIR=false",
        "the compiler's default evmVersion",
    ]
    assert "evmVersion=paris" not in labels and "optimizer.runs=1000" not in labels
    assert [label for label in labels if "runs=" in label] == [
        "optimizer.runs=200",
        "optimizer.runs=10000",
        "optimizer.runs=1",
        "optimizer.runs=999999",
        "optimizer.runs=1000000",
    ]
    assert "evmVersion" not in found[3][2]["settings"]  # the default: the key left out
    assert settings["optimizer"] == {"enabled": True, "runs": 1000}  # the input is not changed


def test_single_file_labels_use_the_form_s_field_names():
    labels = [label for _, label, _ in solidity_variations({"settings": {}}, single_file=True)]
    assert labels[0] == "the optimizer enabled with 200 runs (optimizationUsed=1)"
    assert "evmversion=paris" in labels


def test_vyper_hints_spell_the_version_s_values():
    assert vyper_hint("vyper:0.3.7") == (
        "settings or source differ: compiler version, optimize (true, false), evmVersion or a source line"
    )
    assert "optimize (gas, codesize, none)" in vyper_hint("vyper:0.4.3")
    assert "optimize (gas, codesize, none)" in vyper_hint("not a version")  # the newest compiler's
    assert "optimize" not in vyper_hint("vyper:0.2.16")


def test_vyper_variations_are_named_as_settings():
    input_json = {"language": "Vyper", "sources": {"A.vy": {"content": "x: uint256"}}, "settings": {}}
    found = list(variants(input_json, "A.vy", (0, 4, 3)))
    assert found[0][:2] == ("optimizer", "settings.optimize=codesize")
    assert ("evmVersion", "settings.evmVersion=cancun") in [item[:2] for item in found]
    old = list(variants(input_json, "A.vy", (0, 3, 7)))
    assert old[0][:2] == ("optimizer", "settings.optimize=false")


def test_solidity_variations_keep_the_rest_of_the_input():
    input_json = {"language": "Solidity", "sources": {"A.sol": {}}, "settings": {"optimizer": {"enabled": False}}}
    found = solidity_variations(input_json)
    assert all(variant["sources"] == {"A.sol": {}} for _, _, variant in found)


def fake_compiler(monkeypatch, reproduces_when, fails_when=lambda settings: False):
    """`compile_input` answering DEPLOYED for the settings `reproduces_when` accepts, else other code."""
    seen = []

    def compile_input(version, input_json, **options):
        settings = input_json["settings"]
        seen.append(settings)
        assert settings["outputSelection"] == {"A.sol": {"A": SOLIDITY_OUTPUTS}}  # narrowed to the contract
        if fails_when(settings):
            raise CompilerFailed("solc reported errors: TypeError")
        code = DEPLOYED if reproduces_when(settings) else DEPLOYED[:-1] + b"\x02"
        evm = {"bytecode": {"object": code.hex()}, "deployedBytecode": {"object": code.hex()}}
        return {"contracts": {"A.sol": {"A": {"evm": evm}}}}

    monkeypatch.setattr(compilers, "compile_input", compile_input)
    return seen


SUBMITTED = {
    "language": "Solidity",
    "sources": {"A.sol": {"content": "contract A {}"}},
    "settings": {"optimizer": {"enabled": False, "runs": 200}},
}


def test_the_setting_that_reproduces_the_code_is_named(monkeypatch):
    seen = fake_compiler(monkeypatch, lambda settings: settings.get("viaIR") is True)
    setting, text = diagnose(ContractInput(SOLC, SUBMITTED, "A.sol", "A", "solidity"), DEPLOYED)
    assert setting == "viaIR"
    assert text == "the deployed code was compiled with viaIR=true: resubmit with that setting."
    assert len(seen) == 2  # stops at the first that reproduces


def test_none_within_the_budget_is_the_source(monkeypatch):
    seen = fake_compiler(monkeypatch, lambda settings: settings.get("evmVersion") == "prague")
    setting, text = diagnose(ContractInput(SOLC, SUBMITTED, "A.sol", "A", "solidity"), DEPLOYED, compiles=2)
    assert setting == "source" and len(seen) == 2
    assert text == (
        f"{SETTINGS_HINT}. No single change among the optimizer enabled with 200 runs (optimizer.enabled=true), "
        "viaIR=true reproduces it, so the source or the compiler most likely differs."
    )


def test_a_variation_the_compiler_refuses_is_passed_over(monkeypatch):
    fake_compiler(
        monkeypatch,
        reproduces_when=lambda settings: settings.get("evmVersion") == "paris",
        fails_when=lambda settings: settings.get("viaIR") is True,
    )
    assert diagnose(ContractInput(SOLC, SUBMITTED, "A.sol", "A", "solidity"), DEPLOYED)[0] == "evmVersion"


def test_no_budget_compiles_nothing(monkeypatch):
    monkeypatch.setattr(compilers, "compile_input", lambda *a, **k: pytest.fail("no compile with no budget"))
    assert diagnose(ContractInput(SOLC, SUBMITTED, "A.sol", "A", "solidity"), DEPLOYED, compiles=0) == (
        "source",
        f"{SETTINGS_HINT}.",
    )
    vyper = diagnose(ContractInput("vyper:0.3.7", SUBMITTED, "A.vy", "A", "vyper"), DEPLOYED, compiles=0)
    assert vyper == ("source", vyper_hint("vyper:0.3.7") + ".")


def test_output_without_the_contract_is_passed_over(monkeypatch):
    monkeypatch.setattr(compilers, "compile_input", lambda *a, **k: {"contracts": {}})
    setting, text = diagnose(ContractInput(SOLC, SUBMITTED, "A.sol", "A", "solidity"), DEPLOYED, compiles=3)
    assert setting == "source" and "No single change among" in text


def test_the_timeout_is_the_compilers_own_unless_given(monkeypatch):
    from ape_contract_verify.engine.compilers import DEFAULT_TIMEOUT

    options = []
    monkeypatch.setattr(compilers, "compile_input", lambda v, i, **o: options.append(o) or {})
    diagnose(ContractInput(SOLC, SUBMITTED, "A.sol", "A", "solidity"), DEPLOYED, compiles=1)
    diagnose(ContractInput(SOLC, SUBMITTED, "A.sol", "A", "solidity", timeout=5.0), DEPLOYED, compiles=1)
    assert options == [{"cache": None, "timeout": DEFAULT_TIMEOUT}, {"cache": None, "timeout": 5.0}]
