"""The deploy hook's queue for one network: what a script deployed there, verified on background workers.

Each deploy is verified on each of the network's targets; the run's summary table and its
progress lines are said from here too (see `after_deploy`).
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Mapping
from typing import IO, TYPE_CHECKING, Protocol

from ape_contract_verify.logs import get_logger
from ape_contract_verify.workflow.run_logs import hash_text, run_children, scan_logs

if TYPE_CHECKING:
    from concurrent.futures import Future

    from ape.api import ProviderAPI
    from ethpm_types import ContractType
    from rich.live import Live

    from ape_contract_verify.config import ContractVerifyConfig
    from ape_contract_verify.evm.upgrades import UpgradeEvent
    from ape_contract_verify.json_types import JsonObject
    from ape_contract_verify.workflow.ledger import Ledger
    from ape_contract_verify.workflow.report import Report
    from ape_contract_verify.workflow.run import VerificationRun
    from ape_contract_verify.workflow.verification import Verification

logger = get_logger()
_lock = threading.Lock()


class Deployed(Protocol):
    """What the queue reads of a deploy: Ape's ContractInstance, or a declared blueprint."""

    @property
    def address(self) -> str: ...

    @property
    def contract_type(self) -> ContractType: ...

    @property
    def txn_hash(self) -> str | bytes | None: ...


