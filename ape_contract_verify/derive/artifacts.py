"""Build artifacts + the chain -> a VerificationRequest.

Everything an explorer needs is derived, not asked for: the compiler version with its commit and
the exact settings come from the manifest Ape wrote; the sources from the compiler plugin's own
import resolution; library addresses and constructor arguments from the chain. Before anything is
submitted, the request is recompiled and compared with the chain (the pre-check), so a submission
that cannot pass is stopped here with the reason, not spent on the explorer.
"""

import json
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator, Optional

from ape_contract_verify.evm import bytecode
from ape_contract_verify.exceptions import ContractVerifyError
from ape_contract_verify.protocol.licenses import code_from_source, license_code
from ape_contract_verify.request import CodeFormat, VerificationRequest
from ape_contract_verify.protocol.values import checksum as _checksum

# What the pre-check needs from the compiler; the manifest keeps none of it.
OUTPUT_SELECTION = [
    "abi",
    "evm.bytecode.object",
    "evm.bytecode.linkReferences",
    "evm.deployedBytecode.object",
    "evm.deployedBytecode.linkReferences",
    "evm.deployedBytecode.immutableReferences",
]
VYPER_OUTPUT_SELECTION = ["abi", "evm.bytecode.object", "evm.deployedBytecode.object"]

# Manifest settings that are host-specific or only shape the output, never the code.
_DROP_SETTINGS = ("outputSelection", "search_paths", "libraries")


_DEPENDENCY_LOCK = threading.RLock()


class ArtifactNotFound(ContractVerifyError):
    """No contract type, or more than one, answers to a name or to an address's code."""


class PrecheckFailed(ContractVerifyError):
    """The derived request would not verify: `field` names the input that differs."""

    def __init__(self, field: str, reason: str):
        self.field = field
        self.reason = reason
        super().__init__(f"Local pre-check failed ({field}): {reason}")


class CreationNotFound(ContractVerifyError):
    pass


@dataclass
class Artifact:
    """A compiled contract type and the project (or dependency) whose settings built it."""

    name: str
    source_id: str
    contract_type: Any
    project: Any
    compiler_name: str  # "solidity" or "vyper"
    compiler_version: str  # as the manifest records it: 0.8.26+commit.8a97fa7a, 0.4.3
    settings: dict
    dependency: Optional[str] = None

    @property
    def qualified_name(self) -> str:
        return f"{self.source_id}:{self.name}"

    @property
    def label(self) -> str:
        return f"{self.dependency}:{self.name}" if self.dependency else self.name

    @property
    def is_vyper(self) -> bool:
        return self.compiler_name.lower() == "vyper"

    @property
    def explorer_compiler_version(self) -> str:
        """The form explorers take: v0.8.26+commit.8a97fa7a, or vyper:0.4.3."""
        version = self.compiler_version
        if self.is_vyper:
            return f"vyper:{version.split('+')[0]}"
        if "+commit." not in version:
            raise ArtifactNotFound(
                f"{self.label}: the manifest records solc {version} without its commit; "
                "recompile with `ape compile --force` so the commit is recorded"
            )
        return version if version.startswith("v") else f"v{version}"

    @property
    def source_path(self) -> Path:
        return Path(self.project.path) / self.source_id


def _artifacts_of(project: Any, dependency: Optional[str] = None) -> Iterator[Artifact]:
    manifest = project.manifest
    types = manifest.contract_types or {}
    for compiler in manifest.compilers or []:
        settings = dict(compiler.settings or {})
        for name in compiler.contractTypes or []:
            ct = types.get(name)
            if ct is None or not ct.source_id:
                continue
            yield Artifact(
                name=name,
                source_id=ct.source_id,
                contract_type=ct,
                project=project,
                compiler_name=compiler.name,
                compiler_version=compiler.version,
                settings=settings,
                dependency=dependency,
            )


def iter_artifacts(project: Any, include_dependencies: bool = True) -> Iterator[Artifact]:
    """Every deployable contract type of the project, then of its dependencies."""
    seen = set()
    for artifact in _artifacts_of(project):
        seen.add(artifact.qualified_name)
        yield artifact
    if not include_dependencies:
        return
    # Ape's dependency manager is not thread-safe: workers must not load packages at once.
    with _DEPENDENCY_LOCK:
        found = []
        for dep in project.dependencies.specified:
            try:
                dep_project = dep.project
                if not dep_project.manifest.contract_types:
                    dep_project.load_contracts()
                found += list(_artifacts_of(dep_project, dependency=dep.name))
            except Exception:  # an uncompilable dependency must not hide the others
                continue
    for artifact in found:
        if artifact.qualified_name not in seen:
            yield artifact


