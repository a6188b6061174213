"""The local explorer's compiles see only the submission, run bounded, and die with the server.

Real solc-js (the `.solcx` shims), real vyper, the explorer over HTTP on 127.0.0.1, and a real
`ape verify serve` that is SIGKILLed mid-compile. "Nothing outside is read" is watched with inotify
on the folder of the files a hostile submission names, with a control read proving the watch sees.
"""

from __future__ import annotations

import ctypes
import json
import os
import posixpath
import re
import shutil
import signal
import struct
import sys
import tempfile
import threading
import time
import uuid
from pathlib import Path

import pytest

from ape_contract_verify.engine import compilers
from ape_contract_verify.engine.compilers import CompilerFailed, compile_standard_json, compile_vyper_json
from ape_contract_verify.server.runner import start_embedded
from support import SOLC_CACHE_ENV
from support.service import (
    ADDRESS_A,
    REPO,
    SOLC_0826,
    SOLC_0837,
    Anvil,
    FakeChain,
    ServerProcess,
    form,
    json_form,
    poll,
    post,
    solc_compile,
    standard_input,
)

NOT_FOUND = 'Fail - Unable to verify. Solidity Compilation Error: solc v0.8.26+commit.8a97fa7a reported errors: ParserError: Source "{path}" not found: File import callback not supported --> Box.sol:3:1'
BOX = '// SPDX-License-Identifier: MIT\npragma solidity 0.8.26;\nimport "{path}";\ncontract Box {{ uint256 public value; }}\n'
SECRET = "// SPDX-License-Identifier: MIT\npragma solidity ^0.8.0;\nuint256 constant PIN = 4242;\ncontract Secret { uint256 public x = PIN; }\n"
VERSION_ANSWER = (
    'echo "solc, the solidity compiler commandline interface"; echo "Version: 0.8.26+commit.8a97fa7a.Linux.g++"'
)


class OpenWatch:
    """inotify on one folder: the names of the files in it that any process opened or read."""

    IN_ACCESS, IN_OPEN, IN_NONBLOCK = 0x1, 0x20, 0o4000

    def __init__(self, folder: Path):
        libc = ctypes.CDLL(None, use_errno=True)
        self.fd = libc.inotify_init1(self.IN_NONBLOCK)
        assert self.fd >= 0, f"inotify_init1 failed: errno {ctypes.get_errno()}"
        assert libc.inotify_add_watch(self.fd, str(folder).encode(), self.IN_OPEN | self.IN_ACCESS) >= 0

    def opened(self) -> set[str]:
        names: set[str] = set()
        for _ in range(10_000):  # each read drains up to 64 KiB of events
            try:
                data = os.read(self.fd, 65536)
            except BlockingIOError:
                break
            offset = 0
            while offset < len(data):
                _, _, _, length = struct.unpack_from("iIII", data, offset)
                names.add(data[offset + 16 : offset + 16 + length].rstrip(b"\0").decode())
                offset += 16 + length
        names.discard("")  # the folder itself (a listing)
        return names

    def close(self) -> None:
        os.close(self.fd)


@pytest.fixture
def secrets(tmp_path):
    """A folder with a readable Solidity file of a secret constant, watched for opens; after the test,
    a control read must be seen (else the watch could not have failed)."""
    folder = tmp_path / "server-files"
    folder.mkdir()
    (folder / "secret.sol").write_text(SECRET)
    watch = OpenWatch(folder)
    yield folder, watch
    (folder / "secret.sol").read_text()
    assert "secret.sol" in watch.opened(), "the inotify watch saw no control read: it proves nothing"
    watch.close()


@pytest.fixture(scope="module")
def explorer():
    with start_embedded(FakeChain(), compile_timeout=60) as running:
        yield running


def answer(explorer, data: dict) -> str:
    submitted = post(explorer.base_url, data)
    assert submitted["status"] == "1", submitted
    return poll(explorer.base_url, submitted["result"], timeout=90)["result"]


def answer_for_import(explorer, path: str) -> str:
    return answer(explorer, form(source=BOX.format(path=path)))


# --- the compile sees the submitted sources and nothing else ------------------------------------


