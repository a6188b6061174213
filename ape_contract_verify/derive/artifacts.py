"""The project's compiled contract types: find one by name, or by the code at an address; and
the compiler input each was built from.

An `Artifact` is a contract type with the project (or dependency) whose manifest recorded the
compiler and settings that built it. Identifying an address compares shapes only (the manifest's
bytecode, no compile); whether the artifact really verifies is the engine's question. Its input
(`standard_input`, and its compile group's, `group_input`) is read from ape-solidity and ape-vyper.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeAlias, cast

from ape_contract_verify.derive.ape_gate import GATE
from ape_contract_verify.evm import blueprint, bytecode
from ape_contract_verify.exceptions import ContractVerifyError
from ape_contract_verify.logs import get_logger
from ape_contract_verify.protocol.compiler_version import CompilerVersion, InvalidCompilerVersion, Language

if TYPE_CHECKING:
    from ape.managers.project import ProjectManager
    from ape_solidity._models import ImportStatementMetadata
    from ape_solidity.compiler import SolidityCompiler
    from ethpm_types import ContractType
    from ethpm_types.contract_type import Bytecode
    from ethpm_types.source import Compiler
    from packaging.version import Version

    from ape_contract_verify.engine.compilers import CompileCache
    from ape_contract_verify.protocol.inputs import CompilerInput

    # ape-solidity's resolved imports: (file, import text) -> what it names.
    ImportStatements: TypeAlias = dict[tuple[Path, str], set[ImportStatementMetadata]]

logger = get_logger()

# A compiler's standard JSON, input or output, or a part of it (a source entry, an ABI item): the
# layout solc and vyper document, read here by deep keys, where a missing key is the compiler's
# answer (a KeyError caught where it means something); `Any`: JsonValue would need a narrowing
# at every one of those keys.
CompilerJson: TypeAlias = dict[str, Any]
# settings.libraries: addresses by source file, then by library name.
Libraries: TypeAlias = dict[str, dict[str, str]]
# A file's (mtime, size) by its name, or None when it cannot be read: a project state, for memos.
Stamps: TypeAlias = tuple[tuple[str, tuple[int, int] | None], ...]

# Manifest settings that are host-specific or only shape the output, never the code.
DROP_SETTINGS = ("outputSelection", "search_paths", "libraries")


class ArtifactNotFound(ContractVerifyError):
    """No contract type, or more than one, answers to a name or to an address's code."""


@dataclass
class Artifact:
    """A compiled contract type and the project (or dependency) whose settings built it."""

    name: str
    source_id: str
    contract_type: ContractType
    project: ProjectManager
    compiler_name: str  # "solidity" or "vyper"
    compiler_version: str  # as the manifest records it: 0.8.26+commit.8a97fa7a, 0.4.3
    settings: CompilerJson
    dependency: str | None = None
    # What was read from Ape's managers for it, by the thread that could (`prepare`).
    resolved: dict[str, CompilerJson | None] = field(default_factory=dict, compare=False, repr=False)

    @property
    def qualified_name(self) -> str:
        return f"{self.source_id}:{self.name}"

    @property
    def label(self) -> str:
        return f"{self.dependency}:{self.name}" if self.dependency else self.name

    @property
    def reference(self) -> str:
        """The name no other type answers to: `path/File.sol:Name`, `dependency:path/File.sol:Name`."""
        return f"{self.dependency}:{self.qualified_name}" if self.dependency else self.qualified_name

    @property
    def is_vyper(self) -> bool:
        return self.compiler_name.lower() == "vyper"

    @property
    def version(self) -> CompilerVersion:
        """The manifest's compiler version, parsed (its commit may be missing); ArtifactNotFound
        saying to recompile when it is no version."""
        language: Language = "vyper" if self.is_vyper else "solidity"
        try:
            return CompilerVersion.parse(self.compiler_version, language)
        except InvalidCompilerVersion:
            raise ArtifactNotFound(
                f"{self.label}: the manifest records {self.compiler_version!r}, which is no {language} "
                "compiler version; recompile with `ape compile --force`"
            ) from None

    @property
    def explorer_compiler_version(self) -> str:
        """The form explorers take: v0.8.26+commit.8a97fa7a, or vyper:0.4.3."""
        parsed = self.version
        if not self.is_vyper and not parsed.commit:
            raise ArtifactNotFound(
                f"{self.label}: the manifest records solc {self.compiler_version} without its commit; "
                "recompile with `ape compile --force` so the commit is recorded"
            )
        return parsed.form

    @property
    def source_path(self) -> Path:
        return Path(self.project.path) / self.source_id


