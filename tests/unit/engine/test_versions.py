"""engine/versions.py: the one parser of a compiler version as the contract API names it."""

from __future__ import annotations

import pytest

from ape_contract_verify.engine.versions import (
    CompilerError,
    CompilerVersion,
    InvalidCompilerVersion,
    parse_compiler_version,
)
from ape_contract_verify.exceptions import ContractVerifyError


@pytest.mark.parametrize(
    ("text", "language", "version", "commit", "long"),
    [
        ("v0.8.26+commit.8a97fa7a", "solidity", "0.8.26", "8a97fa7a", "v0.8.26+commit.8a97fa7a"),
        ("0.8.26", "solidity", "0.8.26", None, "v0.8.26"),
        ("  V0.7.1+COMMIT.F4A555BE ", "solidity", "0.7.1", "f4a555be", "v0.7.1+commit.f4a555be"),
        ("v0.8.25-nightly.2024.3.1+commit.abcdef", "solidity", "0.8.25", "abcdef", "v0.8.25+commit.abcdef"),
        ("vyper:0.4.3", "vyper", "0.4.3", None, "vyper:0.4.3"),
        ("vyper:0.3.10rc1", "vyper", "0.3.10", None, "vyper:0.3.10"),
        ("vyper:0.4.0b2+commit.12345678", "vyper", "0.4.0", "12345678", "vyper:0.4.0"),
    ],
)
def test_the_explorer_s_forms_parse(text, language, version, commit, long):
    parsed = parse_compiler_version(text)
    assert (parsed.language, parsed.version, parsed.commit) == (language, version, commit)
    assert parsed.long == long


def test_language_forces_the_grammar():
    assert parse_compiler_version("0.3.7", "vyper") == CompilerVersion("vyper", "0.3.7")
    assert parse_compiler_version("0.3.7").language == "solidity"
    with pytest.raises(InvalidCompilerVersion, match="not a solidity compiler version"):
        parse_compiler_version("vyper:0.4.3", "solidity")


def test_triple_orders_numerically():
    assert parse_compiler_version("v0.8.9").triple == (0, 8, 9)
    assert parse_compiler_version("v0.8.10").triple > parse_compiler_version("v0.8.9").triple


@pytest.mark.parametrize(
    "text",
    ["", "latest", "0.8", "v0.8.26+commit.xyz12345", "v0.8.26+commit.12345", "0.8.26 extra", None],
)
def test_bad_versions_name_the_parameter_and_the_form(text):
    with pytest.raises(InvalidCompilerVersion) as caught:
        parse_compiler_version(text)
    message = str(caught.value)
    assert message.startswith("compilerversion ") and "use the form v0.8.26+commit.8a97fa7a" in message


def test_a_bad_vyper_version_shows_vyper_s_form():
    with pytest.raises(InvalidCompilerVersion, match="use the form vyper:0.4.3"):
        parse_compiler_version("vyper:four")


def test_errors_descend_from_the_package_s_error():
    assert issubclass(InvalidCompilerVersion, CompilerError)
    assert issubclass(CompilerError, ContractVerifyError)
