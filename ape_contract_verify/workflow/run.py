"""Running one command's verifications: every contract on every target of every network, side by side.

Each target has its own client, rate limiter and polling, so three targets cost about what the
slowest one costs, not the sum; one target down or refusing ends with its own outcome and never
stops the others. The targets of a network share one `Derivations`: a contract is derived and
pre-checked once, then submitted to each.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from ape_contract_verify.json_types import JsonObject
from ape_contract_verify.logs import get_logger
from ape_contract_verify.protocol.answers import Outcome
from ape_contract_verify.retry import TargetHealth
from ape_contract_verify.workflow.plan import Derivations
from ape_contract_verify.workflow.report import Report
from ape_contract_verify.workflow.verification import Options, Verification, explorer_for

if TYPE_CHECKING:
    from ape.api import ProviderAPI
    from ape.managers.project import ProjectManager

    from ape_contract_verify.client.targets import ClientOptions, Target
    from ape_contract_verify.evm.reads import ChainReader

logger = get_logger()


@dataclass(frozen=True)
class Item:
    """One contract to verify on every target of its network."""

    network: str
    address: str
    name: str | None = None
    constructor_args: str | None = None
    deployed_type: str | None = None  # what Ape deployed there (the ledger's record), see Verification.contract
    targets: frozenset[str] | None = None  # the target names to verify it on; None: every one of its network
    relink: str | None = None  # a proxy that moved: link it to this implementation (Verification.relink)
    # The compile group's input Ape built it from, as the ledger kept it at the deploy.
    kept_input: JsonObject | None = field(default=None, compare=False, hash=False)

    @property
    def label(self) -> str:
        from ape_contract_verify.derive.artifacts import short_name

        return short_name(self.name or self.deployed_type or "") or self.address[:10]


@dataclass
class Destination:
    network: str
    target: Target
    verification: Verification
    health: TargetHealth  # shared by every worker on this target: down once, for the whole run


class VerificationRun:
    """`add_network` once per network, then `verify` or `proxy`."""

    def __init__(
        self,
        project: ProjectManager,
        options: Options,
        workers: int = 16,
        on_progress: Callable[[str, str], None] | None = None,
        client_options: ClientOptions | None = None,
    ):
        self.project = project
        self.options = options
        self.workers = workers
        self.on_progress = on_progress
        self.client_options = client_options or {}
        self.destinations: list[Destination] = []

    def add_network(
        self,
        network: str,
        targets: Iterable[Target],
        provider: ProviderAPI | None = None,
        chain_reader: ChainReader | None = None,
        on_error: Callable[[Target, Exception], None] | None = None,
        derivations: Derivations | None = None,
    ) -> None:
        """Open each target's explorer for `network`. A target that cannot be opened raises, or,
        with `on_error`, is handed to it and left out (the others still run). The targets share
        `derivations` (one made here unless given: the deploy hook's holds what it prepared)."""
        shared = derivations or Derivations()
        opened: list[Destination] = []
        for target in targets:
            health = TargetHealth(target.name)
            try:
                client, browser = explorer_for(
                    target, provider, chain_reader=chain_reader, health=health, **self.client_options
                )
            except Exception as err:
                if on_error is None:
                    raise
                on_error(target, err)
                continue
            # Our own explorers answer in well under a second: poll them often.
            options = self.options
            if target.is_local or urlsplit(target.url or "").hostname in ("127.0.0.1", "localhost", "::1"):
                options = dataclasses.replace(options, poll_interval=min(options.poll_interval, 0.5))
            verification = Verification(
                client,
                self.project,
                chain_reader,
                options,
                browser_url=browser,
                on_progress=self.on_progress,
                target=target,
                network=network,
                shared=shared,
            )
            opened.append(Destination(network, target, verification, health))
        for destination in opened:
            destination.health.others = len(opened) > 1
        self.destinations += opened

    def targets_of(self, network: str) -> list[Destination]:
        return [d for d in self.destinations if d.network == network]

    def verify(
        self, items: Iterable[Item], on_done: Callable[[Item, list[Report]], None] | None = None
    ) -> list[Report]:
        """Every item on every target of its network, side by side. Reports come back in item order,
        then target order. `on_done(item, reports)` is called once per item and target."""
        tasks = [
            (item, d)
            for item in items
            for d in self.targets_of(item.network)
            if item.targets is None or d.target.name in item.targets
        ]
        if not tasks:
            return []

        def one(task: tuple[Item, Destination]) -> list[Report]:
            item, destination = task
            try:
                destination.health.check()  # a target found down gets no more requests
                if item.relink:
                    reports = destination.verification.relink(item.address, item.relink, item.label)
                else:
                    if item.kept_input is not None:
                        destination.verification.shared.kept[item.address.lower()] = item.kept_input
                    reports = destination.verification.contract(
                        item.address, item.name, item.constructor_args, item.deployed_type
                    )
            except Exception as err:  # reported, never lost, never stops the other targets
                logger.debug("verification of %s on %s failed", item.address, destination.target.name, exc_info=True)
                reports = destination.verification.stamp([Report(item.label, item.address, Outcome.ERROR, str(err))])
            if on_done is not None:
                on_done(item, reports)
            return reports

        # `workers` per destination (a target of a network): each has its own limiter and polling,
        # so one chain's contracts never queue behind another's.
        destinations = len({id(d) for _, d in tasks})
        with ThreadPoolExecutor(
            max_workers=min(len(tasks), self.workers * destinations), thread_name_prefix="verify"
        ) as pool:
            return [r for batch in pool.map(one, tasks) for r in batch]

    def proxy(self, network: str, address: str, expected_implementation: str | None = None) -> list[Report]:
        """The proxy link on every Etherscan-style target of the network (Sourcify resolves proxies itself)."""
        destinations = [d for d in self.targets_of(network) if d.verification.kind.links_proxies]
        if not destinations:
            return []
        with ThreadPoolExecutor(max_workers=len(destinations), thread_name_prefix="verify-proxy") as pool:
            return list(pool.map(lambda d: d.verification.proxy(address, expected_implementation), destinations))


def failed(reports: Iterable[Report], required: Iterable[str] | None = None) -> list[Report]:
    """Reports that make the command fail: not ok, on a target that counts (all unless `required` names some)."""
    names = set(required) if required else None
    return [r for r in reports if not r.ok and (names is None or r.target in names)]