def find_artifact(name: str, project: Any) -> Artifact:
    """`Name`, `path/File.sol:Name` or `dependency:Name`; the project's own types win over dependencies'."""
    candidates = [
        a
        for a in iter_artifacts(project)
        if name in (a.name, a.qualified_name, a.label)
    ]
    own = [a for a in candidates if a.dependency is None]
    if len(own) == 1 or (own and len(candidates) == len(own) == 1):
        return own[0]
    if len(candidates) == 1:
        return candidates[0]
    if not candidates:
        raise ArtifactNotFound(
            f"No contract type named {name!r} in the project or its dependencies; "
            "run `ape compile --include-dependencies`, or check the name"
        )
    choices = ", ".join(sorted({a.label if a.dependency else a.qualified_name for a in candidates}))
    raise ArtifactNotFound(f"{name!r} is ambiguous: {choices}. Pass one of these instead")


# --- sources and settings --------------------------------------------------------------------


def _clean_settings(settings: dict) -> dict:
    return {k: v for k, v in settings.items() if k not in _DROP_SETTINGS}


def standard_input(artifact: Artifact, libraries: Optional[dict] = None) -> dict:
    """The minimal compiler input for this contract: its source, its transitive imports, and
    exactly the settings the manifest recorded (libraries as given, placeholders otherwise)."""
    if artifact.is_vyper:
        return _vyper_input(artifact)
    from ape import compilers

    path = artifact.source_path
    wanted = artifact.compiler_version.split("+")[0]
    with _DEPENDENCY_LOCK:  # resolving remappings may install dependencies
        inputs = _solidity_inputs(compilers.solidity, path, wanted, artifact.project)
    chosen = next((v for k, v in inputs.items() if str(k).split("+")[0] == wanted), None)
    if chosen is None:
        chosen = next(iter(inputs.values()), None)
    if chosen is None:
        raise ArtifactNotFound(f"{artifact.label}: ape-solidity produced no input for {artifact.source_id}")
    settings = _clean_settings(chosen["settings"])
    # The manifest is what was compiled; ape-solidity's fresh settings only supply remappings.
    for key, value in _clean_settings(artifact.settings).items():
        settings[key] = value
    settings["outputSelection"] = {"*": {"*": OUTPUT_SELECTION}}
    if libraries:
        settings["libraries"] = libraries
    return {"language": "Solidity", "sources": chosen["sources"], "settings": settings}


def _solidity_inputs(solidity: Any, path: Path, version: str, project: Any) -> dict:
    """ape-solidity's standard input for `path` and its imports, compiled by `version`.

    The manifest already says which compiler built the contract. Handing that version to
    ape-solidity skips its version selection, which asks every installed solc for its version
    (a process start each; with solc-js, a node.js start each) on every call."""
    try:
        from ape_solidity._models import SourceTree
        from packaging.version import Version

        memo = _IMPORTS.setdefault(str(project.path), _ImportMemo())
        tree = SourceTree.from_source_files([path], project, statements=dict(memo.valid()) or None)
        version_map = {Version(version): {path, *tree.get_imported_paths(path)}}
    except (ImportError, AttributeError, ValueError, TypeError):  # another ape-solidity: its own selection
        return solidity.get_standard_input_json([path], project=project)
    memo.remember(tree.import_statements)
    return solidity.get_standard_input_json_from_version_map(version_map, tree, project=project)


class _ImportMemo:
    """Import statements ape-solidity resolved in one project, shared by every contract of a run:
    the contracts of one project import mostly the same files (OpenZeppelin's), and resolving
    one import costs ape-solidity about 0.5 ms. Dropped whole when any file they came from changed."""

    def __init__(self) -> None:
        self.statements: dict = {}
        self.stamps: dict = {}  # file -> (mtime, size) when its statements were remembered

    def valid(self) -> dict:
        if any(_stamp(path) != stamp for path, stamp in self.stamps.items()):
            self.statements.clear()
            self.stamps.clear()
        return self.statements

    def remember(self, statements: dict) -> None:
        fresh = set(statements) - set(self.statements)
        _close(statements, fresh)
        for key in fresh:
            if (stamp := _stamp(key[0])) is not None:
                self.stamps[key[0]] = stamp
                self.statements[key] = statements[key]


_IMPORTS: dict[str, _ImportMemo] = {}  # by project path


def _stamp(path: Any) -> Optional[tuple[int, int]]:
    try:
        stat = Path(path).stat()
    except OSError:
        return None
    return stat.st_mtime_ns, stat.st_size