def input_for(inputs: Mapping[Any, CompilerJson], version: CompilerVersion) -> CompilerJson | None:
    """The one of ape-solidity's inputs that `version` compiles, None if none. They are keyed by
    the solc it chose for each group (packaging's `Version`, a commit at most, never a nightly), so
    the number decides: a nightly's group is its release's."""
    for key, value in inputs.items():
        try:
            if CompilerVersion.parse(str(key), "solidity").version == version.version:
                return value
        except InvalidCompilerVersion:
            continue  # no solc version: no group of a compiler we run
    return None


def stamp(path: str | Path) -> tuple[int, int] | None:
    try:
        stat = Path(path).stat()
    except OSError:
        return None
    return stat.st_mtime_ns, stat.st_size


def manifest_input(chosen: CompilerJson, recorded: CompilerJson, project: ProjectManager) -> CompilerJson:
    """ape-solidity's input `chosen` with the settings the manifest `recorded` (what was compiled:
    ape-solidity's fresh settings only supply remappings), host-specific ones dropped, its sources
    named and closed over their imports as the project's compile read them."""
    from ape_contract_verify.engine.compilers import SOLIDITY_OUTPUTS

    settings = {k: v for k, v in {**chosen["settings"], **recorded}.items() if k not in DROP_SETTINGS}
    settings["outputSelection"] = {"*": {"*": SOLIDITY_OUTPUTS}}
    sources = project_source_names(chosen["sources"], project)
    close_over_imports(sources, settings.get("remappings") or [], Path(project.path))
    return {"language": "Solidity", "sources": sources, "settings": settings}


def project_source_names(sources: CompilerJson, project: ProjectManager) -> CompilerJson:
    """`sources` keyed as the project's compile named them. When the contracts folder is a link
    (to an npm package's sources, say), ape-solidity names the files a contract imports by the
    link's target (`../node_modules/pkg/contracts/X.sol`), where the compile that was deployed
    read them as `contracts/X.sol`: their imports resolve only under those names, and the
    metadata hash holds them."""
    rename = _linked_folder_names(project)
    if rename is None:
        return sources
    named: CompilerJson = {}
    for key, value in sources.items():
        named.setdefault(rename(key), value)  # a file given under both names is one
    return named


def _linked_folder_names(project: ProjectManager) -> Callable[[str], str] | None:
    """When the contracts folder is a link: the function that names a file reached through the
    link's target as `contracts/…`; None otherwise (nothing to rename)."""
    try:
        root = Path(project.path).absolute()
        folder = Path(project.contracts_folder).absolute()
        real = folder.resolve()
        prefix = folder.relative_to(root)
    except (AttributeError, OSError, ValueError, TypeError):  # no contracts folder under the project
        return None
    if real == folder:
        return None

    def rename(name: str) -> str:
        if not (name.startswith("..") or Path(name).is_absolute()):
            return name  # already a name under the project
        try:
            return (prefix / (root / name).resolve().relative_to(real)).as_posix()
        except (OSError, ValueError):
            return name

    return rename


