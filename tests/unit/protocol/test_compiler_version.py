"""protocol/compiler_version.py: one parse of every compiler-version spelling, on packaging's
`Version`; and the form, Sourcify and engine rules that now read versions through it.

The five regexes it replaced disagreed; each disagreement is a case below with the answer chosen:
- a commit's hex digits: 6-40 (engine, Sourcify's rules), 8-40 (the form's Solidity), any (the
  form's Vyper, the Sourcify client's `vyper --version`): now 7-40, as solc prints 8 and Vyper's
  older PyPI packages print 7 (`0.3.10+commit.9136169`); 6 was no compiler's;
- Vyper's pre-releases: rc/b (engine) or a/b/rc (the others): now a/b/rc; and the engine dropped
  the suffix (`vyper:0.4.0rc6` was 0.4.0, another compiler): now kept;
- a Solidity pre-release or a Vyper nightly: accepted by Sourcify's rule alone: now refused;
- a nightly's date: YYYY.M.D (form), Y.M.D (engine, compilers), any dots (Sourcify): now the form's;
- `v` and `vyper:` in upper case, and a Solidity version without `v`: only the engine took them:
  now taken, and the form answers the explorers' spelling;
- trailing text after X.Y.Z (the hash-seed rule's prefix match): now refused.
"""

from __future__ import annotations

import pytest
from packaging.version import Version

from ape_contract_verify.engine import compilers
from ape_contract_verify.engine.compilers import CompilerError, parse_compiler_version
from ape_contract_verify.exceptions import InvalidRequest
from ape_contract_verify.protocol import forms
from ape_contract_verify.protocol import sourcify as sfy
from ape_contract_verify.protocol.compiler_version import CompilerVersion, InvalidCompilerVersion
from ape_contract_verify.request import CodeFormat, VerificationRequest

pytestmark = pytest.mark.unit


@pytest.mark.parametrize(
    "text, language, long, number, release, commit",
    [
        ("v0.8.20+commit.a1b79de6", None, "v0.8.20+commit.a1b79de6", "0.8.20", (0, 8, 20), "a1b79de6"),
        ("0.8.20", None, "v0.8.20", "0.8.20", (0, 8, 20), None),
        ("0.8.20+commit.A1B79DE6", None, "v0.8.20+commit.a1b79de6", "0.8.20", (0, 8, 20), "a1b79de6"),
        ("V0.8.20+commit.a1b79de6", None, "v0.8.20+commit.a1b79de6", "0.8.20", (0, 8, 20), "a1b79de6"),
        (
            "v0.8.28-nightly.2024.9.2+commit.12345678",
            None,
            "v0.8.28-nightly.2024.9.2+commit.12345678",
            "0.8.28",
            (0, 8, 28),
            "12345678",
        ),
        ("0.8.26+commit.8a97fa7", None, "v0.8.26+commit.8a97fa7", "0.8.26", (0, 8, 26), "8a97fa7"),  # 7 digits
        ("vyper:0.4.3", None, "vyper:0.4.3", "0.4.3", (0, 4, 3), None),
        ("VYPER:0.4.3", None, "vyper:0.4.3", "0.4.3", (0, 4, 3), None),
        ("vyper:v0.4.3", None, "vyper:0.4.3", "0.4.3", (0, 4, 3), None),
        ("v0.3.10+commit.91361694", "vyper", "vyper:0.3.10+commit.91361694", "0.3.10", (0, 3, 10), "91361694"),
        ("0.3.10+commit.9136169", "vyper", "vyper:0.3.10+commit.9136169", "0.3.10", (0, 3, 10), "9136169"),
        ("0.4.0rc6", "vyper", "vyper:0.4.0rc6", "0.4.0rc6", (0, 4, 0), None),
        ("vyper:0.4.0rc6+commit.33719560", None, "vyper:0.4.0rc6+commit.33719560", "0.4.0rc6", (0, 4, 0), "33719560"),
        ("0.3.10b1", "vyper", "vyper:0.3.10b1", "0.3.10b1", (0, 3, 10), None),
        ("0.4.1a2", "vyper", "vyper:0.4.1a2", "0.4.1a2", (0, 4, 1), None),  # the engine refused `a`
    ],
)
def test_every_spelling_parses_and_says_itself_as_explorers_do(text, language, long, number, release, commit):
    version = CompilerVersion.parse(text, language)
    assert (version.long, str(version), version.number, version.release, version.commit) == (
        long,
        long,
        number,
        release,
        commit,
    )
    assert version.version == Version(number)
    assert CompilerVersion.parse(version.long, version.language) == version  # its own spelling reads back