@pytest.mark.parametrize(
    "existing, missing",
    [
        ("/etc/passwd", "/etc/nonexistent-acv"),
        ("/etc/shadow", "/etc/nonexistent-acv"),
        ("/proc/self/environ", "/proc/self/nonexistent-acv"),
        ("<x/../../../../../etc/passwd", "<x/../../../../../etc/nonexistent-acv"),
        ("../../../../../../../../etc/passwd", "../../../../../../../../etc/nonexistent-acv"),
        ("file:///etc/passwd", "file:///etc/nonexistent-acv"),
    ],
)
def test_outside_files_answer_like_etherscan_whether_they_exist_or_not(explorer, existing, missing):
    found, not_found = answer_for_import(explorer, existing), answer_for_import(explorer, missing)
    # solc normalises a relative path (`../../etc/passwd` is named `etc/passwd`), so only its frame is fixed.
    head, tail = NOT_FOUND.split("{path}")
    assert found.startswith(head) and found.endswith(tail) and "root:" not in found, found
    # The same text but for the path the submitter wrote: nothing tells whether the file exists.
    assert found.replace(posixpath.basename(existing), "NAME") == not_found.replace(posixpath.basename(missing), "NAME")


def test_the_exact_answer_for_an_absolute_path_and_a_url(explorer):
    assert answer_for_import(explorer, "/etc/passwd") == NOT_FOUND.format(path="/etc/passwd")
    url = "https://raw.githubusercontent.com/OpenZeppelin/openzeppelin-contracts/master/contracts/access/Ownable.sol"
    assert answer_for_import(explorer, url) == NOT_FOUND.format(path=url)


def test_files_the_server_can_read_are_never_opened(explorer, secrets):
    folder, watch = secrets
    secret = folder / "secret.sol"
    # Absolute, relative to the compile's own temp folder (where solc-js used to resolve), and with `..`.
    from_tmp = "../" + os.path.relpath(secret, tempfile.gettempdir())
    for path in (str(secret), from_tmp, f"<x/../../../../../../..{secret}", f"{folder}/./../{folder.name}/secret.sol"):
        missing = path.replace("secret.sol", "missing.sol")
        found, not_found = answer_for_import(explorer, path), answer_for_import(explorer, missing)
        assert "File import callback not supported" in found
        assert found.replace("secret.sol", "NAME") == not_found.replace("missing.sol", "NAME")
    assert watch.opened() == set()


def test_a_file_under_the_servers_cwd_is_not_read(explorer, secrets, monkeypatch):
    folder, watch = secrets
    monkeypatch.chdir(folder)
    for path in ("secret.sol", "./secret.sol"):
        assert answer_for_import(explorer, path) == NOT_FOUND.format(path=posixpath.normpath(path))
    assert watch.opened() == set()


def test_a_remapping_to_an_outside_folder_reads_nothing(explorer, secrets):
    folder, watch = secrets
    answers = []
    for name in ("secret.sol", "missing.sol"):
        input_json = {
            "language": "Solidity",
            "sources": {"Box.sol": {"content": BOX.format(path=f"outside/{name}")}},
            "settings": {"remappings": [f"outside/={folder}/"]},
        }
        text = answer(explorer, json_form(ADDRESS_A, input_json, "Box.sol:Box"))
        answers.append(text.replace(name, "NAME"))
    assert answers[0] == answers[1] == NOT_FOUND.format(path=f"{folder}/NAME")
    assert watch.opened() == set()


def test_bisection_of_a_secret_constant_learns_nothing(explorer, secrets):
    folder, watch = secrets
    answers = {}
    for guess in (4242, 4243):
        source = (
            "// SPDX-License-Identifier: MIT\npragma solidity 0.8.26;\n"
            f'import {{PIN}} from "{folder}/secret.sol";\n'
            f"contract Box {{ uint256[PIN - {guess}] public value; }}\n"
        )
        answers[guess] = answer(explorer, form(source=source))
    assert answers[4242] == answers[4243] == NOT_FOUND.format(path=f"{folder}/secret.sol")
    assert watch.opened() == set()


def test_dev_zero_is_answered_at_once(explorer):
    started = time.monotonic()
    assert answer_for_import(explorer, "/dev/zero") == NOT_FOUND.format(path="/dev/zero")
    assert time.monotonic() - started < 30


def test_sources_given_as_urls_are_not_fetched_by_the_engine(secrets):
    folder, watch = secrets
    input_json = {"language": "Solidity", "sources": {"x.sol": {"urls": [str(folder / "secret.sol")]}}}
    with pytest.raises(CompilerFailed) as info:
        compile_standard_json(SOLC_0826, input_json)
    assert str(info.value) == (
        f'solc v0.8.26+commit.8a97fa7a reported errors: IOError: Cannot import url ("{folder}/secret.sol"): '
        "File import callback not supported"
    )
    assert watch.opened() == set()