def _artifacts_of(project: ProjectManager, dependency: str | None = None) -> Iterator[Artifact]:
    manifest = project.manifest
    types = manifest.contract_types or {}
    # ape-solidity records a type only imported through a linked contracts folder under the
    # link's target; it was compiled, and is found, as contracts/….
    rename = _linked_folder_names(project) if dependency is None else None
    for compiler in manifest.compilers or []:
        settings = dict(compiler.settings or {})
        for name in compiler.contractTypes or []:
            ct = types.get(name)
            if ct is None or not ct.source_id:
                continue
            source_id = rename(ct.source_id) if rename else ct.source_id
            yield Artifact(name, source_id, ct, project, compiler.name, compiler.version, settings, dependency)


@GATE.entered()  # reading a dependency's project may install it
def iter_artifacts(
    project: ProjectManager,
    include_dependencies: bool = True,
    compile_dependencies: bool = True,
    uncompiled: list[str] | None = None,
) -> list[Artifact]:
    """Every deployable contract type of the project, then of its dependencies. Without
    `compile_dependencies` a dependency with no compiled types is skipped (its name is added to
    `uncompiled`) instead of compiled whole, which takes minutes for OpenZeppelin."""
    found = list(_artifacts_of(project))
    if not include_dependencies:
        return found
    seen = {artifact.qualified_name for artifact in found}
    for dep in project.dependencies.specified:
        try:
            dep_project = dep.project
            if not dep_project.manifest.contract_types:
                if not compile_dependencies:
                    if uncompiled is not None:
                        uncompiled.append(dep.name)
                    continue
                dep_project.load_contracts()
            found += [a for a in _artifacts_of(dep_project, dependency=dep.name) if a.qualified_name not in seen]
        except Exception:  # an uncompilable dependency must not hide the others
            continue
    return found


@GATE.entered()
def find_artifact(name: str, project: ProjectManager, compile: bool = True) -> Artifact:
    """`Name`, `path/File.sol:Name` or `dependency:Name`; the project's own types win over dependencies'.
    Without `compile`, only the manifests are read (no import closure, no dependency compiled)."""

    def named(artifacts: Iterable[Artifact]) -> list[Artifact]:
        return [a for a in artifacts if name in (a.name, a.qualified_name, a.label, a.reference)]

    uncompiled: list[str] = []
    candidates = named(iter_artifacts(project, compile_dependencies=False, uncompiled=uncompiled))
    if not candidates and not compile:
        raise ArtifactNotFound(f"No compiled contract type named {name!r} in the manifests")
    if not candidates:  # a type only an imported file defines (`openzeppelin:ProxyAdmin`)
        candidates = named(closure_artifacts(project))
    if not candidates and uncompiled:  # last: compile the dependencies whole
        candidates = named(iter_artifacts(project))
    own = [a for a in candidates if a.dependency is None]
    if len(own) == 1:
        return own[0]
    if len(candidates) == 1:
        return candidates[0]
    if not candidates:
        raise ArtifactNotFound(
            f"No contract type named {name!r} in the project or its dependencies; "
            "run `ape compile --include-dependencies`, or check the name"
        )
    choices = ", ".join(sorted({a.reference for a in candidates}))
    raise ArtifactNotFound(f"{name!r} is ambiguous: {choices}. Pass one of these instead")


def type_reference(contract_type: ContractType) -> str | None:
    """What `find_artifact` resolves to the very type Ape deployed (its source file and name), so
    that two types with the same code are never confused; None for a type with no source (one
    built from an ABI and bytecode), which only its code can identify."""
    name, source_id = contract_type.name, contract_type.source_id
    return f"{source_id}:{name}" if name and source_id else None


def short_name(reference: str) -> str:
    """`Name` (or `dependency:Name`) for a summary row, from any name `find_artifact` takes."""
    parts = reference.split(":")
    return parts[-1] if len(parts) < 3 else f"{parts[0]}:{parts[-1]}"


# --- address-only mode ---------------------------------------------------------------------------