class DeployQueue:
    """Deployments on one network of one `ape run`, verified on background workers, on each of
    the network's targets, under each explorer's limit."""

    def __init__(
        self,
        provider: ProviderAPI,
        cfg: ContractVerifyConfig,
        network: str,
        workers: int | None = None,
        start_block: int | None = None,
    ):
        from concurrent.futures import ThreadPoolExecutor

        from ape_contract_verify.evm.chain import ApeProviderChain
        from ape_contract_verify.evm.wrappers import MemoizingChain

        self.provider = provider
        self.cfg = cfg
        self.network = network  # e.g. ethereum:local:foundry, for the summary
        self.active = True
        self.chain = MemoizingChain(ApeProviderChain(provider))
        self.futures: list[tuple[str, Future[list[Report]]]] = []  # (target name, future)
        # Workers mostly wait (for the explorer's jobs and the rate limiter), so there are more
        # of them than cores; the limiters, not the pool, bound the load on the explorers.
        self.pool = ThreadPoolExecutor(max_workers=workers or cfg.workers, thread_name_prefix="verify")
        self.seen: set[str] = set()
        self._run: VerificationRun | None = None  # holds each target's explorer and Verification
        self._verifications: list[tuple[str, Verification]] = []  # (target name, Verification)
        self._ledger: Ledger | None = None
        self._pending: dict[str, list[Report | None]] = {}  # address -> how each target done so far ended
        self._setup_error: str | None = None
        # The run's first block: from the network's context entry when the hook saw it, else now.
        self.start_block = (provider.get_block("latest").number or 0) if start_block is None else start_block
        self.upgrade_events: list[UpgradeEvent] = []  # the run's Upgraded/BeaconUpgraded/AdminChanged, in order
        # (children, upgrade events) when the caller walked the run's logs already
        self.scanned: tuple[list[str], list[UpgradeEvent]] | None = None
        self._gated = False  # whether this queue told the gate that a script runs
        # future -> (name, address), for the lines that say what ended or is awaited
        self._what: dict[Future[list[Report]], tuple[str, str]] = {}
        self.ends_with_run = ""  # why the chain ends with the run (local_explorers.ends_with_run), for the advice
        self._setup()

    def bound_to(self, provider: ProviderAPI | None) -> bool:
        return provider is not None and provider is self.provider

    def _setup(self) -> None:
        from ape import project

        from ape_contract_verify.client.targets import resolve_targets
        from ape_contract_verify.workflow.ledger import Ledger
        from ape_contract_verify.workflow.run import VerificationRun
        from ape_contract_verify.workflow.verification import Options

        network = self.provider.network
        errors = []
        try:
            chain_id = self.provider.chain_id
            targets = resolve_targets(network.ecosystem.name, network.name, chain_id, config=self.cfg)
        except Exception as err:
            targets, errors = [], [str(err)]
        options = Options.from_config(self.cfg, ask_first=False)  # deployed by this very run: no question first
        # The process's embedded explorer, so `Contract(address)` and links later in the run see
        # what this queue verified there.
        self._run = VerificationRun(
            project, options, client_options={"max_retries": self.cfg.max_retries}, shared_local=True
        )
        self._run.add_network(
            self.network,
            targets,
            self.provider,
            self.chain,
            on_error=lambda target, err: errors.append(f"{target.name}: {err}"),
        )
        self._verifications = [(d.target.name, d.verification) for d in self._run.destinations]
        for destination in self._run.destinations:
            where = "the embedded local explorer" if destination.target.is_local else destination.target.url
            logger.info("contract_verify: verifying deployments on %s at %s, beside the script", self.network, where)
        if errors:
            self._setup_error = "; ".join(errors)
            logger.error(
                "contract_verify: verification after deploy on %s %s: %s",
                self.network,
                "is off" if not self._verifications else "skips a target",
                self._setup_error,
            )
        if not self._verifications:
            self.active = False
            self.pool.shutdown(wait=False)
            return
        self._ledger = Ledger.for_chain(project, chain_id)
        from ape_contract_verify.derive.ape_gate import GATE

        GATE.script_started()  # from now on the workers leave Ape's managers to the script
        self._gated = True

    def add_instance(self, instance: Deployed) -> None:
        from ape_contract_verify.derive.artifacts import type_reference

        txn_hash = instance.txn_hash
        self._queue_address(
            str(instance.address),
            instance.contract_type.name,
            None if txn_hash is None else hash_text(txn_hash),
            type_reference(instance.contract_type),
        )

    def _queue_address(
        self, address: str, name: str | None, txn_hash: str | None, deployed_type: str | None = None
    ) -> None:
        """`deployed_type` is the type Ape deployed (None for what a factory made): it is the one
        verified, and the ledger keeps it for `ape verify all`."""
        from ape_contract_verify.protocol.values import checksum

        address = checksum(address)
        if address.lower() in self.seen:
            return
        self.seen.add(address.lower())
        self._warm(address, txn_hash)
        group = self._prepare(address, deployed_type) if deployed_type else None
        if self._ledger is not None:
            self._ledger.recorded(name or address, address, self.network, deployed_type, group)
        from ape_contract_verify.derive.artifacts import short_name

        for target, verification in self._verifications:
            future = self.pool.submit(self._verify, verification, address, name, deployed_type)
            self._what[future] = (short_name(name or deployed_type or "") or address[:10], address)
            self.futures.append((target, future))

    def _warm(self, address: str, txn_hash: str | None) -> None:
        """Read on the script's thread what the workers will need."""
        from ape_contract_verify.evm.proxies import detect_proxy

        if txn_hash:
            from ape_contract_verify.evm.chain import Creation

            receipt = self.provider.get_receipt(txn_hash)
            data = receipt.transaction.data
            self.chain.remember_creation(
                address,
                Creation(tx_hash=str(txn_hash), input=bytes(data), deployer=str(receipt.sender), factory=False),
            )
        self.chain.get_code(address)
        info = detect_proxy(self.chain, address)
        if info is not None:
            self.chain.get_code(info.implementation)

    def _prepare(self, address: str, deployed_type: str) -> JsonObject | None:
        """On the script's thread: what needs Ape's project, dependency and compiler managers
        (the artifact, its compiler input), so the workers need not call into them while the
        script can (`derive.ape_gate`). Cheap: manifests and ape-solidity's import resolution.
        The compile group's input Ape built it from, for the ledger to keep, or None."""
        shared = self._verifications[0][1].shared
        if self._run is None:
            return None
        try:
            shared.prepare(address, deployed_type, self._run.project, self.chain.get_code(address))
        except Exception as err:  # the workers resolve it later, once the script lets them
            logger.debug("contract_verify: %s not prepared at the deploy: %s", address, err)
        prepared = shared.prepared.get(address.lower())
        return prepared.resolved.get("group") if prepared is not None else None

    def _verify(
        self, verification: Verification, address: str, name: str | None, deployed_type: str | None = None
    ) -> list[Report]:
        from ape_contract_verify.protocol.answers import Outcome
        from ape_contract_verify.workflow.report import Report, outcome_for

        try:
            reports = verification.contract(address, deployed_type=deployed_type)
        except Exception as err:  # reported, never raised into the script
            reports = [Report(name or address[:10], address, Outcome.ERROR, str(err))]
        try:  # a proxy: the implementation linked on this target, for following upgrades
            from ape_contract_verify.workflow.upgrades import record_links

            if self._ledger is not None:
                target = verification.target
                urls = {verification.target_name: target.url if target is not None else None}
                record_links(self._ledger, name or address, address, reports, urls)
        except Exception as err:
            logger.warning("contract_verify: %s", err)
        # The ledger says how the address ended on every target: written once the last one ends.
        with _lock:
            done = self._pending.setdefault(address.lower(), [])
            done.append(outcome_for(address, reports))
            last = len(done) == len(self._verifications)
        if last:
            ended = [r for r in done if r is not None]
            report = next((r for r in ended if not r.ok), None) or next(iter(ended), None)
            if report is not None and self._ledger is not None:
                try:
                    self._ledger.ended(name or report.contract, address, str(report.outcome), report.reason)
                except Exception as err:  # the verification stands; the ledger says why it is stale
                    logger.warning("contract_verify: %s", err)
        return reports

    def add_factory_deployments(self, max_blocks: int = 5000) -> None:
        """Contracts that other contracts created during the run (factories, CREATE2 deployers,
        clones, helpers made in a constructor) never pass through `deploy`: `run_children` finds
        them, named by an event or not, and each is queued too. The same walk keeps the run's
        upgrade events (`evm/upgrades.py`), which `finish` follows."""
        scanned, self.scanned = self.scanned, None  # already walked (after_deploy, a run with no deploy)
        if scanned is None:
            scan = scan_logs(self.provider, self.start_block, self.seen, max_blocks)
            scanned = (
                run_children(self.provider, self.start_block, scan, self.seen, reader=self.chain.base),
                scan.events,
            )
        children, self.upgrade_events = scanned
        for address in children:
            self._queue_address(address, None, None)

    def finish(self) -> list[tuple[str, list[Report]]]:
        """Wait for every queued verification and stop the explorers: (target, reports) per target.
        Each verification that ends says so as it ends (a live line on a terminal, a line each in a
        log), and a wait with none ending says what it waits for, so a CI log is never silent."""
        from concurrent.futures import FIRST_COMPLETED, wait

        from ape_contract_verify.protocol.answers import Outcome
        from ape_contract_verify.workflow.report import Report

        if not self.active:
            return []
        try:
            from ape_contract_verify.workflow import local_explorers

            self.ends_with_run = local_explorers.ends_with_run(self.provider)
        except Exception as err:  # the advice then assumes the chain outlives the run
            logger.debug("contract_verify: %s", err)
        try:
            self.add_factory_deployments()
        except Exception as err:
            logger.warning("contract_verify: could not look for factory deployments: %s", err)
        self.active = False
        labels = {d.target.name: d.target.label for d in self._run.destinations} if self._run is not None else {}
        results: list[list[Report]] = [[] for _ in self.futures]
        progress = Progress(self.network, len(self.futures))
        pending = {future: index for index, (_, future) in enumerate(self.futures)}
        deadline = time.monotonic() + self.cfg.timeout + 60
        while pending:
            remaining = deadline - time.monotonic()
            ended, _ = wait(pending, timeout=max(0.0, min(HEARTBEAT, remaining)), return_when=FIRST_COMPLETED)
            if not ended:
                if remaining <= 0:
                    break
                progress.waiting([self._what.get(f, ("?", "?")) for f in sorted(pending, key=pending.__getitem__)])
                continue
            for future in sorted(ended, key=pending.__getitem__):
                index = pending.pop(future)
                target = self.futures[index][0]
                try:
                    results[index] = future.result()
                except Exception as err:
                    name, address = self._what.get(future, ("?", "?"))
                    results[index] = [Report(name, address, Outcome.ERROR, f"not finished: {err}", target=target)]
                progress.ended(results[index], labels.get(target, target))
        for future, index in pending.items():  # past the deadline: said, never waited for forever
            name, address = self._what.get(future, ("?", "?"))
            target = self.futures[index][0]
            results[index] = [
                Report(
                    name, address, Outcome.ERROR, f"not finished within {self.cfg.timeout + 60:.0f} s", target=target
                )
            ]
            progress.ended(results[index], labels.get(target, target))
        progress.close()
        by_target: dict[str, list[Report]] = {name: [] for name, _ in self._verifications}
        for (target, _), reports in zip(self.futures, results):
            for report in reports:
                report.target_label = report.target_label or labels.get(target, "")
            by_target[target] += reports
        if self.upgrade_events and self._ledger is not None:  # after the deploys': a relink follows their link
            from ape_contract_verify.workflow.upgrades import follow

            try:
                followed = follow(
                    self.upgrade_events, self.chain, self._ledger, self._verifications, self.seen, self.pool.submit
                )
            except Exception as err:
                logger.warning("contract_verify: could not follow the run's upgrades on %s: %s", self.network, err)
                followed = []
            for target, reports in followed:
                by_target.setdefault(target, []).extend(reports)
        self.close()
        return list(by_target.items())

    def close(self) -> None:
        self.active = False
        self.pool.shutdown(wait=False, cancel_futures=True)
        if self._gated:
            from ape_contract_verify.derive.ape_gate import GATE

            self._gated = False
            GATE.script_ended()
        self.chain.close()  # a fork the creation search started (a node without traces)
        run, self._run = self._run, None
        if run is not None:
            try:
                run.__exit__(None, None, None)  # closes the targets' clients; the shared explorer stays
            except Exception as err:
                logger.debug("contract_verify: stopping an explorer: %s", err)