@pytest.mark.parametrize(
    "text, language",
    [
        ("", None),
        ("latest", None),
        ("0.8", None),
        ("0.8.20.1", None),
        ("v0.8.26+commit.xyz", None),
        ("v0.8.26+commit.8a97fa", None),  # 6 digits: the engine and Sourcify's rule took them
        ("v0.8.26+commit." + "a" * 41, None),
        ("v0.8.26+8a97fa7a", None),
        ("0.8.20rc1", None),  # Solidity has no pre-releases (Sourcify's rule took them)
        ("0.8.20rc1", "solidity"),
        ("v0.8.28-nightly.24.9.2+commit.12345678", None),  # a two-digit year
        ("v0.8.28-nightly.2024.09.002+commit.12345678", None),
        ("v0.8.28-nightly+commit.12345678", None),
        ("0.4.0-rc6", "vyper"),  # packaging reads it, but no compiler writes it so
        ("0.4.0.rc6", "vyper"),
        ("0.4.0c6", "vyper"),
        ("0.4.0rc", "vyper"),
        ("0.4.0dev1", "vyper"),
        ("0.4.0.post1", "vyper"),
        ("1!0.4.0", "vyper"),
        ("vyper0.4.3", None),
        ("vyper:0.4.3", "solidity"),
        ("vyper:0.4.0-nightly.2024.9.2", None),
        ("0.3.7junk", "vyper"),
        ("vv0.8.26", None),
    ],
)
def test_what_is_no_compiler_version_is_refused_naming_the_form(text, language):
    with pytest.raises(InvalidCompilerVersion) as caught:
        CompilerVersion.parse(text, language)
    read_as = language or ("vyper" if text.lower().startswith("vyper") else "solidity")
    example = "vyper:0.4.3" if read_as == "vyper" else "v0.8.26+commit.8a97fa7a"
    assert str(caught.value) == f"compilerversion {text!r} is not a {read_as} compiler version; use the form {example}"


def test_versions_of_one_compiler_order_by_packaging_a_nightly_before_its_release():
    vyper = [CompilerVersion.parse(t, "vyper") for t in ("0.4.0", "0.3.10", "0.4.0rc6", "0.4.0b1", "0.3.10rc1")]
    assert [v.number for v in sorted(vyper)] == ["0.3.10rc1", "0.3.10", "0.4.0b1", "0.4.0rc6", "0.4.0"]
    nightly = CompilerVersion.parse("v0.8.28-nightly.2024.9.2+commit.12345678")
    assert nightly < CompilerVersion.parse("v0.8.28+commit.7893614a") < CompilerVersion.parse("0.8.29")
    assert CompilerVersion.parse("v0.8.27") < nightly
    assert CompilerVersion.parse("0.8.26") >= CompilerVersion.parse("0.8.26") and not (
        CompilerVersion.parse("0.8.26") > CompilerVersion.parse("0.8.26")
    )
    with pytest.raises(TypeError, match="compare versions of one compiler"):
        _ = CompilerVersion.parse("vyper:0.4.3") < CompilerVersion.parse("0.8.26")