@pytest.mark.parametrize(
    "version, source, expected",
    [
        ("vyper:0.4.3", "import {name}\n", "vyper 0.4.3 reported errors: ModuleNotFound: {name} --> C.vy:1:0"),
        (
            "vyper:0.3.10",
            "import {name} as S\n",
            "vyper 0.3.10 reported errors: FileNotFoundError: Cannot locate interface '{name}{{.vy,.json}}' --> C.vy",
        ),
    ],
)
def test_vyper_search_paths_of_the_submission_read_nothing(tmp_path, version, source, expected):
    folder = tmp_path / "vy"
    folder.mkdir()
    (folder / "secret.vyi").write_text("@external\ndef f() -> uint256:\n    ...\n")
    (folder / "secret.vy").write_text("interface Secret:\n    def f() -> uint256: view\n")
    watch = OpenWatch(folder)
    try:
        for name in ("secret", "missing"):
            body = source.format(name=name) + "@external\ndef g() -> uint256:\n    return 1\n"
            input_json = {
                "language": "Vyper",
                "sources": {"C.vy": {"content": body}},
                "settings": {"search_paths": [str(folder), "."]},
            }
            with pytest.raises(CompilerFailed) as info:
                compile_vyper_json(version, input_json)
            assert str(info.value) == expected.format(name=name)
        assert watch.opened() == set()
    finally:
        watch.close()


def test_ape_soliditys_own_compiles_still_read_imports(tmp_path):
    """The shim reads files when not given --no-import-callback: ape-solidity and forge need that."""
    import subprocess

    (tmp_path / "Lib.sol").write_text("// SPDX-License-Identifier: MIT\npragma solidity ^0.8.0;\ncontract Lib {}\n")
    input_json = {
        "language": "Solidity",
        "sources": {"Main.sol": {"content": 'pragma solidity ^0.8.0;\nimport "Lib.sol";\ncontract Main is Lib {}\n'}},
        "settings": {"outputSelection": {"*": {"*": ["evm.bytecode.object"]}}},
    }
    shim = str(REPO / ".solcx" / "solc-v0.8.26")
    runs = {}
    for flags in ((), ("--no-import-callback",)):
        proc = subprocess.run(
            [shim, "--standard-json", "--base-path", str(tmp_path), *flags],
            input=json.dumps(input_json),
            capture_output=True,
            text=True,
            timeout=120,
        )
        runs[flags] = json.loads(proc.stdout)
    assert runs[()]["contracts"]["Main.sol"]["Main"]["evm"]["bytecode"]["object"]
    assert [e["message"] for e in runs[("--no-import-callback",)]["errors"] if e["severity"] == "error"] == [
        'Source "Lib.sol" not found: File import callback not supported'
    ]


# --- bounded memory, CPU and count --------------------------------------------------------------

OZ = REPO / "toolchain" / "openzeppelin-contracts"
IMPORT = re.compile(r'import\s+(?:[^"\']*from\s+)?["\']([^"\']+)["\']')


def oz_governor_input() -> dict:
    """MyGovernor (the flatten fixtures' largest contract) and its OpenZeppelin import closure."""
    sources: dict[str, dict] = {}
    todo = [("MyGovernor.sol", (REPO / "tests" / "flatten_fixtures" / "oz" / "MyGovernor.sol").read_text())]
    for _ in range(1000):  # the closure is ~50 files
        if not todo:
            break
        name, text = todo.pop()
        if name in sources:
            continue
        sources[name] = {"content": text}
        for imported in IMPORT.findall(text):
            if imported.startswith("."):
                imported = posixpath.normpath(posixpath.join(posixpath.dirname(name), imported))
            todo.append((imported, (OZ / imported.removeprefix("@openzeppelin/contracts/")).read_text()))
    assert not todo
    input_json = {"language": "Solidity", "sources": sources, "settings": {"optimizer": {"enabled": True, "runs": 200}}}
    return compilers.with_output_selection(input_json, "MyGovernor.sol", "MyGovernor")


def test_an_openzeppelin_compile_fits_the_default_bound_and_a_small_one_fails_clearly(monkeypatch):
    input_json = oz_governor_input()
    monkeypatch.delenv(SOLC_CACHE_ENV, raising=False)  # the bound holds only on a compile that runs
    monkeypatch.delenv(compilers.MEMORY_ENV, raising=False)
    output = compile_standard_json(SOLC_0837, input_json)
    assert output["contracts"]["MyGovernor.sol"]["MyGovernor"]["evm"]["bytecode"]["object"]
    monkeypatch.setenv(compilers.MEMORY_ENV, "160")
    with pytest.raises(CompilerFailed) as info:
        compile_standard_json(SOLC_0837, input_json)
    assert str(info.value).startswith("solc 0.8.37 crashed (signal ") or str(info.value).startswith(
        "solc 0.8.37 failed (exit code"
    )
    assert str(info.value).endswith(
        "it ran out of memory at the explorer's bound of 160 MB per compile (raise APE_VERIFY_COMPILE_MEMORY_MB if the contract needs more)"
    ), str(info.value)