def network_table(groups: list[tuple[str, str, list[Report]]]) -> str:
    """The run's summary: one row per contract and target, with a network column once several
    networks are in it; one network is named above the table instead."""
    from ape_contract_verify.workflow.report import summary_table

    reports = []
    for network, target, group in groups:
        for report in group:
            report.network = report.network or network
            report.target = report.target or target
            reports.append(report)
    networks = list(dict.fromkeys(r.network for r in reports))
    head = f"contract_verify: {networks[0]}\n" if len(networks) == 1 else ""
    return head + summary_table(reports)


def run_advice(groups: list[tuple[str, str, list[Report]]], endings: Mapping[str, str]) -> list[str]:
    """The summary's last lines, one per network: its rows counted and, when some did not verify,
    what can still be done. `endings[network]` says why the network's chain ends with the run
    (`local_explorers.ends_with_run`): there `ape verify all` has nothing to read afterwards."""
    from ape_contract_verify.workflow.report import tally

    by_network: dict[str, list[Report]] = {}
    for network, _, reports in groups:
        by_network.setdefault(network, []).extend(reports)
    lines = []
    for network, reports in by_network.items():
        if not reports:
            continue
        line = f"contract_verify: {network}: {len(reports)} row{'s' if len(reports) != 1 else ''}, {tally(reports)}"
        if any(not r.ok for r in reports):
            ends = endings.get(network, "")
            if ends:
                line += (
                    f". {ends}, so nothing is left for `ape verify all` to finish: fix what the rows say and run again, "
                    "or deploy on a node that outlives the run (start `anvil`, then `ape run … --network "
                    "ethereum:local:foundry`), where `ape verify all` finishes what is left"
                )
            else:
                line += f"; `ape verify all --network {network}` finishes them"
        lines.append(line)
    return lines