@GATE.entered()
def identify(
    address: str,
    project: ProjectManager,
    runtime: bytes | None = None,
    cache: CompileCache | None = None,
    creation: Callable[[], bytes | None] | None = None,
) -> Artifact:
    """The one contract type whose runtime code matches `address`'s, metadata, immutables and
    link positions aside. Uses the manifest's bytecode, so it needs no compile; only when nothing
    matches are the types of the import closure compiled (see `closure_artifacts`).

    Types with the same code (a contract that inherits another and adds only a constructor) tie
    once the metadata is stripped; the tie is broken as a compiler would tell them apart: by the
    full runtime code, metadata hash included, then by the creation code against the creation
    transaction (`creation()` gives its input, read only when needed)."""
    if runtime is None:
        from ape import chain

        from ape_contract_verify.evm.chain import ApeProviderChain

        runtime = bytes(ApeProviderChain(chain.provider).get_code(address))
    if not runtime:
        raise ArtifactNotFound(f"no contract code at {address} on this network")
    # Cheapest first: the manifests, then one compile of what the project's sources import.
    # An uncompiled dependency is not compiled whole: the types a project's own code creates
    # are in its import closure, and the closure's settings are the ones that built them.
    uncompiled: list[str] = []
    matches = [
        a for a in iter_artifacts(project, compile_dependencies=False, uncompiled=uncompiled) if has_code_of(a, runtime)
    ]
    if not matches:
        matches = [a for a in closure_artifacts(project, cache) if has_code_of(a, runtime)]
    if len(matches) > 1:
        matches = _break_tie(matches, runtime, creation)
    if len(matches) == 1:
        return matches[0]
    if not matches:
        hint = ""
        if uncompiled:
            hint = f" (not compiled, so not searched beyond what the project imports: {', '.join(uncompiled)}; `ape compile --include-dependencies` compiles them)"
        raise ArtifactNotFound(
            f"the code at {address} matches no contract type of the project or its dependencies{hint}; "
            "name the contract type: `ape verify contract NAME ADDRESS`"
        )
    names = ", ".join(sorted(a.reference for a in matches))
    raise ArtifactNotFound(
        f"the code at {address} matches several contract types, identical in runtime and creation code ({names}); "
        f"name one: `ape verify contract {matches[0].reference} {address}`"
    )


def _break_tie(matches: list[Artifact], runtime: bytes, creation: Callable[[], bytes | None] | None) -> list[Artifact]:
    """The candidates that match more closely: the full runtime code (metadata hash included:
    the hash of the sources that were compiled), then the creation code. A step that rules out
    every candidate (sources edited since the deploy) leaves them all to the next."""
    exact = [a for a in matches if has_code_of(a, runtime, full=True)]
    if len(exact) == 1:
        return exact
    matches = exact or matches
    creation_input = creation() if creation is not None else None
    if not creation_input:
        return matches
    created = [a for a in matches if _creates(a, bytes(creation_input))]
    return created or matches


def _code(code: Bytecode | None) -> bytes:
    text = (code.bytecode if code else None) or ""
    return bytecode.to_bytes(text) if text and text != "0x" else b""  # link placeholders zeroed


def _creates(artifact: Artifact, code: bytes) -> bool:
    """`code` starts with this type's creation code (arguments may follow it)."""
    expected = _code(artifact.contract_type.deployment_bytecode)
    return _same_code(expected, code[: len(expected)])


def has_code_of(artifact: Artifact, runtime: bytes, full: bool = False) -> bool:
    """`runtime` is this type's code, metadata (unless `full`), immutables and link positions
    aside: a name that came with the address (Ape gives a proxy the type of its implementation)
    is checked by it."""
    declared = blueprint.parse(runtime)
    if declared is not None:  # an ERC-5202 blueprint: its body is the creation code
        return _creates(artifact, declared.body)
    expected = _code(artifact.contract_type.runtime_bytecode)
    if artifact.is_vyper and len(runtime) > len(expected):
        runtime = runtime[: len(expected)]  # Vyper appends immutables after the runtime
    if full or len(expected) != len(runtime):
        return _same_code(expected, runtime)
    code = bytecode.strip_metadata(expected)
    return _same_code(code, runtime[: len(code)])