def test_a_runaway_solc_js_dies_at_the_memory_bound(monkeypatch):
    """The old hole (the shim's file callback on /dev/zero grew node to ~6 GB), under the engine's bounds."""
    import resource
    import subprocess

    monkeypatch.delenv(SOLC_CACHE_ENV, raising=False)  # the shim compiles itself, under these bounds

    source = 'pragma solidity ^0.8.0;\nimport "/dev/zero";\ncontract C {}\n'
    input_json = {"language": "Solidity", "sources": {"a.sol": {"content": source}}}
    limits = compilers.Limits(memory_mb=1024, cpu_seconds=60)
    started = time.monotonic()
    proc = subprocess.run(
        [str(REPO / ".solcx" / "solc-v0.8.26"), "--standard-json"],
        input=json.dumps(input_json),
        capture_output=True,
        text=True,
        timeout=120,
        preexec_fn=compilers.preexec(limits),
    )
    assert proc.returncode != 0 and compilers.memory_line(proc.stderr), proc.stderr[-500:]
    assert time.monotonic() - started < 60
    assert resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss < 2 * 1024 * 1024  # KiB: under 2 GiB


def _fake_solc(folder: Path, body: str) -> Path:
    folder.mkdir(exist_ok=True)
    script = folder / "solc-v0.8.26"
    script.write_text(f'#!/bin/sh\nif [ "$1" = "--version" ]; then {VERSION_ANSWER}; exit 0; fi\n{body}\n')
    script.chmod(0o755)
    return folder


def test_a_memory_hungry_compiler_is_a_clear_fail_over_http(explorer, tmp_path, monkeypatch):
    eat = f'exec {sys.executable} -c "b = []\nwhile True: b.append(bytearray(1 << 24))"'
    monkeypatch.setenv("SOLCX_BINARY_PATH", str(_fake_solc(tmp_path / "solc", eat)))
    monkeypatch.delenv("APE_CONTRACT_VERIFY_COMPILE_CACHE", raising=False)
    monkeypatch.setenv(compilers.MEMORY_ENV, "256")
    started = time.monotonic()
    text = answer(explorer, form(source=BOX.format(path="x.sol").replace('import "x.sol";\n', "// memory\n")))
    assert text == (
        "Fail - Unable to verify. Solidity Compilation Error: solc 0.8.26 failed (exit code 1) without JSON output: MemoryError; it ran out of "
        "memory at the explorer's bound of 256 MB per compile (raise APE_VERIFY_COMPILE_MEMORY_MB if the contract needs more)"
    )
    assert time.monotonic() - started < 30


def _script_solc(tmp_path, monkeypatch, body: str) -> None:
    script = tmp_path / "solc-fake"
    script.write_text(f"#!{sys.executable}\nimport sys, time\n{body}\n")
    script.chmod(0o755)
    monkeypatch.setattr(compilers, "solc_executable", lambda version: script)


def test_a_spinning_compiler_is_stopped_by_the_cpu_bound(tmp_path, monkeypatch):
    _script_solc(tmp_path, monkeypatch, "sys.stdin.read()\nwhile True: pass")
    monkeypatch.setenv(compilers.CPU_ENV, "1")
    started = time.monotonic()
    with pytest.raises(CompilerFailed) as info:
        compile_standard_json(SOLC_0826, {"language": "Solidity", "sources": {}}, timeout=60)
    assert str(info.value) == (
        "solc 0.8.26 used more than its 1 s of CPU time and was stopped "
        "(the explorer's bound; raise APE_VERIFY_COMPILE_CPU_SECONDS if the contract needs more)"
    )
    assert time.monotonic() - started < 20


@pytest.mark.parametrize(
    "variable, value",
    [
        (compilers.MEMORY_ENV, "lots"),
        (compilers.CPU_ENV, "-1"),
        (compilers.CONCURRENCY_ENV, "0"),
        (compilers.CONCURRENCY_ENV, "²"),
    ],
)
def test_a_bad_bound_setting_is_a_clear_failure(monkeypatch, variable, value):
    monkeypatch.setenv(variable, value)
    with pytest.raises(CompilerFailed) as info:
        compile_standard_json(SOLC_0826, {"language": "Solidity", "sources": {}})
    assert f"{variable}={value!r} is not a whole number above 0; set it to e.g." in str(info.value)
    assert str(info.value).endswith("or unset it")