def test_plain_and_without_commit_are_sourcify_s_and_the_form_s_vyper_spelling():
    version = CompilerVersion.parse("vyper:0.4.3+commit.bff19ea2")
    assert version.plain == "0.4.3+commit.bff19ea2"
    assert version.without_commit().long == "vyper:0.4.3" and version.without_commit().commit is None


def test_with_commit_gives_the_same_number_built_from_another_commit():
    printed = CompilerVersion.parse("0.3.10+commit.9136169", "vyper")  # what the PyPI package prints
    assert printed.with_commit("91361694").plain == "0.3.10+commit.91361694"
    nightly = CompilerVersion.parse("v0.8.28-nightly.2024.9.2")
    assert nightly.with_commit("ABCDEF12").long == "v0.8.28-nightly.2024.9.2+commit.abcdef12"
    for bad in ("abcdef", "a" * 41, "xyz12345", ""):
        with pytest.raises(InvalidCompilerVersion, match=f"commit {bad!r} of 0.3.10 is not 7 to 40 hex digits"):
            printed.with_commit(bad)


@pytest.mark.parametrize(
    "text, language, form",
    [
        ("v0.8.26+commit.8a97fa7a", None, "v0.8.26+commit.8a97fa7a"),
        ("0.8.26+commit.8a97fa7a", "solidity", "v0.8.26+commit.8a97fa7a"),  # the manifest's, Sourcify's
        ("0.4.3+commit.bff19ea2", "vyper", "vyper:0.4.3"),
        ("v0.3.10+commit.91361694", "vyper", "vyper:0.3.10"),
        ("vyper:0.4.3", None, "vyper:0.4.3"),
        ("0.4.0rc6+commit.33719560", "vyper", "vyper:0.4.0rc6"),
        ("v0.8.28-nightly.2024.9.2+commit.12345678", None, "v0.8.28-nightly.2024.9.2+commit.12345678"),
        ("0.8.26", "solidity", "v0.8.26"),
    ],
)
def test_form_is_the_contract_api_s_spelling_solidity_with_its_commit_vyper_without(text, language, form):
    assert CompilerVersion.parse(text, language).form == form


@pytest.mark.parametrize(
    "output, language, long",
    [
        (
            "solc, the solidity compiler commandline interface\nVersion: 0.8.26+commit.8a97fa7a.Linux.g++\n",
            "solidity",
            "v0.8.26+commit.8a97fa7a",
        ),
        ("Version: 0.8.26+commit.8a97fa7a.Emscripten.clang\n", "solidity", "v0.8.26+commit.8a97fa7a"),
        (
            "Version: 0.8.28-nightly.2024.9.2+commit.12345678.Linux.g++",
            "solidity",
            "v0.8.28-nightly.2024.9.2+commit.12345678",
        ),
        ("0.4.3+commit.bff19ea2\n", "vyper", "vyper:0.4.3+commit.bff19ea2"),
        ("0.4.0rc6+commit.33719560\n", "vyper", "vyper:0.4.0rc6+commit.33719560"),
        ("0.3.10+commit.9136169\n", "vyper", "vyper:0.3.10+commit.9136169"),
        ("0.3.10", "vyper", "vyper:0.3.10"),  # a side venv's folder name
    ],
)
def test_a_compiler_s_version_output_is_read(output, language, long):
    found = CompilerVersion.printed(output, language)
    assert found is not None and found.long == long


@pytest.mark.parametrize("output", ["", "vyper: command not found", "Version: garbage+commit.zz", "0.3.10rc"])
def test_output_without_a_version_reads_as_none(output):
    assert CompilerVersion.printed(output, "vyper") is None


# -- the rules that read versions through it ----------------------------------------------------


