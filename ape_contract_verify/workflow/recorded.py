"""Verifying what was recorded (`verify_all`, `ape verify all`), so a second run does only what is left.

Which networks have records, what each recorded address still needs on each target (upgrades
followed: `upgrades.plan`), and the ledger's note of how each ended.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING

from ape_contract_verify.exceptions import ContractVerifyError, InvalidRequest
from ape_contract_verify.workflow.choice import NetworkChoice, chain_id_of
from ape_contract_verify.workflow.ledger import Ledger, Records, recorded_deployments, recorded_networks
from ape_contract_verify.workflow.plan import Item
from ape_contract_verify.workflow.report import Report, outcome_for
from ape_contract_verify.workflow.verification import VerificationRun

if TYPE_CHECKING:
    from ape.api import ProviderAPI
    from ape.managers.project import ProjectManager

    from ape_contract_verify.evm.chain import ApeProviderChain
    from ape_contract_verify.evm.reads import ChainReader
    from ape_contract_verify.json_types import JsonObject
    from ape_contract_verify.workflow.ledger import LedgerEntry

Warn = Callable[[str], None]


class NoRecords(ContractVerifyError):
    """Nothing recorded where records were asked for."""


def network_choices(
    project: ProjectManager, choice: NetworkChoice, all_networks: bool, warn: Warn
) -> list[NetworkChoice]:
    """One NetworkChoice per network: each one given, or with `all_networks` every network with
    recorded deployments (the plugin's records and ape-config.yaml's deployments:)."""
    if all_networks:
        if choice.networks:
            raise InvalidRequest(
                "network", "a network given with all_networks", "give network or all_networks, not both"
            )
        found, problems = recorded_networks(project)
        for problem in problems:
            warn(problem)
        if not found:
            raise NoRecords("no network has recorded deployments; deploy with `ape run`, or give a network")
        choice = dataclasses.replace(choice, networks=tuple(found))
    return [choice.for_network(n) for n in choice.networks] or [choice]


def records_on(project: ProjectManager, chain_id: int | None, warn: Warn, name: str | None = None) -> Records:
    """The recorded deployments on the connected network (of `name` only, when given); records that
    could not be read are warned about. An unknown `name` raises (`find_artifact`'s error), and so
    do records that could not be read at all: "none" would be a wrong answer."""
    records = recorded_deployments(project, chain_id, name)
    for problem in records.problems:
        warn(problem)
    if not records.deployments and records.problems:
        raise NoRecords("no deployment could be read from the records (see the warnings); give an address instead")
    return records


def open_network(run: VerificationRun, choice: NetworkChoice, provider: ProviderAPI) -> tuple[str, ApeProviderChain]:
    """Open the targets of `choice`'s network, connected as `provider`, in `run`; returns the
    network's label and chain reader."""
    from ape_contract_verify.evm.chain import ApeProviderChain

    label, reader = choice.label(), ApeProviderChain(provider)
    run.add_network(label, choice.targets(chain_id_of(provider)), provider, reader)
    return label, reader


def verify_recorded(
    run: VerificationRun, project: ProjectManager, chosen: Iterable[tuple[NetworkChoice, ProviderAPI]], warn: Warn
) -> list[Report]:
    """Every recorded deployment of the networks `chosen` (each connected as its provider when reached), planned
    against the ledger and the chain, then verified in `run`, each ending written to its network's ledger."""
    items: list[Item] = []
    current: list[Report] = []  # proxies whose links match the chain: nothing sent
    ledgers: dict[str, Ledger] = {}
    names: dict[tuple[str, str], str] = {}  # (network, address) -> the name it was recorded under
    for choice, provider in chosen:
        label = choice.label()
        chain_id = chain_id_of(provider)
        ledger = Ledger.for_chain(project, chain_id)
        records = records_on(project, chain_id, warn)
        if not records.deployments:
            from ape_contract_verify.workflow.local_explorers import ends_with_run

            ends = ends_with_run(provider)
            if ends:  # each command's chain is a new one: nothing recorded can ever be on it
                raise NoRecords(
                    f"No recorded deployments on {label}: {ends}, so nothing deployed by an earlier command is on it. "
                    "Deploy on a node that outlives the command (start `anvil`, then `--network ethereum:local:foundry`), "
                    "and `ape verify all` there finishes what a run left."
                )
            raise NoRecords(
                f"No recorded deployments on {label}. Deploy with `ape run` (the plugin records what it "
                "deploys), or verify one by address with `verify`."
            )
        label, reader = open_network(run, choice, provider)
        ledgers[label] = ledger
        try:  # each input kept once for every entry built from it
            kept = ledger.kept_inputs(e.compile_input for e in records.entries.values() if e.compile_input)
        except ContractVerifyError:  # verify as if nothing were kept
            kept = {}
        for name, address in records.deployments:
            names[(label, address.lower())] = name
            entry = records.entries.get(address.lower())
            group = kept.get(entry.compile_input or "") if entry is not None else None
            deployed_type = records.types.get(address.lower())
            items += plan_items(run, entry, label, address, deployed_type, reader, current, group)

    def done(item: Item, reports: list[Report]) -> None:
        urls = {d.target.name: d.target.url for d in run.targets_of(item.network)}
        name = names[(item.network, item.address.lower())]
        record_outcome(ledgers[item.network], name, item, reports, urls, warn)

    return run.verify(items, on_done=done) + current


def plan_items(
    run: VerificationRun,
    entry: LedgerEntry | None,
    label: str,
    address: str,
    deployed_type: str | None,
    reader: ChainReader,
    current: list[Report],
    kept_input: JsonObject | None = None,
) -> list[Item]:
    """The items for one recorded address (workflow/upgrades.plan): as before, except a proxy the
    ledger linked, which costs calls only on targets where it moved (a relink) or did not end well."""
    from ape_contract_verify.protocol.answers import Outcome
    from ape_contract_verify.workflow.upgrades import plan

    destinations = {d.target.name: d for d in run.targets_of(label)}
    names = {name: d.target.url for name, d in destinations.items()}
    todo = plan(entry, names, reader, address)
    item = Item(label, address, deployed_type=deployed_type, kept_input=kept_input)
    some = None if len(todo.verify) == len(names) else frozenset(todo.verify)  # None: every target
    items = [dataclasses.replace(item, targets=some)] if todo.verify else []
    items += [
        dataclasses.replace(item, targets=frozenset({t}), relink=todo.implementation) for t in sorted(todo.relink)
    ]
    reason = "verified, and linked to the implementation on chain: nothing sent"
    for target in sorted(todo.current):  # one row for the proxy: its source and its link, as the ledger says
        row = Report(item.label, address, Outcome.ALREADY_VERIFIED, reason, implementation=todo.implementation)
        current += destinations[target].stamp([row])
    return items


def record_outcome(
    ledger: Ledger, name: str, item: Item, reports: Iterable[Report], urls: dict[str, str | None], warn: Warn
) -> None:
    """The ledger keeps each target's ending per address (the explorer, not the ledger, says what is
    verified: the ledger may speak of another explorer), and a proxy's link."""
    from ape_contract_verify.workflow.upgrades import record_links

    reports = list(reports)
    try:
        if (report := outcome_for(item.address, reports)) is not None:
            ledger.change(
                name, item.address, lambda e: e.target_ended(report.target, str(report.outcome), report.reason)
            )
        relinked = (next(iter(item.targets)), item.relink) if item.relink and item.targets else None
        record_links(ledger, name, item.address, reports, urls, relinked)
    except ContractVerifyError as err:  # already warned about; the verification stands
        warn(str(err))
