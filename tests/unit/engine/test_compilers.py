"""engine/compilers.py without a compiler process: the cache and its keys (a fake compile function),
the input it builds, which compiler a request gets, and how a compiler's answer maps to errors
(the subprocess replaced by a canned answer). Real compiles are tests/engine/test_engine_compilers.py's."""

from __future__ import annotations

import json
import signal
import threading

import pytest

from ape_contract_verify.engine import compilers
from ape_contract_verify.engine.compilers import (
    CONCURRENCY_ENV,
    CPU_ENV,
    SOLIDITY_OUTPUTS,
    VYPER_OUTPUTS,
    CompileCache,
    CompilerCrashed,
    CompilerError,
    CompilerFailed,
    CompilerNotInstalled,
    canonical_key,
    compile_input,
    compile_standard_json,
    compile_vyper_json,
    parse_compiler_version,
    single_file_input,
    vyper_json_command,
    with_output_selection,
)

SOLC = "v0.8.26+commit.8a97fa7a"
SOURCE = "// SPDX-License-Identifier: MIT\npragma solidity ^0.8.0;\ncontract Tiny { uint256 public x = 1; }\n"
OUTPUT = {"contracts": {"Tiny.sol": {"Tiny": {"abi": []}}}, "sources": {"Tiny.sol": {"id": 0}}}


def tiny_input() -> dict:
    return with_output_selection(single_file_input(SOURCE, file_name="Tiny.sol"), "Tiny.sol", "Tiny")


class Compiles:
    """A compile function that counts its calls."""

    def __init__(self, output: dict | None = None, error: Exception | None = None):
        self.calls, self.output, self.error = 0, output or OUTPUT, error

    def __call__(self) -> dict:
        self.calls += 1
        if self.error:
            raise self.error
        return self.output


@pytest.fixture(autouse=True)
def _own_caches(monkeypatch):
    """The suite's shared disk cache holds real compiles: a fake output must never land there."""
    monkeypatch.delenv("APE_CONTRACT_VERIFY_COMPILE_CACHE", raising=False)


# --- keys and cache ---------------------------------------------------------------------------


def test_the_key_is_the_version_and_the_canonical_input():
    first = {"a": 1, "b": {"c": [1, 2]}}
    reordered = {"b": {"c": [1, 2]}, "a": 1}
    assert canonical_key(SOLC, first) == canonical_key(SOLC, reordered)
    assert canonical_key(SOLC, first) != canonical_key("v0.8.25", first)
    assert canonical_key(SOLC, first) != canonical_key(SOLC, {"a": 1, "b": {"c": [2, 1]}})
    assert len(canonical_key(SOLC, first)) == 64


def test_the_memory_cache_compiles_once():
    cache, run = CompileCache(), Compiles()
    assert cache.directory is None
    assert cache.get_or_compile(SOLC, tiny_input(), run) == OUTPUT
    assert cache.get_or_compile(SOLC, tiny_input(), run) == OUTPUT
    assert (run.calls, cache.compiles, cache.hits) == (1, 1, 1)
    cache.get_or_compile("v0.8.25+commit.b61c2a91", tiny_input(), run)
    assert run.calls == 2


def test_the_disk_cache_survives_a_new_cache_object(tmp_path):
    cache, run = CompileCache(tmp_path / "cache"), Compiles()
    cache.get_or_compile(SOLC, tiny_input(), run)
    files = list((tmp_path / "cache").iterdir())
    assert [path.name for path in files] == [canonical_key(SOLC, tiny_input()) + ".json"]
    assert json.loads(files[0].read_text()) == OUTPUT
    reopened = CompileCache(tmp_path / "cache")
    assert reopened.get_or_compile(SOLC, tiny_input(), Compiles(error=AssertionError("no compile"))) == OUTPUT
    assert (reopened.compiles, reopened.hits) == (0, 1)


def test_the_environment_names_the_disk_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("APE_CONTRACT_VERIFY_COMPILE_CACHE", str(tmp_path / "shared"))
    assert CompileCache().directory == tmp_path / "shared" and (tmp_path / "shared").is_dir()


def test_a_corrupt_disk_entry_compiles_again(tmp_path):
    key = canonical_key(SOLC, tiny_input())
    (tmp_path / f"{key}.json").write_text("{not json")
    cache, run = CompileCache(tmp_path), Compiles()
    assert cache.get_or_compile(SOLC, tiny_input(), run) == OUTPUT and run.calls == 1
    assert json.loads((tmp_path / f"{key}.json").read_text()) == OUTPUT


