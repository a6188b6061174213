"""Compile exactly what was submitted, with exactly the requested compiler, and cache the result.

Solidity runs through the `solc-v<X.Y.Z>` executable py-solc-x knows (native solc or the solc-js
shim of `toolchain/`), Vyper through the installed `vyper-json`. Every compile is a subprocess
with a timeout, so a hang or a crash becomes a typed `CompilerFailed`, never a stuck worker, and runs
inside `engine/py`'s bounds. A compile reads the submitted sources and no file of the machine.
Its errors are `CompilerError`s (a version it cannot read, a compiler not installed, one that refused
the sources or crashed), its output typed as the compilers document it (`CompilerOutput`).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
import hashlib
import json
import math
import os
import re
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, TypeAlias, TypedDict, cast

from packaging.version import Version

from ape_contract_verify.evm import bytecode as bc
from ape_contract_verify.exceptions import ContractVerifyError
from ape_contract_verify.json_types import JsonObject
from ape_contract_verify.logs import get_logger
from ape_contract_verify.protocol import compiler_version
from ape_contract_verify.protocol.compiler_version import CompilerVersion, Language
from ape_contract_verify.protocol.inputs import CompilerInput, CompilerSettings, OutputSelection

# Set to 1 to let py-solc-x download a missing solc (needs internet; never in tests).
INSTALL_ENV = "APE_VERIFY_INSTALL_SOLC"
DEFAULT_TIMEOUT = 120.0
logger = get_logger()

# What the verifier needs from each contract; nothing else is generated (it is faster).
SOLIDITY_OUTPUTS = [
    "abi",
    "metadata",
    "evm.bytecode.object",
    "evm.bytecode.linkReferences",
    "evm.deployedBytecode.object",
    "evm.deployedBytecode.linkReferences",
    "evm.deployedBytecode.immutableReferences",
]
VYPER_OUTPUTS = ["abi", "evm.bytecode.object", "evm.deployedBytecode.object"]


# --- errors and output -------------------------------------------------------------------


class CompilerError(ContractVerifyError):
    """Base of every compiler problem; `str()` is a reason fit for `Fail - Unable to verify. …`."""


class InvalidCompilerVersion(CompilerError, compiler_version.InvalidCompilerVersion):
    """A compilerversion that names no compiler: a compiler problem to the engine."""


class CompilerNotInstalled(CompilerError):
    """The compiler of the requested version is not on this machine."""


class CompilerFailed(CompilerError):
    """The compiler ran and refused the sources, or did not finish."""


class CompilerCrashed(CompilerFailed):
    """solc stopped on an internal error (a bug of its own), not on the sources."""


def parse_compiler_version(text: str, language: Language | None = None) -> CompilerVersion:
    """`CompilerVersion.parse`, its refusal raised as the engine's `InvalidCompilerVersion`."""
    try:
        return CompilerVersion.parse(text, language)
    except compiler_version.InvalidCompilerVersion as err:
        raise InvalidCompilerVersion(str(err)) from None


# file -> library -> where its address goes; an immutable's AST id -> where its value goes.
LinkReferences: TypeAlias = dict[str, dict[str, list[bc.CodeReference]]]
ImmutableReferences: TypeAlias = dict[str, list[bc.CodeReference]]


class Bytecode(TypedDict, total=False):
    object: str
    linkReferences: LinkReferences
    immutableReferences: ImmutableReferences  # the deployed bytecode's only


class EvmOutput(TypedDict, total=False):
    bytecode: Bytecode
    deployedBytecode: Bytecode


class ContractOutput(TypedDict, total=False):
    abi: list[JsonObject]
    metadata: str
    evm: EvmOutput


class SourceLocation(TypedDict, total=False):
    file: str
    start: int


class CompilerMessage(TypedDict, total=False):
    severity: str
    type: str
    message: str
    formattedMessage: str
    sourceLocation: SourceLocation


# engine/vyper03_callee_order.py's report: per contract, each function as (name, internal, callees).
CalleeReport: TypeAlias = list[list[tuple[str, bool, list[str]]]]


class CompilerOutput(TypedDict, total=False):
    contracts: dict[str, dict[str, ContractOutput]]  # file -> contract name -> its output
    errors: list[CompilerMessage]
    sources: dict[str, JsonObject]
    calleeOrder: CalleeReport  # the callee-order driver's compiles only
    widenedOutputSelection: str  # WIDENED: a narrowed output taken from a wide compile
    buildOutputs: list[str]  # compilers.keep_build: what a kept build selected for every contract


def code_objects(evm: EvmOutput) -> tuple[str, str]:
    """A contract's creation and runtime code as the compiler wrote them: hex without 0x, link
    placeholders kept ("" for code it did not make)."""
    made, deployed = evm.get("bytecode") or {}, evm.get("deployedBytecode") or {}
    return str(made.get("object") or "").removeprefix("0x"), str(deployed.get("object") or "").removeprefix("0x")