def _same_code(expected: bytes, actual: bytes) -> bool:
    """Equal but for what the artifact can't know: an immutable (zeros in the artifact) or a
    library address (the 20 bytes after a PUSH20, stale or blank in the artifact); the metadata
    is compared like any other byte."""
    if not expected or len(expected) != len(actual):
        return False
    return all(e == a or e == 0 or _in_push20(expected, i) for i, (e, a) in enumerate(zip(expected, actual)))


def _in_push20(code: bytes, index: int) -> bool:
    return any(code[start - 1] == 0x73 for start in range(max(1, index - 19), index + 1))


# --- the import closure ---------------------------------------------------------------------------


@GATE.entered()  # also one search at a time: workers of a run share its result
def closure_artifacts(project: ProjectManager, cache: CompileCache | None = None) -> list[Artifact]:
    """Every deployable contract type defined only in a file the project's own Solidity sources
    import (OpenZeppelin's ProxyAdmin, which its TransparentUpgradeableProxy's constructor
    creates): ape-solidity's manifest keeps the types of the project's sources alone, and a
    dependency's types only after `ape compile --include-dependencies`.

    Each type comes with the compiler and settings of the project sources that import it, and
    its source unit is the imported file as ape-solidity names it in the project's input. One
    compile per compiler version (through `cache`), memoised for the run."""
    try:
        solidity = [c for c in project.manifest.compilers or [] if c.name.lower() == "solidity" and c.contractTypes]
        memo, key = _memo(project), ("closure", *((c.name, c.version) for c in solidity))
    except Exception:  # not an Ape project (a test's stand-in): nothing to search
        return []
    if not solidity:
        return []
    if key not in memo:
        memo[key] = _search_closure(project, solidity, cache)
    return list(memo[key])


# What is remembered of each project (by its root) in one state of its Solidity sources and
# config (remappings), sizes and times, so an edit is a new state: the import statements
# ape-solidity resolved, the compile groups' inputs, the import closure's types.
_MEMO: dict[str, tuple[Stamps, dict[tuple[object, ...], Any]]] = {}


def _memo(project: ProjectManager) -> dict[tuple[object, ...], Any]:
    root = Path(project.path)
    files = [root / s for s in project.manifest.sources or {} if s.endswith(".sol")]
    files += [root / name for name in ("ape-config.yaml", "ape-config.yml", "pyproject.toml")]
    stamps = tuple(sorted((str(path), stamp(path)) for path in files))
    if _MEMO.get(str(root), ((), {}))[0] != stamps:
        _MEMO[str(root)] = (stamps, {})
    return _MEMO[str(root)][1]


def close_over_imports(sources: CompilerJson, remappings: list[str], root: Path) -> None:
    """Add to `sources` every file they import, transitively, that they lack, read from `root`,
    where the project's compile (solc, base path the project) read it.

    ape-solidity's list can lack one, depending on the order it meets a file's imports (a set's,
    so the hash seed's): a dependency's file reached by the dependency's name has its imports
    resolved with that dependency's own remappings, which may name no file of the project, and is
    remembered so for the whole tree. An explorer has only the input."""
    from ape_contract_verify.derive.flatten import missing_imports

    def read(unit: str) -> str | None:
        try:
            return (root / unit).read_text(encoding="utf8")
        except (OSError, UnicodeDecodeError):
            return None

    texts = {unit: source["content"] for unit, source in sources.items() if isinstance(source.get("content"), str)}
    for unit, text in missing_imports(texts, remappings, read).items():
        sources[unit] = {"content": text}