def test_failures_are_not_cached(tmp_path):
    cache, run = CompileCache(tmp_path), Compiles(error=CompilerFailed("solc reported errors"))
    for _ in range(2):
        with pytest.raises(CompilerFailed):
            cache.get_or_compile(SOLC, tiny_input(), run)
    assert (run.calls, cache.compiles, cache.hits) == (2, 0, 0)
    assert list(tmp_path.iterdir()) == []


def test_the_memory_keeps_at_most_max_entries():
    cache, run = CompileCache(max_entries=2), Compiles()
    for n in range(3):
        cache.get_or_compile(SOLC, {"n": n}, run)
    cache.get_or_compile(SOLC, {"n": 2}, run)  # still held
    assert run.calls == 3
    cache.get_or_compile(SOLC, {"n": 0}, run)  # the oldest went
    assert run.calls == 4


def test_concurrent_requests_for_one_key_compile_once():
    cache, started, release = CompileCache(), threading.Event(), threading.Event()
    calls = []

    def slow() -> dict:
        calls.append(1)
        started.set()
        release.wait(5)
        return OUTPUT

    results = []
    threads = [
        threading.Thread(target=lambda: results.append(cache.get_or_compile(SOLC, {"k": 1}, slow))) for _ in range(4)
    ]
    for thread in threads:
        thread.start()
    assert started.wait(5)
    release.set()
    for thread in threads:
        thread.join(5)
    assert results == [OUTPUT] * 4 and calls == [1] and (cache.compiles, cache.hits) == (1, 3)


# --- the input --------------------------------------------------------------------------------


def test_single_file_input_maps_the_form():
    plain = single_file_input(SOURCE)
    assert plain["language"] == "Solidity" and plain["sources"] == {"contract.sol": {"content": SOURCE}}
    assert plain["settings"] == {"optimizer": {"enabled": False, "runs": 200}}
    full = single_file_input(
        SOURCE,
        file_name="A.sol",
        optimizer=True,
        runs="999",
        evm_version="Paris",
        via_ir=True,
        libraries={"Lib": "0x" + "ab" * 20},
    )
    assert full["settings"] == {
        "optimizer": {"enabled": True, "runs": 999},
        "evmVersion": "paris",
        "viaIR": True,
        "libraries": {"A.sol": {"Lib": "0x" + "ab" * 20}},
    }
    for default in ("default", "compiler default", "", None):
        assert "evmVersion" not in single_file_input(SOURCE, evm_version=default)["settings"]


def test_output_selection_narrows_to_one_contract_without_changing_the_input():
    original = single_file_input(SOURCE, file_name="Tiny.sol")
    narrowed = with_output_selection(original, "Tiny.sol", "Tiny")
    assert narrowed["settings"]["outputSelection"] == {"Tiny.sol": {"Tiny": SOLIDITY_OUTPUTS}}
    assert "outputSelection" not in original["settings"]
    vyper = with_output_selection({"language": "Vyper", "sources": {}}, "A.vy", "A")
    assert vyper["settings"]["outputSelection"] == {"A.vy": VYPER_OUTPUTS}


# --- which compiler ---------------------------------------------------------------------------


def test_an_unknown_language_is_refused_before_any_compile():
    with pytest.raises(CompilerFailed, match="language 'Yul' is not supported; use Solidity or Vyper"):
        compile_input(SOLC, {"language": "Yul", "sources": {}})


def test_a_cached_input_is_answered_without_a_compile():
    cache = CompileCache()
    cache.get_or_compile(SOLC, tiny_input(), Compiles())
    assert compile_input(SOLC, tiny_input(), cache=cache) == OUTPUT
    assert (cache.compiles, cache.hits) == (1, 1)


@pytest.mark.parametrize(("version", "seed"), [("vyper:0.3.7", "0"), ("vyper:0.4.3", None), ("vyper:0.3.8", None)])
def test_vyper_gets_the_first_seed_only_where_its_code_follows_it(monkeypatch, version, seed):
    seen = []
    monkeypatch.setattr(
        compilers, "compile_vyper_json", lambda v, i, t, hash_seed=None, **kw: seen.append((v, hash_seed)) or {}
    )
    compile_input(version, {"language": "Vyper", "sources": {}})
    assert seen == [(version, seed)]


