"""One contract's verification planned once: the steps a run carries out on each target and the dry run prints.

`plan_contract` decides what `address` gets: nothing (a data contract), or a proxy's implementation,
its own source (none for a factory's template, skipped when no artifact answers to an unnamed
proxy) and its link. `Verification.contract` carries the steps out on its target; `dry_run` derives
the same steps and prints them. Both identify and derive through one `Derivations`, under the same
keys, so a contract is identified and derived once however many targets (or a dry run) ask.
"""

from __future__ import annotations

import dataclasses
import functools
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, TypeVar, cast

from ape_contract_verify.exceptions import ContractVerifyError
from ape_contract_verify.json_types import JsonObject
from ape_contract_verify.logs import get_logger
from ape_contract_verify.protocol.answers import Outcome
from ape_contract_verify.protocol.values import checksum

if TYPE_CHECKING:
    from ape.managers.project import ProjectManager
    from typing_extensions import Unpack

    from ape_contract_verify.client.provider import CreationRecord
    from ape_contract_verify.derive.artifacts import Artifact
    from ape_contract_verify.derive.derive import Derivation, DeriveOptions
    from ape_contract_verify.engine.compilers import CompileCache
    from ape_contract_verify.evm.reads import ChainReader

logger = get_logger()

T = TypeVar("T")
# What `Derivations.once` keys a result by: its kind ("identify", "derive") and what it was made of.
Key = tuple[object, ...]


@dataclass(frozen=True)
class Skip:
    """Nothing to submit for `address`: a data contract (nothing to verify), or an unnamed proxy's
    own source no artifact answers to (skipped)."""

    label: str
    address: str
    outcome: Outcome
    reason: str


@dataclass(frozen=True)
class Source:
    """A source submission: `address` as `artifact`, or why it has none (`error`)."""

    label: str  # the artifact's label (`(blueprint)` for one); else the name asked for, or the address
    address: str
    name: str | None = None
    constructor_args: str | None = None
    artifact: Artifact | None = None
    error: str = ""
    blueprint: bool = False


@dataclass(frozen=True)
class Link:
    """The proxy at `address` linked to `implementation`, once that is verified. `label`: its own
    row's; `unlinked`, for a factory's template, what a target that links no proxies says instead."""

    label: str
    address: str
    implementation: str
    unlinked: str = ""


Step = Skip | Source | Link


def plan_contract(
    reader: ChainReader,
    project: ProjectManager,
    derivations: Derivations,
    address: str,
    name: str | None = None,
    constructor_args: str | None = None,
    deployed_type: str | None = None,
    claim: Callable[[str], bool] = lambda address: True,
) -> list[Step]:
    """What `address` gets, in order: a proxy's implementation (when `claim` says this run has not
    handled it yet), its own source, then its link. A factory's template (no compiler made it) gets
    only its link, unless it was deployed or named as a type. `deployed_type`: the type Ape deployed
    there (the ledger's record), trusted over the code, which several types may share."""
    from ape_contract_verify.evm import proxies
    from ape_contract_verify.evm.bytecode import DATA_CONTRACT, is_data_contract

    address = checksum(address)
    # No type compiles to code that never runs, whatever deployed it: say what it is.
    if name is None and is_data_contract(reader.get_code(address)):
        return [Skip("data contract", address, Outcome.NOTHING_TO_VERIFY, DATA_CONTRACT)]

    def source(at: str, name: str | None = None, args: str | None = None, deployed: str | None = None) -> Source:
        from ape_contract_verify.derive import artifacts
        from ape_contract_verify.evm.blueprint import is_blueprint

        try:
            artifact = (
                artifacts.find_artifact(name, project) if name else derivations.artifact(at, deployed, project, reader)
            )
        except ContractVerifyError as err:
            return Source(artifacts.short_name(name or deployed or "") or at[:10], at, name, args, error=str(err))
        try:
            blueprint = is_blueprint(reader.get_code(at))
        except Exception:  # the explorer's answer stands
            blueprint = False
        return Source(
            f"{artifact.label} (blueprint)" if blueprint else artifact.label, at, name, args, artifact, "", blueprint
        )

    proxy = proxies.detect_proxy(reader, address)
    if proxy is None:
        return [source(address, name, constructor_args, deployed_type)]
    implementation = checksum(proxy.implementation)
    steps: list[Step] = [source(implementation)] if claim(implementation) else []
    if proxy.stamped and name is None and not deployed_type:
        return [*steps, Link(proxy.label, address, implementation, proxies.stamped_reason(proxy))]
    own: Step = source(address, name, constructor_args, deployed_type)
    if name is None and isinstance(own, Source) and own.error:
        own = Skip(address[:10], address, Outcome.SKIPPED, f"proxy source: {own.error}")
    return [*steps, own, Link(own.label, address, implementation)]