def _close(statements: dict, fresh: set) -> None:
    """Make each fresh entry hold everything its file imports, transitively.

    ape-solidity guarantees that only for the file it was asked about: inside an import cycle
    (OpenZeppelin's TransparentUpgradeableProxy <-> ProxyAdmin) a file's entry holds what the
    cycle's first file had gathered when it got there. Entries remembered for later calls must
    be whole, or a later contract would miss sources."""
    by_path = {key[0]: key for key in statements}
    changed = True
    while changed:
        changed = False
        for key in fresh:
            mine = statements[key]
            for statement in list(mine):
                sub = by_path.get(statement.path) if statement.path else None
                if sub is not None and sub != key and not statements[sub] <= mine:
                    mine |= statements[sub]
                    changed = True


# Vyper's own interfaces (`from ethereum.ercs import IERC20`): the compiler has them, never send them.
_VYPER_BUILTIN_PREFIXES = ("ethereum/", "vyper/")


def _vyper_input(artifact: Artifact) -> dict:
    """The contract, every module and interface it imports (transitively), and the settings
    ape-vyper compiled with, minus its host-specific `search_paths`."""
    from ape import compilers

    root = Path(artifact.project.path)
    closure, todo = [], [artifact.source_id]
    while todo:
        source_id = todo.pop()
        if source_id in closure:
            continue
        closure.append(source_id)
        file = _vyper_source_file(root, source_id)
        if file is None or file.suffix == ".json":
            continue
        with _DEPENDENCY_LOCK:
            imports = compilers.vyper.get_imports([file], project=artifact.project)
        todo.extend(imports.get(source_id, []))
    sources: dict[str, dict] = {}
    interfaces: dict[str, dict] = {}
    for source_id in sorted(closure):
        if source_id.startswith(_VYPER_BUILTIN_PREFIXES) and source_id.endswith(".json"):
            continue
        file = _vyper_source_file(root, source_id)
        if file is None:
            raise ArtifactNotFound(
                f"{artifact.label}: {artifact.source_id} imports {source_id}, which is neither in the "
                "project nor in an installed Python package; install it, or vendor it into contracts/"
            )
        text = file.read_text(encoding="utf8")
        if file.suffix == ".json":  # an ABI file imported as an interface
            abi = json.loads(text)
            interfaces[source_id] = {"abi": abi.get("abi", abi) if isinstance(abi, dict) else abi}
        else:
            sources[source_id] = {"content": text}
    settings = _clean_settings(artifact.settings)
    settings["outputSelection"] = {artifact.source_id: VYPER_OUTPUT_SELECTION}
    _settings_from_pragmas(settings, sources.get(artifact.source_id, {}).get("content", ""))
    result = {"language": "Vyper", "sources": sources, "settings": settings}
    if interfaces:
        result["interfaces"] = interfaces
    return result


def _settings_from_pragmas(settings: dict, content: str) -> None:
    """The compiler obeys the contract's pragmas; ape-vyper records them only when written
    `#pragma` (no space), so `# pragma optimize codesize` leaves "gas" in the manifest, and
    vyper-json refuses settings that conflict with a pragma. The pragma is the truth."""
    from ape_contract_verify.engine import vyper_settings

    single = {"sources": {"f": {"content": content}}, "settings": {}}
    mode = vyper_settings.optimize_mode(single, "f")
    if vyper_settings.has_optimize_pragma(content):
        settings["optimize"] = mode
    evm = vyper_settings.evm_version(single)
    if evm != "default":
        settings["evmVersion"] = evm


def _vyper_source_file(root: Path, source_id: str) -> Optional[Path]:
    """A project file, or a module of an installed package (snekmate-style imports)."""
    import sys

    for base in (root, *(Path(p) for p in sys.path if p and "site-packages" in p)):
        file = base / source_id
        if file.suffix in (".vy", ".vyi", ".json") and file.is_file():
            return file
    return None


def license_of(artifact: Artifact, override: Optional[str] = None) -> int:
    if override:
        return license_code(override)
    source = artifact.source_path.read_text(encoding="utf8") if artifact.source_path.is_file() else ""
    if artifact.is_vyper:
        for line in source.splitlines()[:20]:
            if "@license" in line:
                spdx = line.split("@license", 1)[1].strip()
                return code_from_source(f"SPDX-License-Identifier: {spdx}")
    return code_from_source(source)


# --- the chain ---------------------------------------------------------------------------------


@dataclass
class OnChain:
    runtime: bytes
    creation_input: Optional[bytes]
    tx_hash: Optional[str] = None
    factory: bool = False


def read_chain(address: str, chain_reader: Any = None) -> OnChain:
    """Runtime code and the creation input, through the active Ape provider by default."""
    if chain_reader is None:
        from ape import chain

        from ape_contract_verify.evm.chain import ApeProviderChain

        chain_reader = ApeProviderChain(chain.provider)
    runtime = bytes(chain_reader.get_code(address))
    creation = chain_reader.find_creation(address) if runtime else None
    return OnChain(
        runtime=runtime,
        creation_input=bytes(creation.input) if creation else None,
        tx_hash=getattr(creation, "tx_hash", None),
        factory=bool(getattr(creation, "factory", False)),
    )