def test_a_narrowed_solc_crash_is_compiled_wide_and_cut(monkeypatch):
    inputs = []

    def solc(version: str, input_json: dict, timeout: float) -> dict:
        inputs.append(input_json["settings"]["outputSelection"])
        if len(inputs) == 1:
            raise CompilerCrashed("solc reported errors: InternalCompilerError: Compiled contract not found.")
        return {"contracts": {"Tiny.sol": {"Tiny": {"abi": []}, "Other": {"abi": []}}}}

    monkeypatch.setattr(compilers, "compile_standard_json", solc)
    cache = CompileCache()
    output = compile_input(SOLC, tiny_input(), cache=cache)
    assert inputs == [{"Tiny.sol": {"Tiny": SOLIDITY_OUTPUTS}}, {"*": {"*": sorted(SOLIDITY_OUTPUTS)}}]
    assert output["contracts"] == {"Tiny.sol": {"Tiny": {"abi": []}}}
    assert "Compiled contract not found" in output[compilers.WIDENED]
    assert compile_input(SOLC, tiny_input(), cache=cache) == output and len(inputs) == 2  # cached narrowed


def test_a_wide_compile_that_fails_too_says_both(monkeypatch):
    def solc(version: str, input_json: dict, timeout: float) -> dict:
        if "Tiny.sol" in input_json["settings"]["outputSelection"]:
            raise CompilerCrashed("narrow crash")
        raise CompilerFailed("wide failure")

    monkeypatch.setattr(compilers, "compile_standard_json", solc)
    with pytest.raises(CompilerFailed, match="narrow crash; and with every contract selected.*: wide failure"):
        compile_input(SOLC, tiny_input())


def test_a_solc_crash_on_a_wide_input_is_not_retried(monkeypatch):
    calls = []

    def solc(version: str, input_json: dict, timeout: float) -> dict:
        calls.append(1)
        raise CompilerCrashed("crash")

    monkeypatch.setattr(compilers, "compile_standard_json", solc)
    wide = single_file_input(SOURCE)
    wide["settings"]["outputSelection"] = {"*": {"*": sorted(SOLIDITY_OUTPUTS)}}
    with pytest.raises(CompilerCrashed):
        compile_input(SOLC, wide)
    assert calls == [1]


def test_a_missing_solc_names_the_installed_ones_and_the_opt_in(monkeypatch):
    monkeypatch.delenv(compilers.INSTALL_ENV, raising=False)
    with pytest.raises(CompilerNotInstalled) as caught:
        compilers.solc_executable(parse_compiler_version("v0.8.99+commit.deadbeef"))
    message = str(caught.value)
    assert "Compiler v0.8.99+commit.deadbeef is not installed on this explorer (installed: " in message
    assert f"set {compilers.INSTALL_ENV}=1" in message


def test_a_solc_of_another_build_is_named_as_it_prints_itself(tmp_path, monkeypatch):
    import solcx

    # A nightly under the release's name: the message said `v0.8.26+commit.12345678`, no nightly.
    fake = tmp_path / "solc-v0.8.26"
    fake.write_text("#!/bin/sh\necho 'Version: 0.8.26-nightly.2024.5.1+commit.12345678.Linux.g++'\n")
    fake.chmod(0o755)
    monkeypatch.setattr(solcx.install, "get_executable", lambda version: fake)
    with pytest.raises(CompilerNotInstalled) as caught:
        compilers.solc_executable(parse_compiler_version("v0.8.26+commit.8a97fa7a"))
    assert str(caught.value) == (
        "Compiler v0.8.26+commit.8a97fa7a is not installed: "
        "the solc-v0.8.26 here is v0.8.26-nightly.2024.5.1+commit.12345678"
    )


def test_a_missing_vyper_names_the_installed_ones_and_how_to_install(monkeypatch):
    monkeypatch.setattr(
        compilers, "vyper_compilers", lambda: {"0.4.3": ["vyper-json"], "0.3.10": ["/v/bin/vyper-json"]}
    )
    assert vyper_json_command(parse_compiler_version("vyper:0.4.3")) == ["vyper-json"]
    with pytest.raises(CompilerNotInstalled) as caught:
        vyper_json_command(parse_compiler_version("vyper:0.3.9"))
    message = str(caught.value)
    assert "(installed: vyper:0.3.10, vyper:0.4.3)" in message
    assert ".vyper/0.3.9/bin/pip install vyper==0.3.9" in message