def _search_closure(project: ProjectManager, solidity: list[Compiler], cache: CompileCache | None) -> list[Artifact]:
    from ethpm_types import ContractType

    from ape_contract_verify.engine.compilers import compile_input, process_cache

    cache = cache or process_cache()
    own = {s for s in (project.manifest.sources or {}) if s.endswith(".sol")}
    found: list[Artifact] = []
    for compiler in solidity:  # the manifest's Solidity compilers that built contract types
        recorded = dict(compiler.settings or {})
        try:
            version = CompilerVersion.parse(compiler.version, "solidity")
            sent = solidity_group_input(project, version, recorded) if version.commit else None
            if sent is None:
                continue
            output = compile_input(version.long, cast("CompilerInput", sent), cache=cache)
        except Exception:  # no version, input or compile: nothing to search is "no match", which identify reports
            continue
        for source_id, contracts in sorted((output.get("contracts") or {}).items()):
            if source_id in own:
                continue
            # ape-solidity copies a dependency's files to `<contracts>/.cache/<name>/<version>/`.
            parts = Path(source_id).parts
            dependency = parts[parts.index(".cache") + 1] if ".cache" in parts[:-1] else None
            for name, compiled in sorted(contracts.items()):
                evm = compiled.get("evm") or {}
                runtime = (evm.get("deployedBytecode") or {}).get("object") or ""
                if not runtime:  # an interface or an abstract contract: nothing can be deployed as it
                    continue
                contract_type = ContractType.model_validate(
                    {
                        "contractName": name,
                        "sourceId": source_id,
                        "abi": compiled.get("abi") or [],
                        "deploymentBytecode": {"bytecode": "0x" + ((evm.get("bytecode") or {}).get("object") or "")},
                        "runtimeBytecode": {"bytecode": "0x" + runtime},
                    }
                )
                found.append(
                    Artifact(
                        name, source_id, contract_type, project, compiler.name, compiler.version, recorded, dependency
                    )
                )
    return found


# --- ape-solidity's inputs -------------------------------------------------------------------------


def inputs_by_version(
    solidity: SolidityCompiler, paths: list[Path], project: ProjectManager, versions: Callable[[], Mapping[Path, str]]
) -> dict[Version, CompilerJson]:
    """ape-solidity's input for `paths` and their imports, each path compiled by the solc
    `versions()` names for it, handed over so as to skip ape-solidity's version selection. That
    selection still decides when a path has no version (a file with no contract, imported by
    none: which group it joins is a pragma's question), or for another ape-solidity."""
    try:
        from ape_solidity._models import SourceTree
        from packaging.version import Version

        chosen = versions()  # a ValueError (a nightly: no `Version`): ape-solidity's own selection
        # Import statements ape-solidity resolved, shared by every contract of the project: they
        # import mostly the same files (OpenZeppelin's), and resolving one costs about 0.5 ms.
        memo: ImportStatements = _memo(project).setdefault(("imports",), {})
        tree = SourceTree.from_source_files(paths, project, statements=dict(memo) or None)
        memo.update(tree.import_statements)
        version_map: dict[Version, set[Path]] = {}
        for path in paths:
            if path in chosen:
                version_map.setdefault(Version(chosen[path]), set()).update({path, *tree.get_imported_paths(path)})
        if version_map and all(any(path in group for group in version_map.values()) for path in paths):
            inputs: dict[Version, CompilerJson] = solidity.get_standard_input_json_from_version_map(
                version_map, tree, project=project
            )
            return inputs
    except (ImportError, AttributeError, ValueError, TypeError):  # another ape-solidity: its own selection
        pass
    return solidity.get_standard_input_json(paths, project=project)


@GATE.entered()
def solidity_group_input(
    project: ProjectManager, version: CompilerVersion, settings: CompilerJson
) -> CompilerJson | None:
    """ape-solidity's input for every source of `project` that `version` compiles, with the
    manifest's `settings` (the group's compile recorded its remappings; ape-solidity's fresh ones
    follow its import order), as `manifest_input` makes it; None when no source is `version`'s."""
    from ape import compilers

    # Asked once per project state, compiler and settings in a process.
    memo, key = _memo(project), ("group", version.without_commit().plain, json.dumps(settings, sort_keys=True))
    if key not in memo:
        root = Path(project.path)
        paths = sorted(root / s for s in project.manifest.sources or {} if s.endswith(".sol") and (root / s).is_file())
        found = input_for(inputs_by_version(compilers.solidity, paths, project, lambda: _built_by(project)), version)
        memo[key] = None if found is None else manifest_input(found, settings, project)
    group: CompilerJson | None = memo[key]
    return group