# --- derivation --------------------------------------------------------------------------------


@dataclass
class Derivation:
    """A request ready to submit, and what was learnt on the way."""

    request: VerificationRequest
    artifact: Artifact
    match: Optional[str] = None  # the pre-check's "full"/"partial"; None when skipped
    warnings: list[str] = field(default_factory=list)
    compile_input: dict = field(default_factory=dict)
    timings: dict = field(default_factory=dict)


def _compile(artifact: Artifact, input_json: dict, cache: Any) -> dict:
    from ape_contract_verify.engine.compilers import compile_input

    output = compile_input(artifact.compiler_version, input_json, cache=cache)
    try:
        return output["contracts"][artifact.source_id][artifact.name]
    except KeyError:
        raise ArtifactNotFound(
            f"{artifact.label}: the compiler output has no {artifact.qualified_name}"
        ) from None


def _unlinked(obj: str) -> bytes:
    # Placeholders (__$…$__) are 40 hex chars standing for an address: zeros keep the length.
    import re

    return bytes.fromhex(re.sub(r"__.{38}", "0" * 40, obj.removeprefix("0x")))


def _libraries_from_chain(compiled: dict, runtime: bytes, creation: Optional[bytes]) -> dict:
    """{file: {library: address}} read at the link positions of the deployed code."""
    libraries: dict[str, dict[str, str]] = {}
    for which, code in (("deployedBytecode", runtime), ("bytecode", creation)):
        refs = compiled["evm"][which].get("linkReferences") or {}
        if not code:
            continue
        for pos in bytecode.link_positions(refs):
            chunk = code[pos.start : pos.start + pos.length]
            if len(chunk) == pos.length:
                libraries.setdefault(pos.file, {}).setdefault(pos.library, "0x" + chunk.hex())
    return libraries


def derive(
    artifact: Artifact,
    address: str,
    *,
    on_chain: Optional[OnChain] = None,
    chain_reader: Any = None,
    code_format: str = "standard-json",
    license: Optional[str] = None,
    constructor_args: Optional[str] = None,
    check: bool = True,
    cache: Any = None,
    manifest_libraries: Optional[dict] = None,
) -> Derivation:
    """Everything verifysourcecode needs for `artifact` at `address`, checked against the chain."""
    timings: dict[str, float] = {}
    t0 = time.perf_counter()
    address = _checksum(address)
    chain_state = on_chain or read_chain(address, chain_reader)
    if not chain_state.runtime:
        raise PrecheckFailed("address", f"no contract code at {address} on this network")
    timings["chain"] = time.perf_counter() - t0

    t0 = time.perf_counter()
    input_json = standard_input(artifact)
    timings["input"] = time.perf_counter() - t0
    warnings: list[str] = []

    t0 = time.perf_counter()
    compiled = _compile(artifact, input_json, cache)
    timings["compile"] = time.perf_counter() - t0

    t0 = time.perf_counter()
    libraries = {} if artifact.is_vyper else _libraries_from_chain(
        compiled, chain_state.runtime, chain_state.creation_input
    )
    stale = manifest_libraries if manifest_libraries is not None else artifact.settings.get("libraries") or {}
    for file, libs in libraries.items():
        for lib, addr in libs.items():
            recorded = (stale.get(file) or {}).get(lib)
            if recorded and recorded.lower() != addr.lower():
                warnings.append(
                    f"library {lib}: the manifest records {recorded}, the chain uses {addr}; using the chain's"
                )
            libs[lib] = _checksum(addr)

    if libraries:
        # Compile as the submission will: linked through settings.libraries (part of the metadata).
        input_json = {**input_json, "settings": {**input_json["settings"], "libraries": libraries}}
        compiled = _compile(artifact, input_json, cache)

    creation_code = _unlinked(compiled["evm"]["bytecode"]["object"])
    derived_args = (
        bytecode.split_constructor_args(chain_state.creation_input, creation_code)
        if chain_state.creation_input
        else None
    )
    args = _resolve_constructor_args(artifact, constructor_args, derived_args, chain_state)
    timings["derive"] = time.perf_counter() - t0

    match = None
    if check:
        t0 = time.perf_counter()
        match = precheck(artifact, input_json, compiled, chain_state, args, libraries, cache)
        if match == "partial":
            input_json, match = _upgrade_partial(artifact, input_json, chain_state, {} if libraries else stale, cache)
        timings["precheck"] = time.perf_counter() - t0

    request = _build_request(artifact, address, input_json, libraries, args, code_format, license, warnings)
    return Derivation(
        request=request,
        artifact=artifact,
        match=match,
        warnings=warnings,
        compile_input=input_json,
        timings=timings,
    )


