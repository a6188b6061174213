"""engine/diagnose.py: Vyper's settings wherever they are written (settings or pragmas), and
the single-setting variants each compiler version accepts."""

from __future__ import annotations

from ape_contract_verify.engine import diagnose

PRAGMAS = "# pragma version ^0.4.0\n# pragma optimize codesize\n#pragma evm-version paris\n\nx: uint256\n"


def vyper_input(content: str = "x: uint256\n", **settings) -> dict:
    return {"language": "Vyper", "sources": {"A.vy": {"content": content}}, "settings": settings}


def test_values_by_version():
    assert diagnose.optimize_values((0, 4, 3)) == ("gas", "codesize", "none")
    assert diagnose.optimize_values((0, 3, 10)) == ("gas", "codesize", "none")
    assert diagnose.optimize_values((0, 3, 7)) == ("true", "false")
    assert diagnose.optimize_values((0, 2, 16)) == ()  # before 0.3.1: no optimize setting
    assert diagnose.optimize_values(None) == ("gas", "codesize", "none")  # unknown: the newest


def test_pragmas_are_read_from_0_3_10():
    assert diagnose.reads_pragmas(None) and diagnose.reads_pragmas((0, 3, 10))
    assert not diagnose.reads_pragmas((0, 3, 9))


def test_the_pragma_wins_over_settings_and_the_default_is_gas():
    assert diagnose.optimize_mode(vyper_input(PRAGMAS, optimize="gas")) == "codesize"
    assert diagnose.optimize_mode(vyper_input()) == "gas"
    assert diagnose.optimize_mode(vyper_input(optimize=True)) == "gas"
    assert diagnose.optimize_mode(vyper_input(optimize=False)) == "none"
    assert diagnose.optimize_mode(vyper_input(optimize="NONE")) == "none"
    assert diagnose.has_optimize_pragma(PRAGMAS) and not diagnose.has_optimize_pragma("x: uint256")
    assert not diagnose.has_optimize_pragma(None)


def test_a_bool_optimizer_ignores_pragmas():
    # 0.3.7's vyper-json: any truthy value means on, and a missing one too.
    assert diagnose.optimize_mode(vyper_input(PRAGMAS, optimize=False), version=(0, 3, 7)) == "false"
    assert diagnose.optimize_mode(vyper_input(optimize="none"), version=(0, 3, 7)) == "true"
    assert diagnose.optimize_mode(vyper_input(), version=(0, 3, 7)) == "true"


def test_the_file_s_pragma_counts_when_a_file_is_named():
    input_json = vyper_input()
    input_json["sources"]["B.vy"] = {"content": PRAGMAS}
    assert diagnose.optimize_mode(input_json, "A.vy") == "gas"
    assert diagnose.optimize_mode(input_json, "B.vy") == "codesize"
    assert diagnose.optimize_mode(input_json) == "codesize"  # any file's, without a name


def test_evm_version_from_pragma_settings_or_default():
    assert diagnose.evm_version(vyper_input(PRAGMAS, evmVersion="cancun")) == "paris"
    assert diagnose.evm_version(vyper_input(PRAGMAS, evmVersion="cancun"), (0, 3, 7)) == "cancun"
    assert diagnose.evm_version(vyper_input()) == "default"


def test_with_setting_changes_settings_and_every_pragma_without_touching_the_input():
    original = vyper_input(PRAGMAS, optimize="codesize")
    changed = diagnose.with_setting(original, optimize="none", evm="cancun")
    content = changed["sources"]["A.vy"]["content"]
    assert "# pragma optimize none" in content and "#pragma evm-version cancun" in content
    assert changed["settings"] == {"optimize": "none", "evmVersion": "cancun"}
    assert original["sources"]["A.vy"]["content"] == PRAGMAS and original["settings"] == {"optimize": "codesize"}
    bool_form = diagnose.with_setting(vyper_input(), optimize=False)
    assert bool_form["settings"]["optimize"] is False


def test_variants_try_the_optimizer_first_and_skip_the_current_values():
    found = list(diagnose.variants(vyper_input(optimize="gas", evmVersion="cancun"), "A.vy", (0, 4, 3)))
    assert [description for _, description, _ in found] == [
        "settings.optimize=codesize",
        "settings.optimize=none",
        "settings.evmVersion=shanghai",
        "settings.evmVersion=paris",
        "settings.evmVersion=prague",
    ]
    assert {field for field, _, _ in found} == {"optimizer", "evmVersion"}
    assert found[0][2]["settings"]["optimize"] == "codesize"


def test_variants_of_0_3_7_are_bools_and_its_evm_versions():
    found = list(diagnose.variants(vyper_input(), "A.vy", (0, 3, 7)))
    descriptions = [description for _, description, _ in found]
    assert descriptions[0] == "settings.optimize=false"
    assert "settings.evmVersion=paris" not in descriptions  # 0.3.7's default: no change
    assert "settings.evmVersion=cancun" not in descriptions  # 0.3.7 does not know it
    assert found[0][2]["settings"]["optimize"] is False


def test_variants_before_0_3_1_have_no_optimizer():
    found = list(diagnose.variants(vyper_input(), "A.vy", (0, 2, 16)))
    assert found and all(field == "evmVersion" for field, _, _ in found)


def test_both_settings_are_read():
    pragmas, plain = vyper_input(PRAGMAS), vyper_input()
    assert (diagnose.optimize_mode(pragmas), diagnose.evm_version(pragmas)) == ("codesize", "paris")
    assert (diagnose.optimize_mode(plain, version=(0, 3, 7)), diagnose.evm_version(plain, (0, 3, 7))) == (
        "true",
        "default",
    )
