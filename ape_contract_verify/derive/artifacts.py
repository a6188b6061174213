"""The project's compiled contract types: find one by name, or by the code at an address.

An `Artifact` is a contract type with the project (or dependency) whose manifest recorded the
compiler and settings that built it. Identifying an address compares shapes only (the manifest's
bytecode, no compile); whether the artifact really verifies is the engine's question.
"""

import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator, Optional

from ape_contract_verify.evm import bytecode
from ape_contract_verify.exceptions import ContractVerifyError

# Ape's dependency manager is not thread-safe: workers must not load or resolve packages at once.
DEPENDENCY_LOCK = threading.RLock()


class ArtifactNotFound(ContractVerifyError):
    """No contract type, or more than one, answers to a name or to an address's code."""


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
    with DEPENDENCY_LOCK:
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


# --- address-only mode ---------------------------------------------------------------------------


def identify(address: str, project: Any, runtime: Optional[bytes] = None) -> Artifact:
    """The one contract type whose runtime code matches `address`'s, metadata, immutables and
    link positions aside. Uses the manifest's bytecode, so it needs no compile."""
    if runtime is None:
        from ape import chain

        from ape_contract_verify.evm.chain import ApeProviderChain

        runtime = bytes(ApeProviderChain(chain.provider).get_code(address))
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
    expected = bytecode.to_bytes(text)  # link placeholders zeroed
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