def _upgrade_partial(
    artifact: Artifact, input_json: dict, chain_state: OnChain, recorded_libraries: dict, cache: Any
) -> tuple[dict, str]:
    """Settings that change only the metadata, which the minimal input may lack: ape-solidity
    compiles a whole group at once, so every contract of it carries the group's remappings and,
    after `add_library`, its libraries, even when it uses neither. Try them; keep what makes the
    match full."""
    sent = sorted(input_json["settings"].get("remappings") or [])
    remapping_options = []
    for option in (_project_remappings(artifact), []):  # the whole group's, or none at all
        if option != sent and option not in remapping_options:
            remapping_options.append(option)
    patches: list[dict] = [{"remappings": option} for option in remapping_options]
    if recorded_libraries and not input_json["settings"].get("libraries"):
        libraries = {"libraries": recorded_libraries}
        patches += [libraries] + [{**patch, **libraries} for patch in patches]
    for patch in patches:
        candidate = json.loads(json.dumps(input_json))
        candidate["settings"].update(patch)
        try:
            compiled = _compile(artifact, candidate, cache)
        except Exception:
            continue
        if _compare_runtime(artifact, compiled, chain_state.runtime).match == "full":
            return candidate, "full"
    return input_json, "partial"


def _project_remappings(artifact: Artifact) -> list[str]:
    """The remappings ape-solidity uses when it compiles the artifact's whole group: those its
    sources use, not every dependency the project has."""
    if artifact.is_vyper:
        return []
    try:
        full = _group_input(artifact)
    except Exception:
        return []
    return sorted((full or {}).get("settings", {}).get("remappings") or [])


def _group_input(artifact: Artifact) -> Optional[dict]:
    """ape-solidity's input for every source of the artifact's project compiled by its compiler."""
    from ape import compilers

    project = artifact.project
    paths = [
        Path(project.path) / source_id
        for source_id in (project.manifest.sources or {})
        if source_id.endswith(".sol") and (Path(project.path) / source_id).is_file()
    ]
    wanted = artifact.compiler_version.split("+")[0]
    with _DEPENDENCY_LOCK:
        inputs = compilers.solidity.get_standard_input_json(paths, project=project)
    return next((v for k, v in inputs.items() if str(k).split("+")[0] == wanted), None)


def _resolve_constructor_args(
    artifact: Artifact, given: Optional[str], derived: Optional[str], chain_state: OnChain
) -> str:
    if given is None:
        if derived is None:
            if _constructor_inputs(artifact):
                raise PrecheckFailed(
                    "constructor arguments",
                    "the creation transaction of this contract was not found (a factory deployment on a node "
                    "without traces?). Pass them with --constructor-args, as values or ABI-encoded hex",
                )
            return ""
        return derived
    encoded = encode_constructor_args(artifact, given)
    if derived is not None and encoded.lower() != derived.lower():
        raise PrecheckFailed(
            "constructor arguments",
            f"--constructor-args differ from the deployment's: {explain_args(artifact, encoded, derived)}; "
            "drop --constructor-args to use the chain's",
        )
    return encoded


def explain_args(artifact: Artifact, given: str, deployed: str) -> str:
    """Which argument differs, decoded with the ABI when both sides decode."""
    inputs = _constructor_inputs(artifact)
    try:
        from eth_abi import decode

        types = [i.canonical_type if hasattr(i, "canonical_type") else i.type for i in inputs]
        ours = decode(types, bytes.fromhex(given))
        theirs = decode(types, bytes.fromhex(deployed))
    except Exception:
        return f"0x{given[:64]}… against 0x{deployed[:64]}…"
    diffs = [
        f"{i.name or f'#{n}'} ({t}): given {_show(a)}, deployed {_show(b)}"
        for n, (i, t, a, b) in enumerate(zip(inputs, types, ours, theirs))
        if a != b
    ]
    return "; ".join(diffs) or "same values, different encoding"


def _show(value: Any) -> str:
    if isinstance(value, (bytes, bytearray)):
        return "0x" + bytes(value).hex()
    text = repr(value) if not isinstance(value, (list, tuple)) else "[" + ", ".join(_show(v) for v in value) + "]"
    return text if len(text) <= 80 else text[:77] + "..."


def _constructor_inputs(artifact: Artifact) -> list:
    for item in artifact.contract_type.abi:
        if getattr(item, "type", None) == "constructor":
            return list(item.inputs)
    return []