# --- what a compiler answers ------------------------------------------------------------------


class Answer:
    """Stands in for the compiler process: records what it was given, answers as told."""

    def __init__(self, stdout: str = "", stderr: str = "", returncode: int = 0):
        self.answer = (stdout, stderr, returncode)
        self.command: list[str] = []
        self.stdin = ""
        self.env: dict | None = None

    def __call__(self, command, stdin, timeout, what, cwd, limits, env=None):
        self.command, self.stdin, self.env = command, stdin, env
        return self.answer


@pytest.fixture
def solc(tmp_path, monkeypatch):
    """compile_standard_json with a solc that is never started: its answer is the test's."""
    for name in (CPU_ENV, CONCURRENCY_ENV):
        monkeypatch.delenv(name, raising=False)
    fake = tmp_path / "solc-never-run"
    fake.write_text("#!/bin/sh\n# solc-native.js\n")
    monkeypatch.setattr(compilers, "solc_executable", lambda version: fake)

    def answer(stdout="", stderr="", returncode=0, input_json=None):
        canned = Answer(stdout if isinstance(stdout, str) else json.dumps(stdout), stderr, returncode)
        monkeypatch.setattr(compilers, "_run_bounded", canned)
        return compile_standard_json(SOLC, input_json or tiny_input()), canned

    return answer


def test_the_command_reads_no_file_of_the_machine(solc):
    output, canned = solc(OUTPUT)
    assert output == OUTPUT
    assert canned.command[1:3] == ["--standard-json", "--base-path"] and "--no-import-callback" in canned.command
    assert json.loads(canned.stdin) == tiny_input()


def test_an_error_is_one_line_with_its_place(solc):
    errors = [
        {
            "severity": "error",
            "type": "ParserError",
            "message": "Expected ';' but got '}'",
            "sourceLocation": {"file": "Tiny.sol", "start": SOURCE.index("uint256")},
        },
        {"severity": "warning", "type": "Warning", "message": "unused"},
    ]
    with pytest.raises(CompilerFailed) as caught:
        solc({"errors": errors})
    assert type(caught.value) is CompilerFailed
    assert str(caught.value) == f"solc {SOLC} reported errors: ParserError: Expected ';' but got '}}' --> Tiny.sol:3:17"


def test_warnings_alone_are_no_failure(solc):
    output, _ = solc({**OUTPUT, "errors": [{"severity": "warning", "type": "Warning", "message": "x"}]})
    assert output["contracts"] == OUTPUT["contracts"]


def test_many_errors_are_counted_and_an_internal_error_is_a_crash(solc):
    errors = [{"severity": "error", "type": "TypeError", "message": f"bad {n}"} for n in range(4)]
    errors.append({"severity": "error", "type": "InternalCompilerError", "message": "assertion"})
    with pytest.raises(CompilerCrashed, match=r"reported errors \(and 2 more\): TypeError: bad 0 \| TypeError: bad 1"):
        solc({"errors": errors})


def test_an_error_in_a_file_not_submitted_is_not_echoed(solc):
    errors = [
        {
            "severity": "error",
            "type": "ParserError",
            "message": "SECRET LINE",
            "sourceLocation": {"file": "/etc/x.sol", "start": 0},
        }
    ]
    with pytest.raises(CompilerFailed) as caught:
        solc({"errors": errors})
    assert "SECRET" not in str(caught.value)
    assert "ParserError in /etc/x.sol, which the submitted sources do not include" in str(caught.value)


def test_an_import_resolved_from_elsewhere_is_refused(solc):
    with pytest.raises(
        CompilerFailed,
        match='import other.sol, which the submission does not include; add every imported file to "sources"',
    ):
        solc({**OUTPUT, "sources": {"Tiny.sol": {}, "other.sol": {}}})


@pytest.mark.parametrize(
    ("answer", "words"),
    [
        (("", "", -signal.SIGXCPU), "of CPU time and was stopped"),
        (
            ("", "# Fatal process out of memory", -signal.SIGABRT),
            "crashed (signal 6): Fatal process out of memory; it ran out of memory",
        ),
        (("", "MemoryError", 1), "failed (exit code 1) without JSON output: MemoryError; it ran out of memory"),
        (("", "Segmentation fault", -signal.SIGSEGV), "crashed (signal 11): Segmentation fault"),
        (("not json", "", 0), "failed (exit code 0) without JSON output: not json"),
        (("[1, 2]", "", 0), "without JSON output"),
        (("", "", 2), "failed (exit code 2) without JSON output"),
    ],
)
def test_how_a_compiler_ended_becomes_a_clear_failure(solc, answer, words):
    with pytest.raises(CompilerFailed) as caught:
        solc(*answer)
    assert words in str(caught.value) and str(caught.value).startswith("solc 0.8.26")