@dataclass
class Compiled:
    """The compiler's code for one contract, with what the comparison must ignore."""

    creation: bytes
    creation_links: LinkReferences
    runtime: bytes
    runtime_links: LinkReferences
    immutables: ImmutableReferences
    trailing: int  # Vyper appends immutables after the runtime code

    @classmethod
    def from_evm(cls, evm: EvmOutput, language: str) -> Compiled:
        made, deployed = evm.get("bytecode") or {}, evm.get("deployedBytecode") or {}
        creation, runtime = (bc.to_bytes(code) for code in code_objects(evm))  # placeholders zeroed
        trailing = bc.vyper_immutables(creation, runtime) if language == "vyper" else 0
        return cls(
            creation=creation,
            creation_links=made.get("linkReferences") or {},
            runtime=runtime,
            runtime_links=deployed.get("linkReferences") or {},
            immutables=deployed.get("immutableReferences") or {},
            trailing=trailing,
        )

    def compare_creation(self, on_chain: bytes) -> bc.Comparison:
        """Against the code a creation's input (or a blueprint's body) starts with."""
        return bc.compare(self.creation, on_chain[: len(self.creation)], link_references=self.creation_links)

    def reproduces(self, runtime: bytes, creation_input: bytes | None = None) -> bool:
        """Whether this is the deployment's code: its runtime, and its creation code when known."""
        matches = self.compare_runtime(runtime).matches
        return matches and (not creation_input or self.compare_creation(creation_input).matches)

    def compare_runtime(self, on_chain: bytes) -> bc.Comparison:
        return bc.compare(
            self.runtime,
            on_chain,
            immutable_references=self.immutables,
            link_references=self.runtime_links,
            trailing_immutables=self.trailing,
        )


def raise_on_errors(output: CompilerOutput, input_json: CompilerInput, what: str) -> None:
    errors = [e for e in output.get("errors") or [] if str(e.get("severity", "error")).lower() == "error"]
    if not errors:
        return
    submitted = set((input_json.get("sources") or {}).keys())
    messages = []
    for error in errors[:3]:
        file = (error.get("sourceLocation") or {}).get("file")
        if file and submitted and file not in submitted and not file.startswith("<"):
            # Never echo text of a file the submission did not include.
            messages.append(f"{error.get('type', 'Error')} in {file}, which the submitted sources do not include")
        else:
            messages.append(one_line(error, input_json))
    more = f" (and {len(errors) - 3} more)" if len(errors) > 3 else ""
    crashed = any(
        e.get("type") == "InternalCompilerError" or "Compiled contract not found" in str(e.get("message"))
        for e in errors
    )
    raise (CompilerCrashed if crashed else CompilerFailed)(f"{what} reported errors{more}: " + " | ".join(messages))


def one_line(error: CompilerMessage, input_json: CompilerInput) -> str:
    """`ParserError: Expected ';' but got '}' --> File.sol:12:5`: one line, fit for a status text."""
    message = str(error.get("message") or error.get("formattedMessage") or error).strip().replace("\n", " ")
    text = f"{error.get('type', 'Error')}: {message}"
    location = error.get("sourceLocation") or {}
    file, start = location.get("file"), location.get("start")
    if file:
        content = ((input_json.get("sources") or {}).get(file) or {}).get("content")
        if isinstance(content, str) and isinstance(start, int) and 0 <= start <= len(content):
            line = content.count("\n", 0, start) + 1
            column = start - (content.rfind("\n", 0, start) + 1) + 1
            return f"{text} --> {file}:{line}:{column}"
        vyper_line = re.search(r"line (\d+):(\d+)", str(error.get("formattedMessage") or ""))
        return f"{text} --> {file}" + (f":{vyper_line.group(1)}:{vyper_line.group(2)}" if vyper_line else "")
    return text


# --- bounds of every compiler process ---------------------------------------------------------

MEMORY_ENV = "APE_VERIFY_COMPILE_MEMORY_MB"
CPU_ENV = "APE_VERIFY_COMPILE_CPU_SECONDS"
CONCURRENCY_ENV = "APE_VERIFY_MAX_COMPILES"
# An OpenZeppelin Governor needs about 300 MB in solc-js; vyper far less.
DEFAULT_MEMORY_MB = 2048
# Beyond the wall-clock timeout: the kernel stops a compile even when nobody is left to.
CPU_MARGIN_SECONDS = 10

_PR_SET_PDEATHSIG = 1


class CompileLimitError(ContractVerifyError):
    """A bound set through the environment is not usable; `str()` names the variable and the fix."""


@dataclass(frozen=True)
class Limits:
    memory_mb: int
    cpu_seconds: int


def _positive_int(name: str, default: int) -> int:
    raw = os.environ.get(name, "").strip()
    if not raw:
        return default
    if not raw.isascii() or not raw.isdigit() or int(raw) < 1:
        raise CompileLimitError(
            f"{name}={raw!r} is not a whole number above 0; set it to e.g. {default or 1}, or unset it"
        )
    return int(raw)


def limits_for(timeout: float) -> Limits:
    """The bounds of one compile that may run `timeout` seconds of wall-clock time."""
    cpu = max(1, math.ceil(timeout)) + CPU_MARGIN_SECONDS
    return Limits(memory_mb=_positive_int(MEMORY_ENV, DEFAULT_MEMORY_MB), cpu_seconds=_positive_int(CPU_ENV, cpu))


