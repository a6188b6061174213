"""The compiler input for an artifact: exactly what was compiled, and nothing of this machine.

Solidity: ape-solidity's own standard input for the contract and its transitive imports (import
resolution memoised per project), with the manifest's settings, closed over its imports as solc
resolves them. Vyper: the contract and every module it imports, with the settings its pragmas
impose. Also the whole compile group's input, for the remappings ape-solidity gave every contract
of it.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, TypeAlias

from ape_contract_verify.derive.ape_gate import GATE
from ape_contract_verify.derive.artifacts import (
    DROP_SETTINGS,
    Artifact,
    ArtifactNotFound,
    CompilerJson,
    Libraries,
    Stamps,
    find_artifact,
    input_for,
    manifest_input,
    stamp,
)
from ape_contract_verify.logs import get_logger
from ape_contract_verify.protocol.compiler_version import CompilerVersion

logger = get_logger()

if TYPE_CHECKING:
    from ape.managers.project import ProjectManager
    from ape_solidity._models import ImportStatementMetadata
    from ape_solidity.compiler import SolidityCompiler
    from packaging.version import Version

    from ape_contract_verify.protocol.inputs import CompilerInput

    # ape-solidity's resolved imports: (file, import text) -> what it names.
    ImportStatements: TypeAlias = dict[tuple[Path, str], set[ImportStatementMetadata]]

VYPER_OUTPUT_SELECTION = ["abi", "evm.bytecode.object", "evm.deployedBytecode.object"]


def prepare(artifact: Artifact) -> None:
    """Read now, on this thread, what deriving `artifact` needs of Ape's managers: its input and,
    for Solidity, its compile group's (remappings, every source). The deploy hook calls it on the
    script's thread, so workers find both in `artifact.resolved` and need not call into Ape."""
    artifact.resolved["input"] = _standard_input(artifact)
    if not artifact.is_vyper:
        artifact.resolved["group"] = _group_input(artifact)


def standard_input(artifact: Artifact, libraries: Libraries | None = None) -> CompilerJson:
    """The minimal compiler input for this contract: its source, its transitive imports, and
    exactly the settings the manifest recorded (libraries as given, placeholders otherwise)."""
    if "input" in artifact.resolved and not libraries:
        copy: CompilerJson = json.loads(json.dumps(artifact.resolved["input"]))  # callers may change it
        return copy
    return _standard_input(artifact, libraries)


@GATE.guard  # ape-solidity resolves remappings (may install dependencies); ape-vyper reads imports
def _standard_input(artifact: Artifact, libraries: Libraries | None = None) -> CompilerJson:
    if artifact.is_vyper:
        return _vyper_input(artifact)
    from ape import compilers

    version = artifact.version
    inputs = _solidity_inputs(
        compilers.solidity, artifact.source_path, version.without_commit().plain, artifact.project
    )
    chosen = input_for(inputs, version) or next(iter(inputs.values()), None)
    if chosen is None:
        raise ArtifactNotFound(f"{artifact.label}: ape-solidity produced no input for {artifact.source_id}")
    found = manifest_input(chosen, artifact.settings, artifact.project)
    if libraries:
        found["settings"]["libraries"] = libraries
    return found


def _solidity_inputs(
    solidity: SolidityCompiler, path: Path, version: str, project: ProjectManager
) -> dict[Version, CompilerJson]:
    """ape-solidity's standard input for `path` and its imports, compiled by `version`.

    The manifest already says which compiler built the contract. Handing that version to
    ape-solidity skips its version selection, which asks every installed solc for its version
    (a process start each; with solc-js, a node.js start each) on every call."""
    return _inputs_by_version(solidity, [path], project, lambda: {path: version})