def test_a_compile_a_bound_stopped_names_the_bound_and_its_variable(solc, monkeypatch):
    monkeypatch.setenv(CPU_ENV, "12")
    monkeypatch.setenv(compilers.MEMORY_ENV, "256")
    with pytest.raises(CompilerFailed) as cpu:
        solc("", "", -signal.SIGXCPU)
    assert "more than its 12 s of CPU time" in str(cpu.value) and CPU_ENV in str(cpu.value)
    for other in (-signal.SIGKILL, 0, 1):  # any other end is not the CPU bound's
        with pytest.raises(CompilerFailed) as ended:
            solc("", "", other)
        assert "CPU time" not in str(ended.value)
    with pytest.raises(CompilerFailed) as memory:
        solc("", "out of memory", 1)
    assert "256 MB per compile" in str(memory.value) and compilers.MEMORY_ENV in str(memory.value)


def test_noise_before_the_json_is_skipped(solc):
    output, _ = solc("Loading solc...\n" + json.dumps(OUTPUT))
    assert output == OUTPUT


def test_a_bad_bound_is_this_compile_s_failure(solc, monkeypatch):
    monkeypatch.setenv(CPU_ENV, "forever")
    with pytest.raises(CompilerFailed, match=f"could not be started: {CPU_ENV}='forever'"):
        solc(OUTPUT)


def test_vyper_gets_only_the_submitted_files_and_its_seed(monkeypatch):
    monkeypatch.setattr(compilers, "vyper_json_command", lambda version: ["/venv/bin/vyper-json"])
    canned = Answer(json.dumps({"contracts": {}}))
    monkeypatch.setattr(compilers, "_run_bounded", canned)
    submitted = {
        "language": "Vyper",
        "sources": {"A.vy": {"content": "x: uint256"}, "I.vyi": {"content": "def f(): ..."}},
        "settings": {"search_paths": ["/home/user"]},
    }
    compile_vyper_json("vyper:0.3.7", submitted, hash_seed="5", layout=2)
    given = json.loads(canned.stdin)
    assert given["settings"] == {"outputSelection": {"A.vy": VYPER_OUTPUTS}}
    assert canned.command == ["/venv/bin/vyper-json"]
    assert canned.env["PYTHONHASHSEED"] == "5" and "APE_VERIFY_LAYOUT_1" in canned.env
    compile_vyper_json("vyper:0.4.3", submitted)
    assert canned.env is None  # no seed: the caller's environment


def test_vyper_s_error_line_is_read_from_its_formatted_message(monkeypatch):
    monkeypatch.setattr(compilers, "vyper_json_command", lambda version: ["vyper-json"])
    error = {
        "type": "SyntaxException",
        "message": "bad",
        "formattedMessage": "line 3:4 bad",
        "sourceLocation": {"file": "A.vy"},
    }
    monkeypatch.setattr(compilers, "_run_bounded", Answer(json.dumps({"errors": [error]})))
    with pytest.raises(CompilerFailed, match=r"vyper 0.4.3 reported errors: SyntaxException: bad --> A.vy:3:4$"):
        compile_vyper_json("vyper:0.4.3", {"language": "Vyper", "sources": {"A.vy": {"content": "x"}}})


def test_compiler_errors_share_one_base():
    for error in (CompilerNotInstalled, CompilerFailed, CompilerCrashed):
        assert issubclass(error, CompilerError)
    assert issubclass(CompilerCrashed, CompilerFailed)


# --- a build kept (Ape's, through workflow/ape_builds.py) ---------------------------------------

CONTRACT = {
    "abi": [],
    "metadata": "{}",
    "devdoc": {"kind": "dev"},
    "evm": {
        "bytecode": {"object": "6001", "sourceMap": "1:2:0", "linkReferences": {}},
        "deployedBytecode": {"object": "6002", "immutableReferences": {}, "linkReferences": {}},
    },
}


