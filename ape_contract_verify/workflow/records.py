"""Reading what was deployed on the connected network, from the plugin's ledger and Ape's records.

The plugin's ledger holds what `ape run` deployed, with auto mode on or off; Ape's own records are
the `deployments:` section of ape-config.yaml and the deployment maps Ape keeps for live networks,
read through Ape's API.

A record that cannot be read is a problem to show, never an empty record: `ape verify all` must
not answer "No recorded deployments" because a file or a contract type could not be read.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ape_contract_verify.workflow.ledger import Ledger, LedgerError

if TYPE_CHECKING:
    from collections.abc import Iterable

    from ape.managers.project import ProjectManager

    from ape_contract_verify.derive.artifacts import Artifact
    from ape_contract_verify.json_types import JsonObject
    from ape_contract_verify.workflow.ledger_entry import LedgerEntry


@dataclass
class Records:
    """The deployments found, the problems met reading them, and the types Ape deployed."""

    deployments: list[tuple[str, str]] = field(default_factory=list)  # (contract, address), in order, once each
    problems: list[str] = field(default_factory=list)
    # address (lower) -> the type deployed (artifacts.type_reference)
    types: dict[str, str] = field(default_factory=dict)
    entries: dict[str, LedgerEntry] = field(default_factory=dict)  # address (lower) -> the ledger's entry

    def add(self, contract: str, address: str, deployed_type: str | None = None) -> None:
        if all(address.lower() != known.lower() for _, known in self.deployments):
            self.deployments.append((contract, address))
        if deployed_type:
            self.types.setdefault(address.lower(), deployed_type)


def recorded_deployments(project: ProjectManager, chain_id: int | None, name: str | None = None) -> Records:
    """Every recorded deployment on the connected chain (of NAME only, when given). An unknown
    NAME raises ContractVerifyError (from `find_artifact`)."""
    from ape import chain
    from ape.contracts import ContractContainer

    from ape_contract_verify.derive.artifacts import find_artifact, iter_artifacts

    records = Records()
    artifacts: list[Artifact] = [find_artifact(name, project)] if name is not None else []
    try:
        for entry in Ledger.for_chain(project, chain_id).deployments():
            if name is None or entry.name in (name, artifacts[0].label, artifacts[0].contract_type.name):
                records.add(entry.name, entry.address, entry.deployed_type)
                records.entries[entry.address.lower()] = entry
    except LedgerError as err:
        records.problems.append(str(err))
    if name is None:
        try:
            artifacts = list(iter_artifacts(project, include_dependencies=False))
        except Exception as err:
            records.problems.append(f"could not list the project's contract types: {err}")
    for artifact in artifacts:
        try:
            # Ape's `get_deployments` takes a contract container, not a contract type.
            for instance in chain.contracts.get_deployments(ContractContainer(artifact.contract_type)):
                records.add(artifact.label, str(instance.address), artifact.reference)
        except Exception as err:
            records.problems.append(f"could not read Ape's deployment records of {artifact.label}: {err}")
    return records


@dataclass(frozen=True)
class DeployedAs:
    """What the ledger recorded at an address's deploy: the type Ape deployed, and the compile
    group's input Ape built it from (None where none was kept)."""

    type: str
    compile_input: JsonObject | None = None


def deployed_as(project: ProjectManager, chain_id: int | None, addresses: Iterable[str]) -> dict[str, DeployedAs]:
    """address (lower) -> what the ledger recorded at its deploy, for those of `addresses` it
    knows: a later `ape verify contract ADDRESS` trusts it over the manifest and the sources,
    which a recompile (such as `add_library`'s) or an edit may have changed since. An unreadable
    ledger records nothing."""
    wanted = {address.lower() for address in addresses}
    ledger = Ledger.for_chain(project, chain_id)
    try:
        entries = [e for e in ledger.deployments() if e.deployed_type and e.address.lower() in wanted]
        kept = ledger.kept_inputs(e.compile_input for e in entries if e.compile_input)
    except LedgerError:
        return {}
    # `or ""` for the type checker: every entry here has a type
    return {e.address.lower(): DeployedAs(e.deployed_type or "", kept.get(e.compile_input or "")) for e in entries}


def recorded_networks(project: ProjectManager) -> tuple[list[str], list[str]]:
    """(networks, problems): every network with recorded deployments, for `ape verify all
    --all-networks`: those the ledgers name (`ecosystem:network:provider`, as `ape run` was
    connected) and those of the `deployments:` section of ape-config.yaml (`ecosystem:network`)."""
    found: list[str] = []  # ecosystem:network[:provider]
    problems: list[str] = []
    for ledger in Ledger.in_project(project):
        try:
            found += [entry.network for entry in ledger.deployments() if entry.network]
        except LedgerError as err:
            problems.append(str(err))
    try:
        section = project.config.deployments or {}
        for ecosystem, by_network in dict(section).items():
            found += [f"{ecosystem}:{network}" for network, entries in dict(by_network or {}).items() if entries]
    except Exception as err:
        problems.append(f"could not read the deployments: section of ape-config.yaml: {err}")
    networks: dict[str, str] = {}  # one connection per network, whatever the provider
    for choice in found:
        networks.setdefault(":".join(choice.split(":")[:2]), choice)
    return list(networks.values()), problems