@pytest.mark.parametrize(
    "given, answered",
    [
        ("v0.8.26+commit.8a97fa7a", "v0.8.26+commit.8a97fa7a"),
        ("0.8.26+commit.8A97FA7A", "v0.8.26+commit.8a97fa7a"),  # the explorers' spelling
        ("v0.8.26+commit.8a97fa7", "v0.8.26+commit.8a97fa7"),  # 7 digits: the form refused them
        ("v0.8.28-nightly.2024.9.2+commit.12345678", "v0.8.28-nightly.2024.9.2+commit.12345678"),
    ],
)
def test_the_form_takes_a_solidity_version_with_its_commit(given, answered):
    assert forms.validate_compiler_version(given) == answered


@pytest.mark.parametrize(
    "given, answered",
    [
        ("vyper:0.4.3", "vyper:0.4.3"),
        ("vyper:0.4.0rc6", "vyper:0.4.0rc6"),
        ("vyper:0.3.10b1", "vyper:0.3.10b1"),
        ("vyper:0.4.3+commit.bff19ea2", "vyper:0.4.3+commit.bff19ea2"),
    ],
)
def test_the_form_takes_a_vyper_version(given, answered):
    assert forms.validate_compiler_version(given, CodeFormat.VYPER_JSON.value) == answered


@pytest.mark.parametrize(
    "given, param, words",
    [
        ("0.8.26", "compilerversion", "is not a compiler version"),  # no commit
        ("v0.8.26+commit.8a97fa", "compilerversion", "is not a compiler version"),
        ("vyper:0.4.3+commit.ab", "compilerversion", "is not a compiler version"),  # any length was taken
        ("0.4.0rc6", "compilerversion", "is not a compiler version"),  # Vyper needs `vyper:` in a form
        ("v0.4.10+commit.9e8cc01b", "compilerversion", "older than v0.4.11"),
    ],
)
def test_the_form_refuses_with_its_own_words(given, param, words):
    with pytest.raises(InvalidRequest) as caught:
        forms.validate_compiler_version(given)
    assert caught.value.param == param and words in caught.value.problem


def request(version: str, code_format: CodeFormat = CodeFormat.SINGLE_FILE) -> VerificationRequest:
    return VerificationRequest("0x" + "11" * 20, "Box", "contract Box {}", code_format, version)


def test_sourcify_gets_the_long_version_without_v():
    assert sfy.sourcify_compiler_version(request("v0.8.26+commit.8A97FA7A")) == "0.8.26+commit.8a97fa7a"
    vyper = request("vyper:0.4.0rc6", CodeFormat.VYPER_JSON)
    assert sfy.sourcify_compiler_version(vyper, "0.4.0rc6+commit.33719560") == "0.4.0rc6+commit.33719560"
    with pytest.raises(InvalidRequest, match="has no commit"):
        sfy.sourcify_compiler_version(vyper)
    with pytest.raises(InvalidRequest, match="is not a long compiler version"):
        sfy.sourcify_compiler_version(request("v0.8.26rc1+commit.8a97fa7a"))  # Sourcify's rule took it


def test_the_engine_reads_a_refused_version_as_a_compiler_error():
    assert parse_compiler_version("vyper:0.4.0rc6").number == "0.4.0rc6"  # the engine's was 0.4.0
    with pytest.raises(CompilerError, match=r"compilerversion 'latest' is not a solidity compiler version"):
        parse_compiler_version("latest")


@pytest.mark.parametrize(
    "given, follows",
    [
        ("vyper:0.3.7", True),
        ("0.3.4", True),
        ("vyper:0.3.7+commit.6020b8bb", True),
        ("vyper:0.3.8", False),
        ("vyper:0.3.3", False),
        ("vyper:0.3.7junk", False),  # the old prefix match said True
        ("", False),
    ],
)
def test_which_vyper_follows_the_hash_seed(given, follows):
    assert compilers.follows_hash_seed(given) is follows


def test_one_number_with_two_commits_orders_one_way():
    a = CompilerVersion.parse("v0.8.26+commit.8a97fa7a")
    b = CompilerVersion.parse("v0.8.26+commit.00000000")
    assert a != b and (a < b) != (b < a) and (a > b) != (b > a)
    assert sorted([a, b]) == sorted([b, a])