def _load_prctl() -> Callable[..., int] | None:
    # Resolved here, in the parent: the child between fork and exec must not load libraries. Linux's
    # only: another libc has no prctl (AttributeError).
    try:
        return ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True).prctl
    except (OSError, AttributeError):
        return None


_prctl = _load_prctl()


def preexec(limits: Limits) -> Callable[[], None]:
    """What the child runs before exec: its rlimits, and SIGKILL when the server dies."""
    parent = os.getpid()
    memory = limits.memory_mb * 1024 * 1024
    # RLIMIT_DATA, not RLIMIT_AS: V8 reserves ~10 GB of address space for a WebAssembly memory up
    # front (solc-js is wasm), so an AS limit either breaks every solc-js or bounds nothing; DATA
    # counts what a process writes to, wasm memory as it grows included.

    def run() -> None:
        resource.setrlimit(resource.RLIMIT_DATA, (memory, memory))
        # SIGXCPU at the soft limit, SIGKILL at the hard one should SIGXCPU be ignored.
        resource.setrlimit(resource.RLIMIT_CPU, (limits.cpu_seconds, limits.cpu_seconds + 5))
        if _prctl is not None:
            _prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
            if os.getppid() != parent:  # the server died before prctl took effect
                os._exit(1)

    return run


_slots_lock = threading.Lock()
_slots: dict[int, threading.BoundedSemaphore] = {}  # by how many compiles may run at once


def max_compiles() -> int:
    """At most one compile per CPU this process may use (each solc-js is ~200 MB), or $APE_VERIFY_MAX_COMPILES."""
    try:
        cpus = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cpus = os.cpu_count() or 1
    return _positive_int(CONCURRENCY_ENV, max(1, cpus))


@contextmanager
def compile_slot() -> Iterator[None]:
    """Hold one of the process-wide compile slots; waits while all are taken.

    Each holder is bounded by its compile's timeout, so the wait is bounded too."""
    count = max_compiles()
    with _slots_lock:
        slots = _slots.setdefault(count, threading.BoundedSemaphore(count))
    with slots:
        yield


_MEMORY_MARKERS = (
    "out of memory",
    "bad_alloc",
    "memoryerror",
    "cannot allocate",
    "allocation failed",
    "could not allocate",
)


def memory_line(stderr: str) -> str | None:
    """The line of a failed compiler's stderr that says it could not get memory, if one does."""
    for line in stderr.splitlines():
        if any(marker in line.lower() for marker in _MEMORY_MARKERS):
            return line.strip().lstrip("#").strip()[:200]
    return None


# --- Solidity ---------------------------------------------------------------------------------


def printed_version(command: list[str], language: Language) -> CompilerVersion | None:
    """The version `command --version` prints, cached per command and file (its time and size: a
    call costs ~0.5 s); None when it does not run or prints none."""
    try:
        stat = Path(command[0]).stat()
        return _printed(tuple(command), (stat.st_mtime_ns, stat.st_size), language)
    except OSError:
        return None


@functools.cache
def _printed(command: tuple[str, ...], stamp: tuple[int, int], language: Language) -> CompilerVersion | None:
    try:
        stdout, _, returncode = _run_bounded([*command, "--version"], "", 60, command[0], None, limits_for(60))
    except (CompilerFailed, CompileLimitError):
        return None
    return CompilerVersion.printed(stdout, language) if returncode == 0 else None


def solc_executable(version: CompilerVersion) -> Path:
    """The solc for exactly this version and commit; installs it only when INSTALL_ENV allows."""
    import solcx
    from solcx.exceptions import SolcNotInstalled

    try:
        executable = Path(solcx.install.get_executable(version.number))
    except SolcNotInstalled:
        if os.environ.get(INSTALL_ENV, "").lower() not in ("1", "true", "yes"):
            try:
                installed = ", ".join(sorted((str(v) for v in solcx.get_installed_solc_versions()), key=Version))
            except Exception:  # a missing install folder means none installed
                installed = ""
            raise CompilerNotInstalled(
                f"Compiler {version.long} is not installed on this explorer (installed: {installed or 'none'}); "
                f"submit one of those versions, or install it (set {INSTALL_ENV}=1 with internet access)"
            ) from None
        try:
            solcx.install_solc(version.number)  # answers the installed version, not its path
            executable = Path(solcx.install.get_executable(version.number))
        except Exception as err:
            raise CompilerNotInstalled(
                f"Compiler {version.long} is not installed and could not be installed: {err}"
            ) from err
    found = printed_version([str(executable)], "solidity")
    if found is None or found.commit is None:
        raise CompilerFailed(f"solc at {executable} did not answer --version with its version and commit")
    if found.number != version.number or (version.commit and not (found.commit or "").startswith(version.commit[:8])):
        raise CompilerNotInstalled(
            f"Compiler {version.long} is not installed: the solc-v{version.number} here is {found.long}"
        )
    return executable


