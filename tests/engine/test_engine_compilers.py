"""compilers.py with the real solc-js executables and the real vyper: versions, errors, cache."""

from __future__ import annotations

import os
import re
import stat

import pytest
from packaging.version import Version

from ape_contract_verify.engine import compilers
from ape_contract_verify.engine.compilers import (
    CompileCache,
    CompilerFailed,
    CompilerNotInstalled,
    InvalidCompilerVersion,
    compile_input,
    compile_standard_json,
    compile_vyper_json,
    parse_compiler_version,
    single_file_input,
    vyper_compilers,
    with_output_selection,
)
from support.engine import SOLC, source

TINY = "// SPDX-License-Identifier: MIT\npragma solidity ^0.8.0;\ncontract Tiny { uint256 public x = 1; }\n"


def tiny_input(text: str = TINY) -> dict:
    return with_output_selection(single_file_input(text, file_name="Tiny.sol"), "Tiny.sol", "Tiny")


def test_parse_compiler_versions():
    assert parse_compiler_version("v0.8.26+commit.8a97fa7a").long == "v0.8.26+commit.8a97fa7a"
    assert parse_compiler_version("0.8.26").commit is None
    vyper = parse_compiler_version("vyper:0.4.3")
    assert (vyper.language, vyper.number, vyper.long) == ("vyper", "0.4.3", "vyper:0.4.3")
    with pytest.raises(
        InvalidCompilerVersion, match=r"compilerversion 'latest' .* use the form v0.8.26\+commit.8a97fa7a"
    ):
        parse_compiler_version("latest")


def test_compiles_with_the_exact_version():
    output = compile_standard_json(SOLC, tiny_input())
    assert output["contracts"]["Tiny.sol"]["Tiny"]["evm"]["bytecode"]["object"]
    metadata = output["contracts"]["Tiny.sol"]["Tiny"]["metadata"]
    assert '"version":"0.8.26+commit.8a97fa7a"' in metadata


def test_version_not_installed_names_installed_ones():
    with pytest.raises(CompilerNotInstalled) as info:
        compile_standard_json("v0.8.20+commit.a1b79de6", tiny_input())
    assert "v0.8.20+commit.a1b79de6 is not installed" in str(info.value)
    assert "0.8.26" in str(info.value) and "0.8.37" in str(info.value)


def test_commit_must_match_the_executable():
    with pytest.raises(CompilerNotInstalled, match=r"the solc-v0.8.26 here is v0.8.26\+commit.8a97fa7a"):
        compile_standard_json("v0.8.26+commit.deadbeef", tiny_input())


def test_compile_errors_are_typed_and_quoted():
    with pytest.raises(CompilerFailed) as info:
        compile_standard_json(SOLC, tiny_input(TINY.replace("= 1;", "= ;")))
    assert str(info.value).endswith("reported errors: ParserError: Expected primary expression. --> Tiny.sol:3:36")


def test_imports_outside_the_submission_are_not_echoed(tmp_path):
    secret = tmp_path / "secret.sol"
    secret.write_text("TOP-SECRET-VALUE-1234 this is not solidity")
    with pytest.raises(CompilerFailed) as info:
        compile_standard_json(SOLC, tiny_input(f'import "{secret}";\n' + TINY))
    assert "TOP-SECRET-VALUE-1234" not in str(info.value)
    # Etherscan's answer: the compiler is given no file callback at all.
    assert f'Source "{secret}" not found: File import callback not supported' in str(info.value)


def test_hang_is_stopped_by_the_timeout():
    with pytest.raises(CompilerFailed, match=r"did not finish within 0.05 s and was stopped"):
        compile_standard_json(SOLC, tiny_input(), timeout=0.05)


def _fake_solc(tmp_path, monkeypatch, body: str):
    script = tmp_path / "solc-fake"
    script.write_text("#!/bin/sh\n" + body + "\n")
    script.chmod(script.stat().st_mode | stat.S_IEXEC)
    monkeypatch.setattr(compilers, "solc_executable", lambda version: script)


def test_crash_is_a_clear_failure(tmp_path, monkeypatch):
    _fake_solc(tmp_path, monkeypatch, "cat >/dev/null; kill -SEGV $$")
    with pytest.raises(CompilerFailed, match=r"crashed \(signal 11\)"):
        compile_standard_json(SOLC, tiny_input())