def encode_constructor_args(artifact: Artifact, given: str) -> str:
    """Raw hex (with or without 0x) as is, or comma-separated / JSON-list values encoded with the ABI."""
    text = given.strip()
    hex_text = text.removeprefix("0x")
    inputs = _constructor_inputs(artifact)
    if text.startswith("0x") or (hex_text and all(c in "0123456789abcdefABCDEF" for c in hex_text) and len(hex_text) % 64 == 0):
        if len(hex_text) % 2:
            raise PrecheckFailed("constructor arguments", "hex constructor arguments must have an even length")
        return hex_text.lower()
    from eth_abi import encode

    try:
        values = json.loads(text if text.startswith("[") else f"[{text}]")
    except json.JSONDecodeError:
        values = [v.strip() for v in text.split(",")] if text else []
    if len(values) != len(inputs):
        signature = ", ".join(f"{i.type} {i.name}" for i in inputs) or "none"
        raise PrecheckFailed(
            "constructor arguments",
            f"{len(values)} value(s) given, the constructor takes {len(inputs)} ({signature})",
        )
    types = [i.canonical_type if hasattr(i, "canonical_type") else i.type for i in inputs]
    try:
        return encode(types, [_coerce(t, v) for t, v in zip(types, values)]).hex()
    except Exception as err:
        raise PrecheckFailed("constructor arguments", f"cannot encode {values} as ({', '.join(types)}): {err}")


def _coerce(abi_type: str, value: Any) -> Any:
    if abi_type.endswith("]") and isinstance(value, list):
        inner = abi_type[: abi_type.rindex("[")]
        return [_coerce(inner, v) for v in value]
    if abi_type.startswith(("uint", "int")) and isinstance(value, str):
        return int(value, 0)
    if abi_type == "bool" and isinstance(value, str):
        return value.lower() in ("1", "true", "yes")
    if abi_type.startswith("bytes") and isinstance(value, str):
        return bytes.fromhex(value.removeprefix("0x"))
    if abi_type == "address" and isinstance(value, str):
        return _checksum(value)
    return value


# --- the pre-check ----------------------------------------------------------------------------


def precheck(
    artifact: Artifact,
    input_json: dict,
    compiled: dict,
    chain_state: OnChain,
    args: str,
    libraries: dict,
    cache: Any = None,
) -> str:
    """Compare the recompiled contract with the chain; return "full"/"partial" or raise PrecheckFailed."""
    runtime_cmp = _compare_runtime(artifact, compiled, chain_state.runtime)
    if not runtime_cmp.matches:
        raise diagnose(artifact, input_json, chain_state, runtime_cmp, cache)
    match = runtime_cmp.match
    if chain_state.creation_input:
        creation = _unlinked(compiled["evm"]["bytecode"]["object"])
        on_chain_creation = chain_state.creation_input[: len(creation)]
        refs = compiled["evm"]["bytecode"].get("linkReferences")
        creation_cmp = bytecode.compare(creation, on_chain_creation, link_references=refs)
        if not creation_cmp.matches:
            raise PrecheckFailed(
                "source",
                f"the creation code differs from the deployment at byte {creation_cmp.offset}",
            )
        chain_args = chain_state.creation_input[len(creation):].hex()
        if chain_args.lower() != args.lower():
            raise PrecheckFailed(
                "constructor arguments",
                f"the submission's differ from the deployment's: {explain_args(artifact, args, chain_args)}",
            )
        # Vyper keeps its metadata (with the sources' integrity hash) in the initcode only.
        if creation_cmp.match == "partial":
            match = "partial"
    return match


def _compare_runtime(artifact: Artifact, compiled: dict, runtime: bytes) -> "bytecode.Comparison":
    deployed = compiled["evm"]["deployedBytecode"]
    expected = _unlinked(deployed["object"])
    trailing = 0
    if artifact.is_vyper:
        layout = bytecode.vyper_layout(_unlinked(compiled["evm"]["bytecode"]["object"]))
        trailing = layout.immutable_size if layout else 0
    return bytecode.compare(
        expected,
        runtime,
        immutable_references=deployed.get("immutableReferences"),
        link_references=deployed.get("linkReferences"),
        trailing_immutables=trailing,
    )


# Solidity settings worth trying, one change at a time, when the code differs (Vyper's: vyper_settings).
def _variants(settings: dict, is_vyper: bool) -> Iterator[tuple[str, str, dict]]:
    optimizer = dict(settings.get("optimizer") or {"enabled": False, "runs": 200})
    runs = optimizer.get("runs", 200)
    for candidate in (200, 10000, 1000, 1, 1_000_000):
        if candidate != runs:
            yield "optimizer runs", f"runs {candidate}", {**settings, "optimizer": {**optimizer, "runs": candidate}}
    yield (
        "optimizer",
        f"optimizer {'off' if optimizer.get('enabled') else 'on'}",
        {**settings, "optimizer": {**optimizer, "enabled": not optimizer.get("enabled")}},
    )
    yield "viaIR", f"viaIR {not settings.get('viaIR')}", {**settings, "viaIR": not settings.get("viaIR")}
    for evm in ("cancun", "paris", "shanghai", "london", "prague"):
        if settings.get("evmVersion") != evm:
            yield "evmVersion", f"evmVersion {evm}", {**settings, "evmVersion": evm}


