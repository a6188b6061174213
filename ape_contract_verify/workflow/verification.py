"""Verifying: one contract (or one proxy and what is behind it) on one target, and a command's run of many.

`Verification` is one target's side of a run: its client, and what every contract shares (the
project, the chain reader, the options): derive, submit, poll, report. Verifications of the same
run on other targets share one `Derivations`, so a contract is derived and pre-checked once
however many targets it goes to. Each call returns `Report`s, one per submission, so the CLI, the
deploy hook and `ape verify all` print the same summary.

`VerificationRun` runs one command's verifications: every contract on every target of every
network, side by side. Each target has its own client, rate limiter and polling, so three targets
cost about what the slowest one costs, not the sum; one target down or refusing ends with its own
outcome and never stops the others.
"""

from __future__ import annotations

import dataclasses
import threading
import time
from collections.abc import Callable, Iterable
from concurrent.futures import Executor, Future, ThreadPoolExecutor
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from ape_contract_verify.client.provider import Kind
from ape_contract_verify.exceptions import ContractNotVerified, ContractVerifyError, ExplorerError, TargetDown
from ape_contract_verify.logs import get_logger
from ape_contract_verify.protocol.answers import ExplorerAnswer, Outcome
from ape_contract_verify.protocol.values import checksum
from ape_contract_verify.request import CodeFormat
from ape_contract_verify.retry import TargetHealth
from ape_contract_verify.workflow.plan import Derivations, Item, Link, Options, Skip, Source, plan_contract
from ape_contract_verify.workflow.report import Report, proxy_row_label

if TYPE_CHECKING:  # the clients import requests, derive imports Ape: only when a run makes one
    from ape.api import ProviderAPI
    from ape.managers.project import ProjectManager
    from typing_extensions import Unpack

    from ape_contract_verify.client.provider import SubmissionReceipt, VerificationTarget
    from ape_contract_verify.client.targets import ClientOptions, Target
    from ape_contract_verify.derive.derive import Derivation
    from ape_contract_verify.evm.reads import ChainReader, CreationRecord
    from ape_contract_verify.request import VerificationRequest
    from ape_contract_verify.retry import TargetHealth

logger = get_logger()