def _built_by(project: ProjectManager) -> dict[Path, str]:
    """The solc the manifest says built each file's contracts, handed to ape-solidity: its own
    selection asks each source set's solc for its version, 4 s for the example's 12 sources with
    solc-js, which the deploy hook cannot spend on the script's thread."""
    return {
        artifact.source_path: CompilerVersion.parse(artifact.compiler_version, "solidity").without_commit().plain
        for artifact in _artifacts_of(project)
        if artifact.compiler_name.lower() == "solidity"
    }


# --- an artifact's compile input ------------------------------------------------------------------
# Exactly what was compiled, and nothing of this machine. Solidity: ape-solidity's own standard
# input for the contract and its transitive imports, with the manifest's settings, closed over its
# imports as solc resolves them; also the whole compile group's. Vyper: the contract and every
# module it imports, with the settings its pragmas impose.


def prepare(artifact: Artifact) -> None:
    """Read now, on this thread, what deriving `artifact` needs of Ape's managers: its input and,
    for Solidity, its compile group's (remappings, every source). The deploy hook calls it on the
    script's thread, so workers find both in `artifact.resolved` and need not call into Ape."""
    artifact.resolved["input"] = _standard_input(artifact)
    artifact.resolved["group"] = _group_input(artifact)


def standard_input(artifact: Artifact) -> CompilerJson:
    """The minimal compiler input for this contract: its source, its transitive imports, and
    exactly the settings the manifest recorded (library placeholders unlinked)."""
    if "input" in artifact.resolved:
        copy: CompilerJson = json.loads(json.dumps(artifact.resolved["input"]))  # callers may change it
        return copy
    return _standard_input(artifact)


@GATE.entered()  # ape-solidity resolves remappings (may install dependencies); ape-vyper reads imports
def _standard_input(artifact: Artifact) -> CompilerJson:
    if artifact.is_vyper:
        return _vyper_input(artifact)
    from ape import compilers

    version, path = artifact.version, artifact.source_path
    # The manifest says which solc built the contract: handed over, it spares ape-solidity's own
    # selection, which asks every installed solc for its version (a node.js start each for solc-js).
    inputs = inputs_by_version(
        compilers.solidity, [path], artifact.project, lambda: {path: version.without_commit().plain}
    )
    chosen = input_for(inputs, version) or next(iter(inputs.values()), None)
    if chosen is None:
        raise ArtifactNotFound(f"{artifact.label}: ape-solidity produced no input for {artifact.source_id}")
    return manifest_input(chosen, artifact.settings, artifact.project)


# Vyper's own interfaces (`from ethereum.ercs import IERC20`): the compiler has them, never send them.
_VYPER_BUILTIN_PREFIXES = ("ethereum/", "vyper/")