def compile_standard_json(
    compiler_version: str, input_json: CompilerInput, timeout: float = DEFAULT_TIMEOUT
) -> CompilerOutput:
    """Run `solc --standard-json` of exactly `compiler_version` on `input_json`; the output dict.

    Errors of severity "error" raise `CompilerFailed` with the first messages.
    """
    version = parse_compiler_version(compiler_version, "solidity")
    executable = solc_executable(version)
    with tempfile.TemporaryDirectory(prefix="acv-solc-") as empty:
        # An empty base path and cwd too, for a native solc too old for --no-import-callback.
        command = [str(executable), "--standard-json", "--base-path", empty]
        if _has_no_import_callback(executable, version):
            command.append("--no-import-callback")
        output = _run_json(command, input_json, timeout, f"solc {version.number}", cwd=empty)
    raise_on_errors(output, input_json, f"solc {version.long}")
    _reject_outside_imports(output, input_json)
    return output


# Native solc has the flag from 0.8.22; toolchain/solc-native.js has it for every version.
_NO_IMPORT_CALLBACK_SINCE = (0, 8, 22)


def _has_no_import_callback(executable: Path, version: CompilerVersion) -> bool:
    """Whether this solc takes --no-import-callback: import answers then never depend on the disk."""
    if version.release >= _NO_IMPORT_CALLBACK_SINCE:
        return True
    try:
        with open(executable, "rb") as head:
            start = head.read(4096)
    except OSError:
        return False
    return start.startswith(b"#!") and b"solc-native.js" in start


def _reject_outside_imports(output: CompilerOutput, input_json: CompilerInput) -> None:
    """Explorers compile only what was submitted: an import resolved from elsewhere is an error."""
    submitted = set((input_json.get("sources") or {}).keys())
    extra = sorted(set((output.get("sources") or {}).keys()) - submitted)
    if submitted and extra:
        raise CompilerFailed(
            f"the sources import {', '.join(extra[:5])}, which the submission does not include; "
            'add every imported file to "sources"'
        )


# --- Vyper ------------------------------------------------------------------------------------

# Each PyPI `vyper` release pins its own dependencies, so versions other than the venv's live in
# small venvs of their own: <dir>/<X.Y.Z>/bin/vyper-json (toolchain/install.sh makes .vyper/0.3.10).
VYPER_DIR_ENV = "APE_VERIFY_VYPER_DIR"
_PROJECT_VYPER_DIR = Path(__file__).resolve().parents[2] / ".vyper"
_CALLEE_ORDER_DRIVER = Path(__file__).resolve().with_name("vyper03_callee_order.py")

# Vyper 0.3.4 to 0.3.7 keep a function's callees in a set of objects hashed by their address
# (vyper#3369, fixed in 0.3.8), and lay out internal functions in that set's order. Where a
# function calls two or more internal functions defined after it, the order, and so the code,
# follows the hash seed (string hashes size the compiler's dicts, and so where its objects land)
# and the rest of the process's memory layout: the environment's variables move it too, and a few
# seeds give one code in one run and another in the next. Measured with the real compilers on a
# factory calling three internal functions from one external and two from another: 0.3.7 gives
# 3 to 6 codes in 16 to 64 seeds (the environment decides which), 0.3.3, 0.3.8 and 0.3.10 one.
# Such a Vyper's plain compiles run under one seed in a fixed environment, so a compile repeats.
SEED_ORDERED = ((0, 3, 4), (0, 3, 8))  # first version whose code follows the seed, first fixed
FIRST_SEED = "0"  # every plain compile of such a version


def release_of(version: str | None) -> tuple[int, int, int] | None:
    """A Vyper compiler version's release (`vyper:0.3.7`, `0.3.7`); None when it names none."""
    try:
        return CompilerVersion.parse(version or "", "vyper").release
    except compiler_version.InvalidCompilerVersion:
        return None


def follows_hash_seed(compiler_version: str | None) -> bool:
    """Whether this Vyper (`vyper:0.3.7`, `0.3.7`) lays out its code by the hash seed."""
    release = release_of(compiler_version)
    return release is not None and SEED_ORDERED[0] <= release < SEED_ORDERED[1]


def environment(seed: str, layout: int = 0) -> dict[str, str]:
    """A seeded compile's whole environment, the same from any caller, with `layout` variables
    more: a seed names one code only within one environment (the compiler is started by its full
    path and starts nothing). The environment's size moves the memory layout as much as the seed
    does, so no seed search reaches every code: engine/diagnose.py's order search compiles the orders by name."""
    return {
        "PATH": os.defpath,
        "PYTHONHASHSEED": seed,
        **{f"APE_VERIFY_LAYOUT_{i}": "x" * (i % 7) for i in range(layout)},
    }