class Verification:
    """One target's side of a run (`target`, its `client`, its `health`), on `network`."""

    def __init__(
        self,
        client: VerificationTarget,
        chain_reader: ChainReader | None,
        options: Options | None = None,
        *,
        target: Target,
        shared: Derivations,
        on_progress: Callable[[str, str], None] | None = None,
        network: str = "",
        health: TargetHealth | None = None,
    ):
        self.client = client
        self.chain = chain_reader
        self.target = target
        self.kind = Kind(client.kind)
        options = options or Options()  # Sourcify's code format: standard-json only
        self.options = dataclasses.replace(options, code_format=CodeFormat(self.kind.format_for(options.code_format)))
        self.network = network
        self.shared = shared  # with the other targets of its network
        # Shared by every worker on this target (the run's, which its client feeds): down once, for the run.
        self.health = health or TargetHealth(target.name)
        self.on_progress = on_progress or (lambda address, text: None)
        self._lock = threading.Lock()
        self._done: dict[str, threading.Event] = {}  # source submissions of this run, by address

    @property
    def reader(self) -> ChainReader:
        """The run's chain reader; without one, the active Ape provider's, as deriving reads it."""
        from ape_contract_verify.derive.derive import chain_reader_or_provider

        return chain_reader_or_provider(self.chain)

    # -- entry points -------------------------------------------------------------------------

    def contract(
        self,
        address: str,
        name: str | None = None,
        constructor_args: str | None = None,
        deployed_type: str | None = None,
    ) -> list[Report]:
        """Verify `address` as `name` (or as whatever the project's artifacts identify), and,
        when it is a proxy, its implementation first and then the proxy link.

        `deployed_type` is the type Ape deployed there (`artifacts.type_reference`), as the deploy
        hook and the ledger know it: used instead of the code, which several types may share; the
        code decides only when no artifact answers to it."""
        address = checksum(address)
        if not self._first_time(address):  # already handled in this run, e.g. as an implementation
            self._done[address.lower()].wait(self.options.timeout)
            return []
        steps = plan_contract(
            self.reader, self.shared, address, name, constructor_args, deployed_type, self._first_time
        )
        reports: list[Report] = []
        for step in steps:
            if isinstance(step, Skip):
                reports.append(Report(step.label, step.address, step.outcome, step.reason))
            elif isinstance(step, Source):
                started = time.monotonic()
                reports.append(self._source(step))
                reports[-1].seconds = _since(started)
                self._finished(step.address)  # an implementation: other proxies' links wait for it
            elif self.kind.links_proxies:
                self._finished(address)
                # The link needs the implementation's verification to have ended (maybe on another worker).
                self._done[step.implementation.lower()].wait(self.options.timeout)
                reports.append(self.proxy(address, step.implementation, label=step.label))
            elif step.unlinked:  # a factory's template where proxies resolve themselves: say so
                reports.append(Report(step.label, address, Outcome.NOTHING_TO_VERIFY, step.unlinked))
        self._finished(address)
        link = next((step for step in steps if isinstance(step, Link)), None)
        if link is not None:  # the ledger keeps, per target, the implementation handled
            for report in reports:
                if report.address == address:
                    report.implementation = link.implementation
        return self.stamp(reports)

    def stamp(self, reports: list[Report]) -> list[Report]:
        """`reports` made on this target, saying so: its name and label, the network."""
        for report in reports:
            report.target = report.target or self.target.name
            report.target_label = report.target_label or self.target.label
            report.network = report.network or self.network
        return reports

    def _first_time(self, address: str) -> bool:
        with self._lock:
            if address.lower() in self._done:
                return False
            self._done[address.lower()] = threading.Event()
            return True

    def _finished(self, address: str) -> None:
        with self._lock:
            self._done.setdefault(address.lower(), threading.Event()).set()

    def proxy(
        self,
        address: str,
        expected_implementation: str | None = None,
        label: str | None = None,
        relink: bool = False,
    ) -> Report:
        started = time.monotonic()
        address = checksum(address)
        expected = checksum(expected_implementation) if expected_implementation else None
        label = proxy_row_label(label or address[:10], "proxy re-link" if relink else "proxy link")
        try:
            receipt = self.client.verify_proxy(address, expected)
            answer = self._wait(receipt, address)
        except ExplorerError as err:
            report = Report(label, address, _failure(err, Outcome.FAILED), err.reason)
        else:
            outcome = Outcome.VERIFIED if answer.outcome.is_success else Outcome.FAILED
            report = Report(label, address, outcome, answer.reason, guid=receipt.guid, link=self._link(address))
        report.kind, report.implementation = "relink" if relink else "proxy", expected
        report.seconds = _since(started)
        return self.stamp([report])[0]

    def relink(self, address: str, implementation: str, label: str | None = None) -> list[Report]:
        """After an upgrade: the new implementation verified if it is not yet, then the proxy linked
        to it again (an Etherscan-style explorer keeps the old link until then; Sourcify reads the
        slot itself, so there only the implementation is verified)."""
        reports = self.contract(implementation)
        if self.kind.links_proxies:
            reports.append(self.proxy(address, implementation, label, relink=True))
        return reports

    # -- one source submission ----------------------------------------------------------------

    def _source(self, step: Source) -> Report:
        from ape_contract_verify.derive import derive

        label, address, options = step.label, step.address, self.options
        if step.error:
            return Report(label, address, Outcome.ERROR, step.error)
        try:
            if options.ask_first and not options.force and self._already_verified(address):
                reason = "the explorer holds its source"
                return Report(label, address, Outcome.ALREADY_VERIFIED, reason, link=self._link(address))
            self.on_progress(address, f"deriving {label}")
            derivation = options.derive(self.shared, step, self.chain, self._creation_record())
        except derive.PrecheckFailed as err:
            return Report(label, address, Outcome.PRECHECK_FAILED, f"{err.field}: {err.reason}")
        except ContractVerifyError as err:
            return Report(label, address, Outcome.ERROR, str(err))
        for warning in derivation.warnings:
            logger.warning("%s: %s", label, warning)
        if derivation.creation_source:
            # debug: a worker thread, whose lines would interleave with the script's own output
            logger.debug("%s: creation code (constructor arguments) from %s", label, derivation.creation_source)
        return self._submit(label, derivation, step.blueprint)

    def _creation_record(self) -> Callable[[str], CreationRecord] | None:
        """This target's record of creations, for contracts whose creation the chain cannot give.
        None for the embedded local explorer: it reads the same chain through the same reader, so
        it would only repeat the search (and the reason would name an explorer record there is not)."""
        if self.target.is_local:
            return None
        return self.client.creation_records()

    def _submit(self, label: str, derivation: Derivation, blueprint: bool = False) -> Report:
        report = self._submit_once(label, derivation.request, derivation, blueprint)
        if report.outcome != Outcome.FAILED or derivation.request.code_format is not CodeFormat.STANDARD_JSON:
            return report
        # Some explorers want every source of the original compile. Retry once with the whole
        # project's input for this compiler, and say so.
        from ape_contract_verify.derive.derive import with_full_project_input

        try:
            request = with_full_project_input(derivation)
        except Exception as err:  # the first answer stands
            logger.debug("%s: no full-project input to retry with: %s", label, err)
            return report
        if request is None:
            return report
        logger.warning(
            "%s: the explorer rejected the minimal input (%s); retrying once with the full project input",
            label,
            report.reason,
        )
        retried = self._submit_once(label, request, derivation, blueprint)
        retried.warnings.append(f"minimal input rejected ({report.reason}); retried with the full project input")
        return retried

    def _submit_once(self, label: str, request: VerificationRequest, derivation: Derivation, blueprint: bool) -> Report:
        address, warnings = request.address, list(derivation.warnings)
        try:
            self.on_progress(address, "submitting")
            receipt = self.client.verify_source_code(request)
            answer = self._wait(receipt, address)
        except ExplorerError as err:
            return Report(label, address, _failure(err), err.reason, warnings=warnings)
        if answer.outcome.is_success:
            outcome = Outcome.ALREADY_VERIFIED if answer.outcome == Outcome.ALREADY_VERIFIED else Outcome.VERIFIED
        else:
            outcome = answer.outcome if answer.outcome in _OWN_OUTCOMES else Outcome.FAILED
        # Sourcify says which match it stored; an Etherscan-style explorer says nothing, so the pre-check's word stands.
        match = {"exact_match": "full", "match": "partial"}.get(answer.match or "", derivation.match)
        reason = answer.reason
        if outcome == Outcome.FAILED and blueprint and not self.kind.verifies_blueprints:
            from ape_contract_verify.evm.blueprint import SOURCIFY_UNSUPPORTED

            outcome, reason, match = Outcome.UNSUPPORTED, f"{SOURCIFY_UNSUPPORTED}; it answered: {answer.reason}", None
        link = self._link(address)
        return Report(label, address, outcome, reason, guid=receipt.guid, match=match, link=link, warnings=warnings)

    def _wait(self, receipt: SubmissionReceipt, address: str) -> ExplorerAnswer:
        return self.client.wait(
            receipt,
            interval=self.options.poll_interval,
            timeout=self.options.timeout,
            on_progress=lambda a: self.on_progress(address, a.reason),
        )

    def _already_verified(self, address: str) -> bool:
        try:
            record = self.client.contract_record(address)
        except ContractNotVerified:
            return False
        except TargetDown:
            raise  # nothing to submit to
        except ExplorerError as err:
            logger.info("%s: could not ask whether it is verified (%s); submitting", address, err.reason)
            return False
        return record.exact  # a partial match: submit, the exact one replaces it

    def _link(self, address: str) -> str | None:
        # The target knows its pages (Sourcify's repo has its own form); else the client may.
        if self.target.browser_url:
            return self.target.contract_url(address)
        return self.client.link(address)