def _inputs_by_version(
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
        memo = _IMPORTS.setdefault(str(project.path), _ImportMemo())
        tree = SourceTree.from_source_files(paths, project, statements=dict(memo.valid()) or None)
        memo.remember(tree.import_statements)
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


class _ImportMemo:
    """Import statements ape-solidity resolved in one project, shared by every contract of a run:
    the contracts of one project import mostly the same files (OpenZeppelin's), and resolving
    one import costs ape-solidity about 0.5 ms. Dropped whole when any file they came from changed."""

    def __init__(self) -> None:
        self.statements: ImportStatements = {}
        self.stamps: dict[Path, tuple[int, int]] = {}  # file -> (mtime, size) when its statements were remembered

    def valid(self) -> ImportStatements:
        if any(stamp(path) != then for path, then in self.stamps.items()):
            self.statements.clear()
            self.stamps.clear()
        return self.statements

    def remember(self, statements: ImportStatements) -> None:
        fresh = set(statements) - set(self.statements)
        _close(statements, fresh)
        for key in fresh:
            if (stamped := stamp(key[0])) is not None:
                self.stamps[key[0]] = stamped
                self.statements[key] = statements[key]


_IMPORTS: dict[str, _ImportMemo] = {}  # by project path


def _close(statements: ImportStatements, fresh: set[tuple[Path, str]]) -> None:
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


def _vyper_input(artifact: Artifact) -> CompilerJson:
    """The contract, every module and interface it imports (transitively), and the settings
    ape-vyper compiled with, minus its host-specific `search_paths`."""
    from ape import compilers

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
    settings["outputSelection"] = {artifact.source_id: VYPER_OUTPUT_SELECTION}
    _settings_from_pragmas(settings, sources.get(artifact.source_id, {}).get("content", ""))
    result: CompilerJson = {"language": "Vyper", "sources": sources, "settings": settings}
    if interfaces:
        result["interfaces"] = interfaces
    return result


def _settings_from_pragmas(settings: CompilerJson, content: str) -> None:
    """The compiler obeys the contract's pragmas; ape-vyper records them only when written
    `#pragma` (no space), so `# pragma optimize codesize` leaves "gas" in the manifest, and
    vyper-json refuses settings that conflict with a pragma. The pragma is the truth."""
    from ape_contract_verify.engine import vyper_settings

    single: CompilerInput = {"sources": {"f": {"content": content}}, "settings": {}}
    if vyper_settings.has_optimize_pragma(content):
        settings["optimize"] = vyper_settings.optimize_mode(single, "f")
    if (evm := vyper_settings.evm_version(single)) != "default":
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
    if artifact.is_vyper:
        return []
    try:
        full = group_input(artifact)
    except Exception:
        return []
    return sorted((full or {}).get("settings", {}).get("remappings") or [])


# ape-solidity's whole-project input, asked once per project state and compiler in a process.
_GROUP_INPUTS: dict[tuple[str, str, Stamps], CompilerJson | None] = {}


def group_input(artifact: Artifact) -> CompilerJson | None:
    """ape-solidity's input for every source of the artifact's project compiled by its compiler."""
    found = artifact.resolved["group"] if "group" in artifact.resolved else _group_input(artifact)
    copy: CompilerJson | None = json.loads(json.dumps(found)) if found is not None else None  # callers may change it
    return copy


def deployed_group_input(reference: str, project: ProjectManager) -> CompilerJson | None:
    """The compile group's input of the type Ape just deployed (`artifacts.type_reference`), for
    the ledger to keep: what Ape compiled it from, before any later recompile or edit. None for
    Vyper (its input is the contract's own) or when the manifests cannot say."""
    try:
        artifact = find_artifact(reference, project, compile=False)
        return None if artifact.is_vyper else _group_input(artifact)
    except Exception as err:  # the deploy goes on; verification later rebuilds it from the sources
        logger.debug("contract_verify: no compile input kept for %s: %s", reference, err)
        return None


@GATE.guard
def _group_input(artifact: Artifact) -> CompilerJson | None:
    from ape import compilers

    project = artifact.project
    paths = [
        Path(project.path) / source_id
        for source_id in (project.manifest.sources or {})
        if source_id.endswith(".sol") and (Path(project.path) / source_id).is_file()
    ]
    version = artifact.version
    # Sizes and times of the sources and the config (remappings): an edit is a new project state.
    configs = [Path(project.path) / name for name in ("ape-config.yaml", "ape-config.yml", "pyproject.toml")]
    stamps = tuple(sorted((str(path), stamp(path)) for path in paths + configs))
    key = (str(project.path), version.without_commit().plain, stamps)
    if key not in _GROUP_INPUTS:
        found = input_for(_group_inputs(compilers.solidity, paths, project), version)
        # The group's compile recorded its remappings; ape-solidity's fresh ones follow its import order.
        _GROUP_INPUTS[key] = None if found is None else manifest_input(found, artifact.settings, project)
    return _GROUP_INPUTS[key]


def _group_inputs(
    solidity: SolidityCompiler, paths: list[Path], project: ProjectManager
) -> dict[Version, CompilerJson]:
    """ape-solidity's input for `paths`, grouped by the solc the manifest says built each file's
    contracts (as `_solidity_inputs` hands over one file's): ape-solidity's own selection asks each
    source set's solc for its version, 4 s for the example's 12 sources with solc-js, which the
    deploy hook cannot spend on the script's thread."""

    def versions() -> dict[Path, str]:
        by_source: dict[Path, str] = {}
        for compiler in project.manifest.compilers or []:
            if compiler.name.lower() == "solidity":
                for name in compiler.contractTypes or []:
                    contract_type = (project.manifest.contract_types or {}).get(name)
                    if contract_type is not None and contract_type.source_id:
                        version = CompilerVersion.parse(compiler.version, "solidity").without_commit().plain
                        by_source[Path(project.path) / contract_type.source_id] = version
        return by_source

    return _inputs_by_version(solidity, paths, project, versions)