def vyper_compilers() -> dict[str, list[str]]:
    """Number -> the vyper-json command of every installed Vyper: the venv's, then the side venvs.

    A side venv counts only when its `vyper --version` agrees with its folder name."""
    found: dict[str, list[str]] = {}
    # The `vyper` (for --version) and vyper-json on PATH, else beside this Python (pip installs both).
    exe = shutil.which("vyper") or str(Path(sys.executable).with_name("vyper"))
    json_exe = shutil.which("vyper-json") or str(Path(sys.executable).with_name("vyper-json"))
    if Path(json_exe).exists() and (own := printed_version([exe], "vyper")):
        found[own.number] = [json_exe]
    folders = [*(Path(p) for p in os.environ.get(VYPER_DIR_ENV, "").split(os.pathsep) if p), _PROJECT_VYPER_DIR]
    for candidate in [venv for folder in folders if folder.is_dir() for venv in sorted(folder.iterdir())]:
        side_json = candidate / "bin" / "vyper-json"
        if candidate.name in found or not side_json.exists():
            continue
        printed = printed_version([str(candidate / "bin" / "vyper")], "vyper")
        if printed is not None and printed.number == candidate.name:
            found[candidate.name] = [str(side_json)]
    return found


def vyper_json_command(version: CompilerVersion) -> list[str]:
    """The vyper-json of exactly this version, or CompilerNotInstalled naming the installed ones."""
    compilers = vyper_compilers()
    if version.number in compilers:
        return compilers[version.number]
    # Each key is a number Vyper printed (`vyper_compilers`), so it parses.
    installed = ", ".join(str(v) for v in sorted(CompilerVersion.parse(n, "vyper") for n in compilers)) or "none"
    raise CompilerNotInstalled(
        f"Compiler {version.long} is not installed on this explorer (installed: {installed}); "
        f"submit one of those versions, or install it: python -m venv .vyper/{version.number} && "
        f".vyper/{version.number}/bin/pip install vyper=={version.number}"
    )


def compile_vyper_json(
    version: str,
    input_json: CompilerInput,
    timeout: float = DEFAULT_TIMEOUT,
    hash_seed: str | None = None,
    layout: int = 0,
    callee_order: dict[str, list[str]] | None = None,
) -> CompilerOutput:
    """Run the `vyper-json` of exactly `version` on `input_json`; `hash_seed`, Python's, in an
    environment of its own (`layout` variables more), for a Vyper whose code follows them
    (`follows_hash_seed`); or with each function's callees in `callee_order` (vyper03_callee_order.py)."""
    requested = parse_compiler_version(version, "vyper")
    command = vyper_json_command(requested)
    if callee_order is not None:  # the driver runs in that Vyper's venv, by the Python beside its vyper-json
        python = Path(command[0]).with_name("python")
        driver = [str(_CALLEE_ORDER_DRIVER), json.dumps(callee_order, sort_keys=True)]
        command = [str(python) if python.exists() else sys.executable, *driver]
    settings: CompilerSettings = (input_json.get("settings") or {}).copy()
    # Search paths name folders of the submitter's machine; only the submitted files count here.
    # (vyper-json reads imports from the JSON alone, and 0.3's interface files only under -p, never given.)
    settings.pop("search_paths", None)
    if not settings.get("outputSelection"):
        # Not "*": vyper refuses to make bytecode for an interface file (.vyi).
        contracts = [path for path in input_json.get("sources") or {} if not str(path).endswith(".vyi")]
        settings["outputSelection"] = {path: VYPER_OUTPUTS for path in contracts} or {"*": VYPER_OUTPUTS}
    input_json = {**input_json, "settings": settings}
    with tempfile.TemporaryDirectory(prefix="acv-vyper-") as empty:
        env = None if hash_seed is None else environment(hash_seed, layout)
        output = _run_json(command, input_json, timeout, f"vyper {requested.number}", cwd=empty, env=env)
    raise_on_errors(output, input_json, f"vyper {requested.number}")
    return output


# --- shared -----------------------------------------------------------------------------------


def _run_json(
    command: list[str],
    input_json: CompilerInput,
    timeout: float,
    what: str,
    cwd: str,
    env: dict[str, str] | None = None,
) -> CompilerOutput:
    try:  # a bad bound is this compile's clear failure, not a crash
        limits = limits_for(timeout)
        with compile_slot():
            stdout, stderr, returncode = _run_bounded(command, json.dumps(input_json), timeout, what, cwd, limits, env)
    except CompileLimitError as err:
        raise CompilerFailed(f"{what} could not be started: {err}") from err
    if returncode == -signal.SIGXCPU:
        raise CompilerFailed(
            f"{what} used more than its {limits.cpu_seconds} s of CPU time and was stopped "
            f"(the explorer's bound; raise {CPU_ENV} if the contract needs more)"
        )
    ended = (
        f"crashed (signal {-returncode})" if returncode < 0 else f"failed (exit code {returncode}) without JSON output"
    )
    if returncode != 0 and (out_of_memory := memory_line(stderr)):
        # Node's and Python's own words for it, then the bound that caused it.
        raise CompilerFailed(
            f"{what} {ended}: {out_of_memory}; it ran out of memory at the explorer's bound of "
            f"{limits.memory_mb} MB per compile (raise {MEMORY_ENV} if the contract needs more)"
        )
    if returncode < 0:
        raise CompilerFailed(f"{what} {ended}: {stderr.strip()[-300:]}")
    start = stdout.find("{")
    try:
        output: CompilerOutput | None = json.loads(stdout[start:]) if start >= 0 else None
    except json.JSONDecodeError:
        output = None
    if not isinstance(output, dict):
        raise CompilerFailed(f"{what} {ended}: {(stderr.strip() or stdout.strip())[-300:]}")
    return output