def diagnose(
    artifact: Artifact,
    input_json: dict,
    chain_state: OnChain,
    comparison: "bytecode.Comparison",
    cache: Any = None,
    budget_seconds: float = 30.0,
) -> PrecheckFailed:
    """Name the input that differs: the compiler (from the chain's metadata), a setting (by
    recompiling with one change at a time, within a time budget), or else the source."""
    chain_meta = bytecode.tail_metadata(chain_state.runtime)
    if chain_meta is None and chain_state.creation_input:
        # Vyper keeps its metadata in the initcode only: the last blob before the arguments.
        segments = bytecode.metadata_segments(chain_state.creation_input)
        chain_meta = segments[-1] if segments else None
    chain_compiler = chain_meta.compiler if chain_meta else None
    ours = artifact.compiler_version.split("+")[0]
    if chain_compiler and chain_compiler[1] and chain_compiler[1] != ours:
        return PrecheckFailed(
            "compiler",
            f"the deployed code was built by {chain_compiler[0]} {chain_compiler[1]}, "
            f"the artifact by {artifact.compiler_name} {ours}",
        )
    where = f"at byte {comparison.offset}" if comparison.offset is not None else ""
    deadline = time.monotonic() + budget_seconds
    if artifact.is_vyper:
        from ape_contract_verify.engine import vyper_settings

        # Pragmas carry Vyper settings too: each variant changes both, or the compiler refuses.
        candidates = list(vyper_settings.variants(input_json, artifact.source_id))
        described = vyper_settings.describe(input_json, artifact.source_id)
        fix = "Fix the `# pragma optimize` / `# pragma evm-version` line or the vyper settings in ape-config.yaml"
    else:
        candidates = [
            (field_name, description, {**input_json, "settings": settings})
            for field_name, description, settings in _variants(input_json["settings"], False)
        ]
        described = _describe(input_json["settings"], False)
        fix = "Fix the compiler settings in ape-config.yaml"
    for field_name, description, candidate in candidates:
        if time.monotonic() > deadline:
            break
        try:
            compiled = _compile(artifact, candidate, cache)
        except Exception:
            continue
        if _compare_runtime(artifact, compiled, chain_state.runtime).matches:
            return PrecheckFailed(
                field_name,
                f"the deployed code matches {description}, not the artifact's settings "
                f"({described}); the runtime code differs {where}. "
                f"{fix} to what was deployed and recompile",
            )
    return PrecheckFailed(
        "source",
        f"the recompiled runtime code differs from the deployed code {where} "
        f"(lengths {comparison.expected_length} and {comparison.actual_length}), and no single setting "
        "change explains it: the source was likely edited after deployment",
    )


def _describe(settings: dict, is_vyper: bool) -> str:
    optimizer = settings.get("optimizer") or {}
    return (
        f"optimizer {'on' if optimizer.get('enabled') else 'off'}, runs {optimizer.get('runs', 200)}, "
        f"viaIR {bool(settings.get('viaIR'))}, evmVersion {settings.get('evmVersion', 'default')}"
    )


# --- the request -------------------------------------------------------------------------------