def test_garbage_output_is_a_clear_failure(tmp_path, monkeypatch):
    _fake_solc(tmp_path, monkeypatch, "cat >/dev/null; echo 'out of memory' >&2; exit 3")
    with pytest.raises(CompilerFailed, match=r"failed \(exit code 3\) without JSON output: out of memory"):
        compile_standard_json(SOLC, tiny_input())


def test_cache_in_memory_and_on_disk(tmp_path):
    cache = CompileCache(tmp_path / "cache")
    first = compile_input(SOLC, tiny_input(), cache=cache)
    again = compile_input(SOLC, tiny_input(), cache=cache)
    assert again == first and (cache.compiles, cache.hits) == (1, 1)
    # A new process (new cache object) over the same directory does not compile again.
    reopened = CompileCache(tmp_path / "cache")
    assert compile_input(SOLC, tiny_input(), cache=reopened) == first
    assert (reopened.compiles, reopened.hits) == (0, 1)
    # The key is (version, input): other settings compile anew.
    other = tiny_input()
    other["settings"]["optimizer"]["enabled"] = True
    compile_input(SOLC, other, cache=cache)
    assert cache.compiles == 2


def test_failures_are_not_cached(tmp_path):
    cache = CompileCache(tmp_path / "own")
    for _ in range(2):
        with pytest.raises(CompilerFailed):
            compile_input(SOLC, tiny_input(TINY.replace("= 1;", "= ;")), cache=cache)
    assert (cache.compiles, cache.hits) == (0, 0)


def test_vyper_json():
    input_json = {"language": "Vyper", "sources": {"Counter.vy": {"content": source("Counter.vy")}}}
    output = compile_vyper_json("vyper:0.4.3", with_output_selection(input_json, "*"))
    counter = output["contracts"]["Counter.vy"]["Counter"]
    assert counter["evm"]["bytecode"]["object"] and any(item.get("type") == "constructor" for item in counter["abi"])
    installed = ", ".join(f"vyper:{v}" for v in sorted(vyper_compilers(), key=Version))
    assert "vyper:0.3.10" in installed and "vyper:0.4.3" in installed and "0.3.9" not in installed
    with pytest.raises(
        CompilerNotInstalled, match=rf"vyper:0.3.9 is not installed .*\(installed: {re.escape(installed)}\)"
    ):
        compile_vyper_json("vyper:0.3.9", input_json)
    broken = {
        "language": "Vyper",
        "sources": {"Counter.vy": {"content": "@external\ndef f() -> uint256:\n    return x\n"}},
    }
    with pytest.raises(CompilerFailed) as info:
        compile_vyper_json("vyper:0.4.3", broken)
    assert (
        str(info.value)
        == "vyper 0.4.3 reported errors: UndeclaredDefinition: 'x' has not been declared. --> Counter.vy:3:11"
    )


def test_single_file_input_maps_the_form():
    built = single_file_input(
        "src",
        file_name="A.sol",
        optimizer=True,
        runs=999,
        evm_version="Paris",
        via_ir=True,
        libraries={"L": "0x" + "11" * 20},
    )
    assert built["sources"] == {"A.sol": {"content": "src"}}
    assert built["settings"] == {
        "optimizer": {"enabled": True, "runs": 999},
        "evmVersion": "paris",
        "viaIR": True,
        "libraries": {"A.sol": {"L": "0x" + "11" * 20}},
    }
    assert single_file_input("src", evm_version="default")["settings"] == {"optimizer": {"enabled": False, "runs": 200}}


def test_unknown_language():
    with pytest.raises(CompilerFailed, match="language 'Yul' is not supported"):
        compile_input(SOLC, {"language": "Yul", "sources": {}})


def test_install_is_opt_in(monkeypatch):
    monkeypatch.delenv(compilers.INSTALL_ENV, raising=False)
    calls = []
    import solcx

    monkeypatch.setattr(solcx, "install_solc", lambda *a, **k: calls.append(a))
    with pytest.raises(CompilerNotInstalled):
        compile_standard_json("v0.8.22+commit.4fc1097e", tiny_input())  # a version the toolchain lacks
    assert calls == [] and os.environ.get(compilers.INSTALL_ENV) is None


def test_valid_imports_from_outside_are_refused(tmp_path):
    other = tmp_path / "Other.sol"
    other.write_text("// SPDX-License-Identifier: MIT\npragma solidity ^0.8.0;\ncontract Other {}\n")
    with pytest.raises(CompilerFailed, match=r'Source ".*Other.sol" not found: File import callback not supported'):
        compile_standard_json(SOLC, tiny_input(f'import "{other}";\n' + TINY))