def _run_bounded(
    command: list[str],
    stdin: str,
    timeout: float,
    what: str,
    cwd: str | None,
    limits: Limits,
    env: dict[str, str] | None = None,
) -> tuple[str, str, int]:
    try:
        proc = subprocess.Popen(
            command,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            cwd=cwd,
            env=env,
            start_new_session=True,  # so a timeout kills node and anything it started
            preexec_fn=preexec(limits),
        )
    except OSError as err:
        raise CompilerFailed(f"{what} could not be started: {err}") from err
    try:
        stdout, stderr = proc.communicate(stdin, timeout=timeout)
    except subprocess.TimeoutExpired:
        _kill_group(proc)
        raise CompilerFailed(f"{what} did not finish within {timeout:g} s and was stopped")
    except BaseException:
        _kill_group(proc)  # never leave a compiler running behind an error
        raise
    return stdout, stderr, proc.returncode


def _kill_group(proc: subprocess.Popen[str]) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        proc.kill()
    proc.communicate()


def single_file_input(
    source: str,
    *,
    file_name: str = "contract.sol",
    optimizer: bool | None = None,
    runs: int | None = None,
    evm_version: str | None = None,
    via_ir: bool | None = None,
    libraries: dict[str, str] | None = None,
) -> CompilerInput:
    """Standard-json input for a flat Solidity file and the form's settings.

    Unset optimizer means off (Etherscan's form default); runs default to 200.
    """
    settings: CompilerSettings = {"optimizer": {"enabled": bool(optimizer), "runs": 200 if runs is None else int(runs)}}
    if evm_version and evm_version.lower() not in ("default", "compiler default"):
        settings["evmVersion"] = evm_version.lower()
    if via_ir:
        settings["viaIR"] = True
    if libraries:
        settings["libraries"] = {file_name: dict(libraries)}
    return {"language": "Solidity", "sources": {file_name: {"content": source}}, "settings": settings}


def with_output_selection(input_json: CompilerInput, file: str = "*", contract: str = "*") -> CompilerInput:
    """A copy of `input_json` asking only for what verification needs (and for one contract)."""
    vyper = str(input_json.get("language", "Solidity")).lower() == "vyper"
    selection: OutputSelection = {file: VYPER_OUTPUTS} if vyper else {file: {contract: SOLIDITY_OUTPUTS}}
    return {**input_json, "settings": {**(input_json.get("settings") or {}), "outputSelection": selection}}


# --- output selections ---------------------------------------------------------------------

# The key of a narrowed compile's output that came from the wide compile: what happened, in words.
WIDENED: Final = "widenedOutputSelection"


def widened(input_json: CompilerInput) -> CompilerInput | None:
    """`input_json` with every contract of every file selected (the same outputs), as a build
    selects them; None when it already is, or selects no contract output."""
    selection = (input_json.get("settings") or {}).get("outputSelection") or {}
    outputs: dict[str, set[str]] = {"": set(), "*": set()}
    for per_file in selection.values():
        for contract, wanted in _per_contract(per_file).items():
            outputs["" if contract == "" else "*"].update(wanted or [])
    wide: OutputSelection = {"*": {key: sorted(value) for key, value in outputs.items() if value}}
    # Already wide: every file and contract ("*"), whatever the outputs' order.
    if not outputs["*"] or (set(selection) == {"*"} and set(_per_contract(selection["*"])) <= {"", "*"}):
        return None
    return {**input_json, "settings": {**input_json["settings"], "outputSelection": wide}}


def narrowed(output: CompilerOutput, input_json: CompilerInput, crash: str) -> CompilerOutput:
    """The wide compile's `output` cut to `input_json`'s selection, with the note saying why."""
    selection = input_json["settings"]["outputSelection"]
    asked = ", ".join(
        f"{file}:{name}" for file, per_file in sorted(selection.items()) for name in sorted(_per_contract(per_file))
    )
    note = (
        f"solc crashed with the output narrowed to {asked} ({crash[:200]}); "
        "compiled again with every contract selected, as a build does, and that output used"
    )
    return {**output, "contracts": _cut(output, selection), WIDENED: note}


def _cut(output: CompilerOutput, selection: OutputSelection) -> dict[str, dict[str, ContractOutput]]:
    """The contracts of `output` that `selection` selects, by file."""
    return {
        file: kept
        for file, per_file in (output.get("contracts") or {}).items()
        if (kept := {name: c for name, c in per_file.items() if _selected(selection, file, name)})
    }


def _per_contract(per_file: dict[str, list[str]] | list[str] | None) -> dict[str, list[str]]:
    # Only Solidity selects per contract (and only Solidity is widened); Vyper's list names none.
    return per_file if isinstance(per_file, dict) else {}


def _selected(selection: OutputSelection, file: str, name: str) -> bool:
    return any(
        name in _per_contract(selection.get(key)) or "*" in _per_contract(selection.get(key)) for key in (file, "*")
    )