def test_compiles_at_once_are_bounded(tmp_path, monkeypatch):
    log = tmp_path / "log"
    _script_solc(
        tmp_path,
        monkeypatch,
        (
            f"sys.stdin.read()\nopen({str(log)!r}, 'a').write(f'+ {{time.monotonic()}}\\n')\ntime.sleep(0.4)\n"
            f"open({str(log)!r}, 'a').write(f'- {{time.monotonic()}}\\n')\nprint('{{}}')"
        ),
    )
    monkeypatch.setenv(compilers.CONCURRENCY_ENV, "2")
    errors: list[BaseException] = []

    def one() -> None:
        try:
            compile_standard_json(SOLC_0826, {"language": "Solidity", "sources": {}}, timeout=60)
        except BaseException as err:  # noqa: BLE001 - reported by the assertion below
            errors.append(err)

    threads = [threading.Thread(target=one) for _ in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert not errors and not any(thread.is_alive() for thread in threads)
    events = sorted(
        (float(stamp), 1 if sign == "+" else -1)
        for sign, stamp in (line.split() for line in log.read_text().splitlines())
    )
    running, peak = 0, 0
    for _, step in sorted(events, key=lambda event: (event[0], event[1])):
        running += step
        peak = max(peak, running)
    assert len(events) == 12 and peak == 2


def test_the_default_count_is_the_cpus_this_process_may_use(monkeypatch):
    monkeypatch.delenv(compilers.CONCURRENCY_ENV, raising=False)
    assert compilers.max_compiles() == len(os.sched_getaffinity(0))


# --- compilers die with the server --------------------------------------------------------------


def _processes_with(token: str) -> dict[int, int]:
    """pid -> parent pid of every process whose command line holds `token`."""
    found = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            if token.encode() not in (entry / "cmdline").read_bytes():
                continue
            stat = (entry / "stat").read_text()
            found[int(entry.name)] = int(stat.rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue  # ended while read
    return found


def test_sigkill_of_ape_verify_serve_leaves_no_compiler(tmp_path, monkeypatch):
    token = f"acv-sandbox-{uuid.uuid4().hex}"
    node = shutil.which("node")
    assert node, "node is needed (solc-js)"
    # Like the real shims (`exec node solc-native.js …`), a node process: one that compiles forever.
    slow = f'exec {node} -e "setTimeout(() => {{}}, 300000)" {token}'
    anvil = Anvil()
    server = None
    try:
        input_json = standard_input(["proxy/Box.sol"])
        creation = solc_compile(input_json)["contracts"]["contracts/proxy/Box.sol"]["Box"]["evm"]["bytecode"]["object"]
        addresses = [anvil.deploy(creation) for _ in range(2)]
        # The server's compiles (not the deploy's above) go to the slow one.
        monkeypatch.setenv("SOLCX_BINARY_PATH", str(_fake_solc(tmp_path / "solc", slow)))
        monkeypatch.delenv("APE_CONTRACT_VERIFY_COMPILE_CACHE", raising=False)  # a cached Box would compile nothing
        server = ServerProcess(anvil.url, tmp_path / "explorer.sqlite", use_ape=True, extra=("--workers", "2"))
        for runs, address in zip((200, 201), addresses):  # two inputs: one compile would wait for the other's
            submitted = dict(input_json, settings={"optimizer": {"enabled": True, "runs": runs}})
            assert post(server.base_url, json_form(address, submitted, "contracts/proxy/Box.sol:Box"))["status"] == "1"
        deadline = time.monotonic() + 60
        running = _processes_with(token)
        while len(running) < 2 and time.monotonic() < deadline:
            time.sleep(0.2)
            running = _processes_with(token)
        assert len(running) == 2, f"two compiles should be running: {running}\n" + "\n".join(server.lines[-20:])
        assert set(running.values()) == {server.proc.pid}  # children of the server itself
        server.kill()  # SIGKILL
        deadline = time.monotonic() + 10
        while _processes_with(token) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert _processes_with(token) == {}, "compilers outlived the SIGKILLed server"
    finally:
        if server is not None:
            server.kill()
        for pid in _processes_with(token):  # only what this test started
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        anvil.stop()