# Answers that end a target's submission with a reason of their own, not a verification failure.
_OWN_OUTCOMES = (Outcome.REFUSED, Outcome.UNSUPPORTED_CHAIN, Outcome.INVALID_KEY, Outcome.NOT_FOUND)


def _failure(err: ExplorerError, default: Outcome = Outcome.ERROR) -> Outcome:
    if isinstance(err, TargetDown):  # not the contract's failure
        return Outcome.ERROR
    outcome = err.answer.outcome if isinstance(err.answer, ExplorerAnswer) else None
    if outcome == Outcome.FAILED or outcome in _OWN_OUTCOMES:
        return outcome
    return default


def _since(started: float) -> float:
    return round(time.monotonic() - started, 2)


# --- where to verify -------------------------------------------------------------------------


def explorer_for(
    target: Target,
    provider: ProviderAPI | None = None,
    chain_reader: ChainReader | None = None,
    health: TargetHealth | None = None,
    start: bool = True,
    **client_options: Unpack[ClientOptions],
) -> VerificationTarget:
    """The client of a resolved Target. A local network with no explorer configured gets the
    process's local explorer of the chain (`workflow.local_explorers`; no server: no pages),
    reading it through `chain_reader` (default: the Ape provider); started when none runs, unless
    `start` is off (status reads only a running or kept one)."""
    if not target.is_local:
        return target.client(health=health, **client_options)
    from ape import chain

    from ape_contract_verify.workflow import local_explorers

    explorer = local_explorers.shared(provider if provider is not None else chain.provider, chain_reader, start)
    if explorer is None:  # none running, and `start` off
        raise ContractVerifyError("the local explorer of this chain is not running")
    from ape_contract_verify.workflow.local_target import LocalTarget

    return LocalTarget(explorer, health=health)  # its answers without HTTP