def build_input(runs: int = 200) -> dict:
    """A two-file group as ape-solidity selects it: every contract of each file, and the ASTs."""
    return {
        "language": "Solidity",
        "sources": {"A.sol": {"content": "contract A {}"}, "B.sol": {"content": "contract B {}"}},
        "settings": {
            "optimizer": {"enabled": True, "runs": runs},
            "outputSelection": {"A.sol": {"*": ["abi", *SOLIDITY_OUTPUTS], "": ["ast"]}},
        },
    }


def build_output() -> dict:
    return {
        "contracts": {"A.sol": {"A": CONTRACT, "A2": CONTRACT}},
        "sources": {"A.sol": {"id": 0, "ast": {"huge": True}}, "B.sol": {"id": 1, "ast": {}}},
        "errors": [{"severity": "warning", "message": "w"}],
    }


def one_contract(runs: int = 200, file: str = "A.sol", name: str = "A") -> dict:
    wide = build_input(runs)
    return with_output_selection({**wide, "settings": {k: v for k, v in wide["settings"].items()}}, file, name)


def test_a_kept_build_answers_a_compile_of_one_of_its_contracts_without_a_compiler_run():
    cache = CompileCache()
    cache.keep_build("0.8.26+commit.8a97fa7a", build_input(), build_output())
    run = Compiles()
    # The engine's version text starts with "v", the metadata's does not: one compiler.
    output = cache.get_or_compile(SOLC, one_contract(), run)
    assert run.calls == 0 and (cache.compiles, cache.hits) == (0, 1)
    assert list(output["contracts"]) == ["A.sol"] and list(output["contracts"]["A.sol"]) == ["A"]
    kept = output["contracts"]["A.sol"]["A"]
    assert "devdoc" not in kept and "sourceMap" not in kept["evm"]["bytecode"]  # what verification reads
    assert kept["evm"]["deployedBytecode"]["object"] == "6002" and kept["metadata"] == "{}"
    assert output["sources"] == {"A.sol": {"id": 0}, "B.sol": {"id": 1}}  # no ASTs kept
    assert output["errors"] == [{"severity": "warning", "message": "w"}]
    assert cache.holds_build(SOLC, one_contract()) and not cache.holds_build(SOLC, one_contract(runs=1))
    assert not cache.holds_build(SOLC, one_contract(file="B.sol", name="B"))  # a file the build did not select


@pytest.mark.parametrize(
    "asked",
    [
        one_contract(runs=999),  # other settings: other code
        one_contract(file="B.sol", name="B"),  # a file the build did not select
        one_contract(name="Missing"),
        with_output_selection(build_input(), "A.sol", "A")
        | {"settings": {**build_input()["settings"], "outputSelection": {"A.sol": {"A": ["evm.gasEstimates"]}}}},
    ],
    ids=["settings", "unselected file", "no such contract", "an output it did not select"],
)
def test_a_kept_build_answers_only_what_it_compiled(asked):
    cache = CompileCache()
    cache.keep_build(SOLC, build_input(), build_output())
    run = Compiles()
    assert cache.get_or_compile(SOLC, asked, run) == OUTPUT and run.calls == 1


def test_a_kept_build_is_read_from_disk_by_another_process_and_the_disk_keeps_the_newest(tmp_path):
    CompileCache(tmp_path).keep_build(SOLC, build_input(), build_output())
    reopened, run = CompileCache(tmp_path), Compiles()
    reopened.get_or_compile(SOLC, one_contract(), run)
    assert run.calls == 0 and reopened.hits == 1
    bounded = CompileCache(tmp_path, max_files=2)
    for runs in (1, 2, 3):
        bounded.keep_build(SOLC, build_input(runs), build_output())
    assert len(list(tmp_path.glob("*.json"))) == 2
    assert bounded.holds_build(SOLC, one_contract(3)) and not CompileCache(tmp_path).holds_build(SOLC, one_contract())


def test_the_process_cache_is_on_disk_in_apes_data_folder_unless_named(monkeypatch, tmp_path):
    monkeypatch.setenv("APE_DATA_FOLDER", str(tmp_path / "ape"))
    assert compilers.default_cache_folder() == tmp_path / "ape" / "contract_verify" / "compiles"
    monkeypatch.setenv("APE_CONTRACT_VERIFY_COMPILE_CACHE", str(tmp_path / "named"))
    assert compilers.default_cache_folder() == tmp_path / "named"