class Derivations:
    """What the targets of one run share per contract: the compile cache, which artifact an
    address is, and its derivation (or the error deriving it). Computed once, under a lock per key.

    `prepared` holds the artifact of each address the deploy hook resolved on the script's thread,
    with what deriving it needs of Ape (`derive.artifacts.prepare`), so that workers need not call
    into Ape's managers while the script can (`derive.ape_gate`). A plain dict: the script's
    thread never waits on a worker's lock."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._keys: dict[Key, threading.Lock] = {}
        # Each key's value is what its `make` returned (`once` gives it back as that type), or raised.
        self._results: dict[Key, object] = {}
        self.prepared: dict[str, Artifact] = {}  # address (lower case) -> Artifact, resolved
        # address (lower case) -> the group input Ape built it from, as the ledger kept it at the
        # deploy: the one the pre-check widens to, whatever was recompiled or edited since.
        self.kept: dict[str, JsonObject] = {}

    @functools.cached_property
    def cache(self) -> CompileCache:
        """The process's (shared with the local explorer), looked up on first use: the deploy hook
        makes its Derivations at the script's first deploy, where importing the engine would cost."""
        from ape_contract_verify.engine.compilers import process_cache

        return process_cache()

    def prepare(self, address: str, deployed_type: str, project: ProjectManager, runtime: bytes) -> bool:
        """Resolve, on the caller's (the script's) thread, the artifact Ape deployed at `address`
        and what deriving it needs of Ape; False when the manifests alone cannot say (workers then
        resolve it once the script lets them)."""
        from ape_contract_verify.derive import artifacts

        try:
            artifact = artifacts.find_artifact(deployed_type, project, compile=False)
        except artifacts.ArtifactNotFound as err:
            logger.debug("%s: %s not resolved at the deploy: %s", address, deployed_type, err)
            return False
        if not artifacts.has_code_of(artifact, runtime):
            return False
        same = next((a for a in self.prepared.values() if a.reference == artifact.reference), None)
        if same is not None:
            artifact.resolved.update(same.resolved)  # the same type deployed again
        else:
            artifacts.prepare(artifact)
        self.prepared[address.lower()] = artifact
        return True

    def once(self, key: Key, make: Callable[[], T]) -> T:
        with self._lock:
            key_lock = self._keys.setdefault(key, threading.Lock())
        with key_lock:
            if key not in self._results:
                try:
                    self._results[key] = make()
                except Exception as err:  # every target reports the same error
                    self._results[key] = err
        value = self._results[key]
        if isinstance(value, Exception):  # no `make` builds an exception
            raise value
        return cast(T, value)  # the key names what `make` built

    def artifact(
        self, address: str, deployed_type: str | None, project: ProjectManager, reader: ChainReader
    ) -> Artifact:
        """The artifact `address` is: the one prepared at its deploy, else the type Ape deployed
        there if it has the code, else what the project's artifacts identify."""
        from ape_contract_verify.derive import artifacts
        from ape_contract_verify.evm.reads import creation_input

        prepared = self.prepared.get(address.lower())
        if prepared is not None:
            return prepared

        def find() -> Artifact:
            runtime = reader.get_code(address)
            recorded: Artifact | None = None
            if deployed_type:
                try:
                    recorded = artifacts.find_artifact(deployed_type, project)
                except artifacts.ArtifactNotFound as err:
                    logger.debug("%s: deployed as %s, which no artifact answers to (%s)", address, deployed_type, err)
                else:
                    if artifacts.has_code_of(recorded, runtime):
                        return recorded
                    logger.debug("%s: recorded as %s, whose code it does not have", address, deployed_type)
            try:
                return artifacts.identify(
                    address, project, runtime, self.cache, creation=lambda: creation_input(reader, address)
                )
            except ContractVerifyError:
                if recorded is None:
                    raise
                # Recompiled since the deploy (`add_library` compiles a library alone): the type Ape
                # deployed stands, and the pre-check compiles the inputs it was built from.
                return recorded

        found = self.once(("identify", address.lower(), deployed_type), find)
        kept = self.kept.get(address.lower())
        return found if kept is None else dataclasses.replace(found, resolved={**found.resolved, "group": kept})

    def derive(
        self,
        step: Source,
        chain_reader: ChainReader | None,
        *,
        creation_record: Callable[[str], CreationRecord] | None,
        **options: Unpack[DeriveOptions],
    ) -> Derivation:
        """`step`'s request, derived and pre-checked once per `options` (the creation record is
        asked only where the chain cannot tell); a step with no artifact raises its error."""
        from ape_contract_verify.derive import derive

        artifact = step.artifact
        if artifact is None:
            raise ContractVerifyError(step.error)
        return self.once(
            ("derive", step.address.lower(), step.name, step.constructor_args, *sorted(options.items())),
            lambda: derive.derive(
                artifact,
                step.address,
                chain_reader=chain_reader,
                constructor_args=step.constructor_args,
                cache=self.cache,
                creation_record=creation_record,
                **options,
            ),
        )