def canonical_key(compiler_version: str, input_json: object) -> str:
    canon = json.dumps([compiler_version, input_json], sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canon.encode()).hexdigest()


def build_key(compiler_version: str, input_json: Mapping[str, Any]) -> str:
    """The key of a build's output, whatever it selected: its output selection changes no code."""
    settings = {k: v for k, v in (input_json.get("settings") or {}).items() if k != "outputSelection"}
    bare = {"language": "Solidity", **input_json, "settings": settings}
    return "build-" + canonical_key(compiler_version.removeprefix("v"), bare)


def selected_part(build: CompilerOutput, input_json: CompilerInput) -> CompilerOutput | None:
    """What a compile of `input_json` selecting some contracts answers, taken from `build` (a compile
    of the same sources and settings); None when the build did not produce all of it."""
    asked = (input_json.get("settings") or {}).get("outputSelection") or {}
    kept, contracts = set(build.get("buildOutputs", ())), _cut(build, asked)
    for file, by_contract in asked.items():
        if not isinstance(by_contract, dict):  # Vyper's form: no build is kept for it
            return None
        found = [built for built_file, built in contracts.items() if file in ("*", built_file)]
        for name, outputs in by_contract.items():
            if not set(outputs) <= kept or not found or (name != "*" and not any(name in c for c in found)):
                return None
    return {"contracts": contracts, "sources": build.get("sources", {}), "errors": build.get("errors", [])}


def _read_parts(contract: ContractOutput) -> ContractOutput:
    """A contract's output as verification reads it (a build's ASTs, docs and source maps are not)."""
    whole: dict[str, Any] = dict(contract)
    evm = whole.get("evm") or {}
    codes = {code: {k: v for k, v in evm[code].items() if k in _CODE_PARTS} for code in _CODES if code in evm}
    return cast("ContractOutput", {**{k: whole[k] for k in ("abi", "metadata") if k in whole}, "evm": codes})


_CODES = ("bytecode", "deployedBytecode")
_CODE_PARTS = ("object", "linkReferences", "immutableReferences")


def default_cache_folder() -> Path:
    """$APE_CONTRACT_VERIFY_COMPILE_CACHE, else contract_verify/compiles in Ape's data folder."""
    named = os.environ.get("APE_CONTRACT_VERIFY_COMPILE_CACHE")
    data = Path(os.environ.get("APE_DATA_FOLDER") or Path.home() / ".ape")
    return Path(named) if named else data / "contract_verify" / "compiles"


_PROCESS_CACHE: CompileCache | None = None
_PROCESS_LOCK = threading.Lock()


def process_cache() -> CompileCache:
    """The process's one compile cache, on disk: a run's pre-check and the local explorer share it,
    and so do later runs and Ape's own builds (`keep_build`), so what was compiled is not again."""
    global _PROCESS_CACHE
    with _PROCESS_LOCK:
        if _PROCESS_CACHE is None:
            try:
                _PROCESS_CACHE = CompileCache(default_cache_folder())
            except OSError:  # a folder that cannot be made: memory only
                _PROCESS_CACHE = CompileCache()
        return _PROCESS_CACHE


