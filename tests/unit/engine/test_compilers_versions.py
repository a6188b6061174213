"""engine/compilers.py: the one parser of a compiler version as the contract API names it."""

from __future__ import annotations

import pytest

from ape_contract_verify.engine.compilers import (
    CompilerError,
    CompilerVersion,
    InvalidCompilerVersion,
    parse_compiler_version,
)
from ape_contract_verify.exceptions import ContractVerifyError


@pytest.mark.parametrize(
    ("text", "language", "number", "commit", "long"),
    [
        ("v0.8.26+commit.8a97fa7a", "solidity", "0.8.26", "8a97fa7a", "v0.8.26+commit.8a97fa7a"),
        ("0.8.26", "solidity", "0.8.26", None, "v0.8.26"),
        ("  V0.7.1+COMMIT.F4A555BE ", "solidity", "0.7.1", "f4a555be", "v0.7.1+commit.f4a555be"),
        (
            "v0.8.25-nightly.2024.3.1+commit.abcdef12",
            "solidity",
            "0.8.25",
            "abcdef12",
            "v0.8.25-nightly.2024.3.1+commit.abcdef12",
        ),
        ("vyper:0.4.3", "vyper", "0.4.3", None, "vyper:0.4.3"),
        # A pre-release is its own compiler: the suffix is kept (0.4.0rc6 is not 0.4.0).
        ("vyper:0.3.10rc1", "vyper", "0.3.10rc1", None, "vyper:0.3.10rc1"),
        ("vyper:0.4.0b2+commit.12345678", "vyper", "0.4.0b2", "12345678", "vyper:0.4.0b2+commit.12345678"),
    ],
)
def test_the_explorer_s_forms_parse(text, language, number, commit, long):
    parsed = parse_compiler_version(text)
    assert (parsed.language, parsed.number, parsed.commit) == (language, number, commit)
    assert parsed.long == long


def test_language_forces_the_grammar():
    assert parse_compiler_version("0.3.7", "vyper") == CompilerVersion.parse("vyper:0.3.7")
    assert parse_compiler_version("0.3.7").language == "solidity"
    with pytest.raises(InvalidCompilerVersion, match="not a solidity compiler version"):
        parse_compiler_version("vyper:0.4.3", "solidity")


def test_release_orders_numerically():
    assert parse_compiler_version("v0.8.9").release == (0, 8, 9)
    assert parse_compiler_version("v0.8.10") > parse_compiler_version("v0.8.9")
    assert parse_compiler_version("vyper:0.4.0rc6") < parse_compiler_version("vyper:0.4.0")


def test_a_nightly_with_a_short_commit_is_refused():
    with pytest.raises(InvalidCompilerVersion):
        parse_compiler_version("v0.8.25-nightly.2024.3.1+commit.abcdef")


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