HEARTBEAT = 15.0  # seconds without a verification ending before a log says what it waits for


class Progress:
    """What `finish` says as verifications end: on a terminal one live line with the counts (rich's
    `Live`, as Ape's output); in a log (no TTY) one line per verification as it ends, and what is
    awaited when none ended for `HEARTBEAT` seconds. The last line counts how they ended."""

    def __init__(self, network: str, total: int, stream: IO[str] | None = None):
        self.network = network
        self.total = total
        self.stream = stream or sys.stderr
        self.tty = self.stream.isatty()
        self.done: list[Report] = []  # every report of the verifications ended
        self.count = 0
        self.started = time.monotonic()
        self._live: Live | None = None

    def _print(self, text: str) -> None:
        if self.tty:
            self._update(text)
        else:
            print(text, file=self.stream, flush=True)

    def _update(self, text: str) -> None:
        # rich is imported here, not at the top: this module loads with the plugin on every command.
        from rich.console import Console
        from rich.live import Live
        from rich.text import Text

        if self._live is None:
            # No refresh thread, no capture of the script's output; kept on screen when stopped.
            console = Console(file=self.stream, highlight=False)
            self._live = Live(console=console, auto_refresh=False, redirect_stdout=False, redirect_stderr=False)
            self._live.start()
        self._live.update(Text(text, no_wrap=True, overflow="ellipsis"), refresh=True)

    def ended(self, reports: list[Report], target: str) -> None:
        from ape_contract_verify.workflow.report import tally

        self.count += 1
        self.done += reports
        if self.tty:
            self._print(
                f"contract_verify: {self.count}/{self.total} verifications on {self.network} ended: {tally(self.done)}"
            )
            return
        what = "; ".join(f"{r.contract} {r.outcome}" for r in reports) or "nothing to report"
        address = next((r.address for r in reports), "")
        where = f" {address[:10]}…" if address.startswith("0x") else ""
        self._print(f"contract_verify: {self.count}/{self.total} on {self.network}:{where} {what} ({target})")

    def waiting(self, awaited: list[tuple[str, str]]) -> None:
        if self.tty:
            return  # the live line is still there
        names = ", ".join(dict.fromkeys(name for name, _ in awaited))
        self._print(
            f"contract_verify: waiting for {len(awaited)} verification{'s' if len(awaited) != 1 else ''} "
            f"on {self.network} ({time.monotonic() - self.started:.0f} s): {names}"
        )

    def close(self) -> None:
        from ape_contract_verify.workflow.report import tally

        if self.tty:
            if self._live is not None:
                self._live.stop()  # the line stays, and the next output starts below it
        elif self.total:
            self._print(
                f"contract_verify: {self.count}/{self.total} verifications on {self.network} ended: {tally(self.done)}"
            )