class CompileCache:
    """Compiler outputs keyed on (compiler version, canonical input): in memory, optionally on disk.

    Concurrent requests for the same key compile once; the others wait for that result.
    `compiles` counts real compiler runs, `hits` answers from the cache.
    Without `directory`, $APE_CONTRACT_VERIFY_COMPILE_CACHE names one (unset: memory only); the
    test suite sets it so every explorer of a run, child processes too, shares one disk cache.
    """

    def __init__(self, directory: str | Path | None = None, max_entries: int = 256, max_files: int = 1024):
        directory = directory or os.environ.get("APE_CONTRACT_VERIFY_COMPILE_CACHE") or None
        self.directory = Path(directory) if directory else None
        if self.directory:
            self.directory.mkdir(parents=True, exist_ok=True)
        self.max_entries = max_entries
        self.max_files = max_files
        self._memory: dict[str, CompilerOutput] = {}
        self._lock = threading.Lock()
        self._key_locks: dict[str, threading.Lock] = {}
        self.compiles = 0
        self.hits = 0

    def get_or_compile(
        self, compiler_version: str, input_json: CompilerInput, compile: Callable[[], CompilerOutput]
    ) -> CompilerOutput:
        key = canonical_key(compiler_version, input_json)
        with self._lock:
            key_lock = self._key_locks.setdefault(key, threading.Lock())
        with key_lock:
            cached = self._load(key)
            if cached is None and (build := self._load(build_key(compiler_version, input_json))) is not None:
                cached = selected_part(build, input_json)
            if cached is not None:
                with self._lock:
                    self.hits += 1
                return cached
            output = compile()  # CompilerError propagates and is not cached
            with self._lock:
                self.compiles += 1
            self._store(key, output)
            return output

    def keep_build(self, compiler_version: str, input_json: CompilerInput, output: CompilerOutput) -> None:
        """Keep a build's output (a compile someone else ran, such as Ape's) for every later compile
        of the same sources and settings that selects part of what it selected."""
        selection = (input_json.get("settings") or {}).get("outputSelection", {})
        outputs = sorted({name for by in selection.values() if isinstance(by, dict) for name in by.get("*", ())})
        contracts = {
            file: {name: _read_parts(contract) for name, contract in by_name.items()}
            for file, by_name in output.get("contracts", {}).items()
        }
        kept: CompilerOutput = {
            "contracts": contracts,
            "sources": {name: {"id": source.get("id")} for name, source in output.get("sources", {}).items()},
            "errors": output.get("errors", []),
            "buildOutputs": outputs,
        }
        self._store(build_key(compiler_version, input_json), kept)

    def holds_build(self, compiler_version: str, input_json: CompilerInput) -> bool:
        """Whether a kept build (`keep_build`) answers a compile of `input_json`: the same sources and
        settings, and every contract and output it selects."""
        build = self._load(build_key(compiler_version, input_json))
        return build is not None and selected_part(build, input_json) is not None

    def _load(self, key: str) -> CompilerOutput | None:
        with self._lock:
            if key in self._memory or not self.directory:
                return self._memory.get(key)
        try:
            output: CompilerOutput = json.loads((self.directory / f"{key}.json").read_text())
        except (OSError, ValueError):
            return None
        self._remember(key, output)
        return output

    def _store(self, key: str, output: CompilerOutput) -> None:
        self._remember(key, output)
        if self.directory:
            tmp = self.directory / f".{key}.{os.getpid()}.{threading.get_ident()}.tmp"
            tmp.write_text(json.dumps(output))
            os.replace(tmp, self.directory / f"{key}.json")
            self._prune()

    def _prune(self) -> None:
        """Keep the disk's newest `max_files` outputs (a user's cache outlives every run)."""
        assert self.directory is not None
        files = list(self.directory.glob("*.json"))
        if len(files) <= self.max_files:
            return
        files.sort(key=lambda f: f.stat().st_mtime if f.exists() else 0)
        for old in files[: len(files) - self.max_files]:
            old.unlink(missing_ok=True)

    def _remember(self, key: str, output: CompilerOutput) -> None:
        with self._lock:
            self._memory[key] = output
            while len(self._memory) > self.max_entries:
                self._memory.pop(next(iter(self._memory)))


@dataclass(frozen=True)
class ContractInput:
    """One contract of a compile input (`file`'s `name`, in `language`) and how it is compiled: by
    which compiler, through which cache, within which timeout. What the verifier hands the diagnosis
    and the order search."""

    compiler_version: str
    input_json: CompilerInput
    file: str
    name: str
    language: str = "solidity"
    cache: CompileCache | None = None
    timeout: float = DEFAULT_TIMEOUT

    def selected(self) -> CompilerInput:
        """The input asking only for what verification needs of this contract."""
        return with_output_selection(self.input_json, self.file, self.name)

    def output_of(self, output: CompilerOutput | None) -> ContractOutput:
        """This contract's part of a compile's output ({} when it has none)."""
        return (((output or {}).get("contracts") or {}).get(self.file) or {}).get(self.name) or {}

    def compile(self) -> ContractOutput:
        """This contract's part of compiling the input selected for it (`selected`); a
        `CompilerError` when the compiler cannot be had or refuses the sources."""
        return self.output_of(
            compile_input(self.compiler_version, self.selected(), timeout=self.timeout, cache=self.cache)
        )


def compile_input(
    compiler_version: str,
    input_json: CompilerInput,
    *,
    timeout: float = DEFAULT_TIMEOUT,
    cache: CompileCache | None = None,
) -> CompilerOutput:
    """Compile with the right compiler for `input_json["language"]`, through `cache` if given.

    solc 0.7.1 crashes ("Compiled contract not found") on a contract whose base creates another
    when only it is selected; the user's build selected every contract and did not. So an internal
    error of a narrowed compile is retried wide, and its narrowed part returned (and so cached under
    the narrowed input: the next compile is a hit, not a crash)."""
    language = str(input_json.get("language", "Solidity")).lower()
    if language not in ("solidity", "vyper"):
        raise CompilerFailed(f"language {input_json.get('language')!r} is not supported; use Solidity or Vyper")

    def run() -> CompilerOutput:
        if language == "vyper":
            # One seed where the code follows it, so a compile repeats and a seed search starts from it.
            seed = FIRST_SEED if follows_hash_seed(compiler_version) else None
            return compile_vyper_json(compiler_version, input_json, timeout, hash_seed=seed)
        try:
            return compile_standard_json(compiler_version, input_json, timeout)
        except CompilerCrashed as crash:
            wide = widened(input_json)
            if wide is None:
                raise
            try:
                output = compile_standard_json(compiler_version, wide, timeout)
            except CompilerError as err:
                raise CompilerFailed(
                    f"{crash}; and with every contract selected, as a build selects them: {err}"
                ) from err
            output = narrowed(output, input_json, str(crash))
            logger.warning("contract_verify: %s", output[WIDENED])
            return output

    return run() if cache is None else cache.get_or_compile(compiler_version, input_json, run)