def _vyper_input(artifact: Artifact) -> CompilerJson:
    """The contract, every module and interface it imports (transitively), and the settings
    ape-vyper compiled with, minus its host-specific `search_paths`."""
    from ape import compilers

    from ape_contract_verify.engine.compilers import VYPER_OUTPUTS

    root = Path(artifact.project.path)
    closure: dict[str, Path | None] = {}  # each source id and its file
    todo = [artifact.source_id]
    while todo:
        source_id = todo.pop()
        if source_id in closure:
            continue
        file = closure[source_id] = _vyper_source_file(root, source_id)
        if file is not None and file.suffix != ".json":
            todo.extend(compilers.vyper.get_imports([file], project=artifact.project).get(source_id, []))
    sources: dict[str, CompilerJson] = {}
    interfaces: dict[str, CompilerJson] = {}
    # Before 0.4 an import is an interface, never a module: vyper-json 0.3 looks it up under
    # `interfaces` (under `sources` it fails with a KeyError naming the file).
    imports_are_interfaces = artifact.version.release < (0, 4, 0)
    for source_id, file in sorted(closure.items()):
        if source_id.startswith(_VYPER_BUILTIN_PREFIXES) and source_id.endswith(".json"):
            continue
        if file is None:
            raise ArtifactNotFound(
                f"{artifact.label}: {artifact.source_id} imports {source_id}, which is neither in the "
                "project nor in an installed Python package; install it, or vendor it into contracts/"
            )
        text = file.read_text(encoding="utf8")
        if file.suffix == ".json":  # an ABI file imported as an interface
            abi = json.loads(text)
            interfaces[source_id] = {"abi": abi.get("abi", abi) if isinstance(abi, dict) else abi}
        elif imports_are_interfaces and source_id != artifact.source_id:
            interfaces[source_id] = {"content": text}
        else:
            sources[source_id] = {"content": text}
    settings = {k: v for k, v in artifact.settings.items() if k not in DROP_SETTINGS}
    settings["outputSelection"] = {artifact.source_id: VYPER_OUTPUTS}
    _settings_from_pragmas(settings, sources.get(artifact.source_id, {}).get("content", ""))
    result: CompilerJson = {"language": "Vyper", "sources": sources, "settings": settings}
    if interfaces:
        result["interfaces"] = interfaces
    return result


def _settings_from_pragmas(settings: CompilerJson, content: str) -> None:
    """The compiler obeys the contract's pragmas; ape-vyper records them only when written
    `#pragma` (no space), so `# pragma optimize codesize` leaves "gas" in the manifest, and
    vyper-json refuses settings that conflict with a pragma. The pragma is the truth."""
    from ape_contract_verify.engine.diagnose import evm_version, has_optimize_pragma, optimize_mode

    single: CompilerInput = {"sources": {"f": {"content": content}}, "settings": {}}
    if has_optimize_pragma(content):
        settings["optimize"] = optimize_mode(single, "f")
    if (evm := evm_version(single)) != "default":
        settings["evmVersion"] = evm


def _vyper_source_file(root: Path, source_id: str) -> Path | None:
    """A project file, or a module of an installed package (snekmate-style imports)."""
    import sys

    for base in (root, *(Path(p) for p in sys.path if p and "site-packages" in p)):
        file = base / source_id
        if file.suffix in (".vy", ".vyi", ".json") and file.is_file():
            return file
    return None


def project_remappings(artifact: Artifact) -> list[str]:
    """The remappings ape-solidity uses when it compiles the artifact's whole group: those its
    sources use, not every dependency the project has."""
    return sorted(((group_input(artifact) or {}).get("settings") or {}).get("remappings") or [])


def group_input(artifact: Artifact) -> CompilerJson | None:
    """ape-solidity's input for every source of the artifact's project compiled by its compiler;
    None for Vyper (its input is the contract's own) or when Ape's managers cannot say."""
    try:
        found = artifact.resolved["group"] if "group" in artifact.resolved else _group_input(artifact)
    except Exception:  # no project to ask (Ape's managers refused): nothing wider to try
        return None
    copy: CompilerJson | None = json.loads(json.dumps(found)) if found is not None else None  # callers may change it
    return copy


def deployed_group_input(reference: str, project: ProjectManager) -> CompilerJson | None:
    """The compile group's input of the type Ape just deployed (`artifacts.type_reference`), for
    the ledger to keep: what Ape compiled it from, before any later recompile or edit. None for
    Vyper (its input is the contract's own) or when the manifests cannot say."""
    try:
        return _group_input(find_artifact(reference, project, compile=False))
    except Exception as err:  # the deploy goes on; verification later rebuilds it from the sources
        logger.debug("contract_verify: no compile input kept for %s: %s", reference, err)
        return None


def _group_input(artifact: Artifact) -> CompilerJson | None:
    return None if artifact.is_vyper else solidity_group_input(artifact.project, artifact.version, artifact.settings)