# --- a run: every contract on every target of every network ----------------------------------


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
        self.destinations: list[Verification] = []  # one per target of each network

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
        shared = derivations or Derivations(self.project)
        opened: list[Verification] = []
        for target in targets:
            health = TargetHealth(target.name)  # shared by every worker on this target: down once, for the run
            try:
                client = explorer_for(target, provider, chain_reader=chain_reader, health=health, **self.client_options)
            except Exception as err:
                if on_error is None:
                    raise
                on_error(target, err)
                continue
            # Our own explorers answer in well under a second: poll them often.
            options = self.options
            if target.is_local or urlsplit(target.url or "").hostname in ("127.0.0.1", "localhost", "::1"):
                options = dataclasses.replace(options, poll_interval=min(options.poll_interval, 0.5))
            opened.append(
                Verification(
                    client,
                    chain_reader,
                    options,
                    target=target,
                    shared=shared,
                    on_progress=self.on_progress,
                    network=network,
                    health=health,
                )
            )
        for verification in opened:
            verification.health.others = len(opened) > 1
        self.destinations += opened

    def targets_of(self, network: str) -> list[Verification]:
        return [d for d in self.destinations if d.network == network]

    def verify(
        self, items: Iterable[Item], on_done: Callable[[Item, list[Report]], None] | None = None
    ) -> list[Report]:
        """Every item on every target of its network, side by side. Reports come back in item order,
        then target order. `on_done(item, reports)` is called once per item and target."""
        # `workers` per destination (a target of a network): each has its own limiter and polling,
        # so one chain's contracts never queue behind another's (threads start as tasks come).
        workers = self.workers * max(len(self.destinations), 1)
        with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="verify") as pool:
            return [r for _, _, job in self.submit(pool, items, on_done) for r in job.result()]

    def submit(
        self, pool: Executor, items: Iterable[Item], on_done: Callable[[Item, list[Report]], None] | None = None
    ) -> list[tuple[Item, Verification, Future[list[Report]]]]:
        """Every item on every target of its network (those of `item.targets`) handed to `pool`: the
        jobs, in item order, then target order (the deploy queue's pool, or `verify`'s)."""
        return [
            (item, d, pool.submit(self._one, item, d, on_done))
            for item in items
            for d in self.targets_of(item.network)
            if item.targets is None or d.target.name in item.targets
        ]

    @staticmethod
    def _one(
        item: Item, verification: Verification, on_done: Callable[[Item, list[Report]], None] | None
    ) -> list[Report]:
        try:
            verification.health.check()  # a target found down gets no more requests
            if item.relink:
                reports = verification.relink(item.address, item.relink, item.label)
            else:
                if item.kept_input is not None:
                    verification.shared.kept[item.address.lower()] = item.kept_input
                reports = verification.contract(item.address, item.name, item.constructor_args, item.deployed_type)
        except Exception as err:  # reported, never lost, never stops the other targets
            logger.debug("verification of %s on %s failed", item.address, verification.target.name, exc_info=True)
            reports = verification.stamp([Report(item.label, item.address, Outcome.ERROR, str(err))])
        if on_done is not None:
            on_done(item, reports)
        return reports

    def proxy(self, network: str, address: str, expected_implementation: str | None = None) -> list[Report]:
        """The proxy link on every Etherscan-style target of the network (Sourcify resolves proxies itself)."""
        linking = [d for d in self.targets_of(network) if d.kind.links_proxies]
        if not linking:
            return []
        with ThreadPoolExecutor(max_workers=len(linking), thread_name_prefix="verify-proxy") as pool:
            return list(pool.map(lambda d: d.proxy(address, expected_implementation), linking))


def failed(reports: Iterable[Report], required: Iterable[str] | None = None) -> list[Report]:
    """Reports that make the command fail: not ok, on a target that counts (all unless `required` names some)."""
    names = set(required) if required else None
    return [r for r in reports if not r.ok and (names is None or r.target in names)]
