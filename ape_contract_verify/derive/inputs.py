"""The compiler input for an artifact: exactly what was compiled, and nothing of this machine.

Solidity: ape-solidity's own standard input for the contract and its transitive imports (import
resolution memoised per project, `artifacts.inputs_by_version`), with the manifest's settings, closed over its imports as solc
resolves them. Vyper: the contract and every module it imports, with the settings its pragmas
impose. Also the whole compile group's input, for the remappings ape-solidity gave every contract
of it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

from ape_contract_verify.derive.ape_gate import GATE
from ape_contract_verify.derive.artifacts import (
    DROP_SETTINGS,
    Artifact,
    ArtifactNotFound,
    CompilerJson,
    find_artifact,
    input_for,
    inputs_by_version,
    manifest_input,
    solidity_group_input,
)
from ape_contract_verify.logs import get_logger

logger = get_logger()

if TYPE_CHECKING:
    from ape.managers.project import ProjectManager

    from ape_contract_verify.protocol.inputs import CompilerInput


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


@GATE.guard  # ape-solidity resolves remappings (may install dependencies); ape-vyper reads imports
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