def _build_request(
    artifact: Artifact,
    address: str,
    input_json: dict,
    libraries: dict,
    args: str,
    code_format: str,
    license: Optional[str],
    warnings: list[str],
) -> VerificationRequest:
    settings = input_json["settings"]
    submitted = json.loads(json.dumps(input_json))
    # Explorers compile what they are given; ask only for what they compare.
    submitted["settings"]["outputSelection"] = {"*": {"*": ["abi", "evm.bytecode", "evm.deployedBytecode", "metadata"]}}
    if artifact.is_vyper:
        submitted["settings"]["outputSelection"] = {artifact.source_id: VYPER_OUTPUT_SELECTION}
        return VerificationRequest(
            address=address,
            contract_name=artifact.qualified_name,
            source_code=json.dumps(submitted),
            code_format=CodeFormat.VYPER_JSON,
            compiler_version=artifact.explorer_compiler_version,
            optimization_used=settings.get("optimize", "gas") != "none",
            evm_version=settings.get("evmVersion"),
            constructor_arguments=args,
            license_type=license_of(artifact, license),
        )
    if libraries:
        submitted["settings"]["libraries"] = libraries
    optimizer = settings.get("optimizer") or {}
    flat_libraries = {lib: addr for libs in libraries.values() for lib, addr in libs.items()}
    common = dict(
        address=address,
        compiler_version=artifact.explorer_compiler_version,
        optimization_used=bool(optimizer.get("enabled")),
        runs=int(optimizer.get("runs", 200)),
        evm_version=settings.get("evmVersion"),
        via_ir=bool(settings.get("viaIR")) if "viaIR" in settings else None,
        constructor_arguments=args,
        license_type=license_of(artifact, license),
        libraries=flat_libraries,
    )
    if code_format == "flatten":
        from ape_contract_verify.derive.flatten import flatten

        sources = {k: v["content"] for k, v in input_json["sources"].items()}
        flat = flatten(artifact.source_id, sources, settings.get("remappings") or ())
        for key in ("metadata", "debug"):
            if settings.get(key):
                warnings.append(f"settings.{key} cannot be expressed in a single-file submission")
        return VerificationRequest(
            contract_name=artifact.name,
            source_code=flat.source,
            code_format=CodeFormat.SINGLE_FILE,
            **common,
        )
    return VerificationRequest(
        contract_name=artifact.qualified_name,
        source_code=json.dumps(submitted),
        code_format=CodeFormat.STANDARD_JSON,
        **common,
    )


def with_full_project_input(derivation: Derivation) -> Optional[VerificationRequest]:
    """The same request with every source of the artifact's compile group (what ape-solidity
    compiled together), or None when that is what was sent already."""
    import dataclasses

    if derivation.artifact.is_vyper:
        return None
    full = _group_input(derivation.artifact)
    sent = json.loads(derivation.request.source_code)
    if full is None or set(full["sources"]) <= set(sent["sources"]):
        return None
    sent["sources"] = {**full["sources"], **sent["sources"]}
    return dataclasses.replace(derivation.request, source_code=json.dumps(sent))


# --- address-only mode ---------------------------------------------------------------------------


def identify(address: str, project: Any, runtime: Optional[bytes] = None) -> Artifact:
    """The one contract type whose runtime code matches `address`'s, metadata, immutables and
    link positions aside. Uses the manifest's bytecode, so it needs no compile."""
    if runtime is None:
        runtime = read_chain(address).runtime
    if not runtime:
        raise ArtifactNotFound(f"no contract code at {address} on this network")
    matches = [a for a in iter_artifacts(project) if _same_shape(a, runtime)]
    if len(matches) == 1:
        return matches[0]
    if not matches:
        raise ArtifactNotFound(
            f"the code at {address} matches no contract type of the project or its dependencies; "
            "name the contract type: `ape verify contract NAME ADDRESS`"
        )
    names = ", ".join(a.label for a in matches)
    raise ArtifactNotFound(f"the code at {address} matches several contract types ({names}); name one")


def _same_shape(artifact: Artifact, runtime: bytes) -> bool:
    code = artifact.contract_type.runtime_bytecode
    text = (code.bytecode if code else None) or ""
    if not text or text == "0x":
        return False
    expected = _unlinked(text)
    if artifact.is_vyper and len(runtime) > len(expected):
        runtime = runtime[: len(expected)]  # Vyper appends immutables after the runtime
    if len(expected) != len(runtime):
        return False
    exp = bytecode.strip_metadata(expected)
    act = runtime[: len(exp)]
    differing = [i for i in range(len(exp)) if exp[i] != act[i]]
    return _explained(exp, differing)


def _explained(code: bytes, cluster: list[int]) -> bool:
    """A difference the artifact can't know: an immutable (zeros in the artifact) or a library
    address (the 20 bytes after a PUSH20, stale or blank in the artifact)."""
    return all(code[i] == 0 or _in_push20(code, i) for i in cluster)


def _in_push20(code: bytes, index: int) -> bool:
    return any(code[start - 1] == 0x73 for start in range(max(1, index - 19), index + 1))


def libraries_in_manifest(project: Any) -> dict:
    """ape-solidity keeps linked library addresses in the manifest settings, often stale."""
    found: dict = {}
    for compiler in project.manifest.compilers or []:
        for file, libs in ((compiler.settings or {}).get("libraries") or {}).items():
            found.setdefault(file, {}).update(libs)
    return found


def describe_request(request: VerificationRequest) -> dict:
    """A loggable summary (no source text)."""
    return {
        "address": request.address,
        "contract": request.contract_name,
        "format": request.code_format.value,
        "compiler": request.compiler_version,
        "optimizer": request.optimization_used,
        "runs": request.runs,
        "evmVersion": request.evm_version or "default",
        "viaIR": request.via_ir,
        "libraries": request.libraries,
        "constructorArguments": request.constructor_arguments,
        "licenseType": request.license_type,
    }
