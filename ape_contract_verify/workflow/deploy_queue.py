"""The deploy hook's queue for one network: what a script deployed there, verified once it has ended.

The script comes first: at each deploy the queue does only what must be read then (the artifact
Ape deployed and the compile input it was built from, which a later recompile may change) and
records it in the ledger. Opening the targets, the chain reads, compiling and talking to explorers
all wait until the script leaves the network (`finish`), so none of it competes with the script
for its interpreter or its cores. The run's summary table and its progress lines are said from
here too (see `after_deploy`).
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable, Mapping
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import KW_ONLY, dataclass, field
from typing import IO, TYPE_CHECKING

from ape_contract_verify.derive.ape_gate import GATE
from ape_contract_verify.derive.artifacts import short_name
from ape_contract_verify.logs import get_logger
from ape_contract_verify.protocol.answers import Outcome
from ape_contract_verify.workflow.report import Report, live_line, outcome_for, rows_line, summary_table, tally
from ape_contract_verify.workflow.run_logs import run_children, scan_logs

if TYPE_CHECKING:
    from ape.api import ProviderAPI
    from rich.live import Live

    from ape_contract_verify.config import ContractVerifyConfig
    from ape_contract_verify.evm.reads import MemoizingChain
    from ape_contract_verify.json_types import JsonObject
    from ape_contract_verify.workflow.ledger import Ledger
    from ape_contract_verify.workflow.upgrades import UpgradeEvent
    from ape_contract_verify.workflow.verification import Verification

logger = get_logger()
_lock = threading.Lock()


@dataclass
class Targets:
    """The network's targets, opened when the script has ended (the run's `Verification`s, one
    per target), and why a target could not be opened."""

    destinations: list[Verification]
    error: str = ""


@dataclass(frozen=True)
class Pending:
    """A deploy waiting for the script to end: where, as what, and the transaction that made it."""

    address: str
    name: str | None
    txn_hash: str | None
    deployed_type: str | None


@dataclass(eq=False, repr=False)  # compared and shown as the object it is
class DeployQueue:
    """Deployments on one network of one `ape run`, verified once the script has left it, on
    background workers, on each of the network's targets, under each explorer's limit.

    Built from its parts (`open` makes them from a provider and the config): the network's label,
    its memoising chain reader (or what makes it: the reader is needed only once the script has
    ended), `open_targets` (the targets, opened at the drain), the ledger and `prepare` (the
    script-thread step of a deploy: the compile input it was built from, or None)."""

    network: str  # e.g. ethereum:local:foundry, for the summary
    _chain: MemoizingChain | Callable[[], MemoizingChain]
    _open_targets: Callable[[], Targets]
    _: KW_ONLY
    ledger: Ledger | None = None
    prepare: Callable[[str, str], JsonObject | None] | None = None
    provider: ProviderAPI | None = None
    timeout: float = 300.0
    workers: int = 16
    start_block: int = 0  # the run's first block, where its upgrades and children begin
    active: bool = field(default=True, init=False)
    seen: set[str] = field(default_factory=set, init=False)
    pending: list[Pending] = field(default_factory=list, init=False)  # deploys not yet handed to the workers
    futures: list[tuple[Verification, Future[list[Report]]]] = field(default_factory=list, init=False)
    # the run's Upgraded/BeaconUpgraded/AdminChanged, in order
    upgrade_events: list[UpgradeEvent] = field(default_factory=list, init=False)
    # (children, upgrade events) when the caller walked the run's logs already
    scanned: tuple[list[str], list[UpgradeEvent]] | None = field(default=None, init=False)
    ends_with_run: str = field(default="", init=False)  # why the chain ends with the run, for the advice
    _targets: Targets | None = field(default=None, init=False)
    _pool: ThreadPoolExecutor | None = field(default=None, init=False)
    # the script has left the network: a new deploy goes to the workers at once
    _draining: bool = field(default=False, init=False)
    _gated: bool = field(default=False, init=False)  # whether this queue told the gate that a script runs
    # address -> how each target done so far ended
    _done: dict[str, list[Report | None]] = field(default_factory=dict, init=False)
    # future -> (name, address), for the lines that say what ended or is awaited
    _what: dict[Future[list[Report]], tuple[str, str]] = field(default_factory=dict, init=False)

    @property
    def chain(self) -> MemoizingChain:
        """The run's memoising reader, made on first use."""
        if callable(self._chain):
            self._chain = self._chain()
        return self._chain

    @classmethod
    def open(
        cls, provider: ProviderAPI, cfg: ContractVerifyConfig, network: str, start_block: int | None = None
    ) -> DeployQueue:
        """The queue of `provider`'s network in this run, on the targets `cfg` gives it. Cheap, as
        it runs at the script's first deploy: the targets are resolved, not opened."""
        from ape import project

        from ape_contract_verify.client.targets import resolve_targets
        from ape_contract_verify.workflow.ledger import Ledger
        from ape_contract_verify.workflow.plan import Derivations

        def chain() -> MemoizingChain:
            from ape_contract_verify.evm.chain import ApeProviderChain
            from ape_contract_verify.evm.reads import MemoizingChain

            return MemoizingChain(ApeProviderChain(provider))

        derivations = Derivations(project)
        error = ""
        try:
            chain_id = provider.chain_id
            net = provider.network
            targets = resolve_targets(net.ecosystem.name, net.name, chain_id, config=cfg)
        except Exception as err:
            targets, error = [], str(err)

        def open_targets() -> Targets:
            """The network's targets opened on one run (the process's embedded explorer on a local
            network, so `Contract(address)` and links later see what was verified there), sharing
            the derivations the deploys prepared."""
            from ape_contract_verify.workflow.plan import Options
            from ape_contract_verify.workflow.verification import VerificationRun

            errors = [error] if error else []
            options = Options.from_config(cfg, ask_first=False)  # deployed by this very run: no question first
            run = VerificationRun(project, options, client_options={"max_retries": cfg.max_retries})
            run.add_network(
                network,
                targets,
                provider,
                queue.chain,
                on_error=lambda target, err: errors.append(f"{target.name}: {err}"),
                derivations=derivations,
            )
            return Targets(run.destinations, "; ".join(errors))

        def prepare(address: str, deployed_type: str) -> JsonObject | None:
            """Ape's artifact of the deployed type and its compile input, as Ape built it."""
            try:
                derivations.prepare(address, deployed_type, bytes(provider.get_code(address)))
            except Exception as err:  # the workers resolve it later, once the script has ended
                logger.debug("contract_verify: %s not prepared at the deploy: %s", address, err)
            prepared = derivations.prepared.get(address.lower())
            return prepared.resolved.get("group") if prepared is not None else None

        if start_block is None:
            start_block = provider.get_block("latest").number or 0
        queue = cls(
            network,
            chain,
            open_targets,
            ledger=Ledger.for_chain(project, chain_id) if targets else None,
            prepare=prepare,
            provider=provider,
            timeout=cfg.timeout,
            workers=cfg.workers,
            start_block=start_block,
        )
        if not targets:
            logger.error("contract_verify: verification after deploy on %s is off: %s", network, error or "no target")
            queue.active = False
            return queue

        GATE.script_started()  # from now on plugin threads leave Ape's managers to the script
        queue._gated = True
        return queue

    def add(self, address: str, name: str | None, txn_hash: str | None, deployed_type: str | None = None) -> None:
        """A deploy of the run, queued once. `deployed_type` is the type Ape deployed
        (`artifacts.type_reference`; None for what a factory made): it is the one verified, and
        the ledger keeps it for `ape verify all`."""
        from ape_contract_verify.protocol.values import checksum

        address = checksum(address)
        if address.lower() in self.seen:
            return
        self.seen.add(address.lower())
        group = self.prepare(address, deployed_type) if deployed_type and self.prepare is not None else None
        if self.ledger is not None:
            self.ledger.recorded(name or address, address, self.network, deployed_type, group)
        self.pending.append(Pending(address, name, txn_hash, deployed_type))
        if self._draining:  # the script has ended: the workers take it now
            self._dispatch()

    def verify_now(self, address: str) -> None:
        """Verify a deploy still pending, now, and wait for it: the script asked about it (Ape's
        explorer, for `Contract(address)`), so it waits for the plugin. The rest still waits."""
        mine = [p for p in self.pending if p.address.lower() == address.lower()]
        if not mine or not self.active:
            return

        others, self.pending = [p for p in self.pending if p not in mine], mine
        self._start()
        first = len(self.futures)
        self._dispatch()
        self.pending = others
        wait([future for _, future in self.futures[first:]], timeout=self.timeout + 60)

    def _start(self) -> Targets:
        """Open the targets and the workers (once the script has left the network)."""
        if self._targets is None:
            self._targets = self._open_targets()
            # Workers mostly wait (for the explorer's jobs and the rate limiter), so there are more
            # of them than cores; the limiters, not the pool, bound the load on the explorers.
            self._pool = ThreadPoolExecutor(max_workers=self.workers, thread_name_prefix="verify")
        return self._targets

    def _dispatch(self) -> None:
        """Hand every pending deploy to the workers, each read first on this (the script's) thread."""

        targets, pool = self._targets, self._pool
        if targets is None or pool is None:
            return
        pending, self.pending = self.pending, []
        for deploy in pending:
            try:
                self._warm(deploy.address, deploy.txn_hash)
            except Exception as err:  # the workers read it themselves
                logger.debug("contract_verify: %s not read ahead: %s", deploy.address, err)
            for destination in targets.destinations:
                future = pool.submit(self._verify, destination, deploy.address, deploy.name, deploy.deployed_type)
                label = short_name(deploy.name or deploy.deployed_type or "") or deploy.address[:10]
                self._what[future] = (label, deploy.address)
                self.futures.append((destination, future))

    def _warm(self, address: str, txn_hash: str | None) -> None:
        """Read what the workers will need, through the memoising reader."""
        from ape_contract_verify.evm.proxies import detect_proxy

        if txn_hash and self.provider is not None:
            from ape_contract_verify.evm.reads import Creation

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

    def _verify(
        self, destination: Verification, address: str, name: str | None, deployed_type: str | None = None
    ) -> list[Report]:
        try:
            reports = destination.contract(address, deployed_type=deployed_type)
        except Exception as err:  # reported, never raised into the script
            reports = [Report(name or address[:10], address, Outcome.ERROR, str(err))]
        if self.ledger is None:
            return reports
        try:  # a proxy: the implementation linked on this target, for following upgrades
            from ape_contract_verify.workflow.upgrades import record_links

            record_links(
                self.ledger, name or address, address, reports, {destination.target.name: destination.target.url}
            )
        except Exception as err:
            logger.warning("contract_verify: %s", err)
        # The ledger says how the address ended on every target: written once the last one ends.
        with _lock:
            done = self._done.setdefault(address.lower(), [])
            done.append(outcome_for(address, reports))
            last = self._targets is not None and len(done) == len(self._targets.destinations)
        # The first that did not verify, else the first.
        report = min((r for r in done if r is not None), key=lambda r: r.ok, default=None) if last else None
        if report is not None:
            try:
                self.ledger.change(
                    name or report.contract, address, lambda e: e.ended(str(report.outcome), report.reason)
                )
            except Exception as err:  # the verification stands; the ledger says why it is stale
                logger.warning("contract_verify: %s", err)
        return reports

    def add_factory_deployments(self, max_blocks: int = 5000) -> None:
        """Contracts that other contracts created during the run (factories, CREATE2 deployers,
        clones, helpers made in a constructor) never pass through `deploy`: `run_children` finds
        them, named by an event or not, and each is queued too. The same walk keeps the run's
        upgrade events (`workflow/upgrades.py`), which `finish` follows."""
        scanned, self.scanned = self.scanned, None  # already walked (after_deploy, a run with no deploy)
        if scanned is None:
            scan = scan_logs(self.provider, self.start_block, self.seen, max_blocks)
            scanned = (
                run_children(self.provider, self.start_block, scan, self.seen, reader=self.chain.base),
                scan.events,
            )
        children, self.upgrade_events = scanned
        for address in children:
            self.add(address, None, None)

    def finish(self) -> list[tuple[str, list[Report]]]:
        """Verify what the script deployed, now that it has left the network: open the targets,
        hand every deploy (and what factories made) to the workers, and wait for each to end; then
        stop. (target, reports) per target. Each verification that ends says so as it ends (a live
        line on a terminal, a line each in a log), and a wait with none ending says what it waits
        for, so a CI log is never silent."""

        if not self.active:
            return []
        if self.provider is not None:
            try:
                from ape_contract_verify.workflow import local_explorers

                self.ends_with_run = local_explorers.ends_with_run(self.provider)
            except Exception as err:  # the advice then assumes the chain outlives the run
                logger.debug("contract_verify: %s", err)
        targets = self._start()
        if targets.error:
            logger.error(
                "contract_verify: verification after deploy on %s %s: %s",
                self.network,
                "is off" if not targets.destinations else "skips a target",
                targets.error,
            )
        if not targets.destinations:  # recorded in the ledger: `ape verify all` can do it later
            self.close()
            return []
        for destination in targets.destinations:
            logger.info(
                "contract_verify: verifying the deployments on %s on %s", self.network, destination.target.label
            )
        self._draining = True
        self._dispatch()
        try:
            self.add_factory_deployments()
        except Exception as err:
            logger.warning("contract_verify: could not look for factory deployments: %s", err)
        self.active = False
        results: list[list[Report]] = [[] for _ in self.futures]
        progress = Progress(self.network, len(self.futures))
        pending = {future: index for index, (_, future) in enumerate(self.futures)}
        deadline = time.monotonic() + self.timeout + 60
        while pending:
            remaining = deadline - time.monotonic()
            ended, _ = wait(pending, timeout=max(0.0, min(HEARTBEAT, remaining)), return_when=FIRST_COMPLETED)
            if not ended and remaining > 0:
                progress.waiting([self._what.get(f, ("?", "?")) for f in sorted(pending, key=pending.__getitem__)])
                continue
            # Past the deadline, every future left: said, never waited for forever.
            for future in sorted(ended or pending, key=pending.__getitem__):
                index = pending.pop(future)
                target = self.futures[index][0].target
                why = "" if future.done() else f"not finished within {self.timeout + 60:.0f} s"
                try:
                    results[index] = [] if why else future.result()
                except Exception as err:
                    why = f"not finished: {err}"
                if why:
                    name, address = self._what.get(future, ("?", "?"))
                    results[index] = [Report(name, address, Outcome.ERROR, why, target=target.name)]
                progress.ended(results[index], target.label)
        progress.close()
        by_target: dict[str, list[Report]] = {d.target.name: [] for d in targets.destinations}
        for (destination, _), reports in zip(self.futures, results):
            for report in reports:
                report.target_label = report.target_label or destination.target.label
            by_target[destination.target.name] += reports
        if self.upgrade_events and self.ledger is not None and self._pool is not None:
            from ape_contract_verify.workflow.upgrades import follow

            try:  # after the deploys': a relink follows their link
                followed = follow(
                    self.upgrade_events, self.chain, self.ledger, targets.destinations, self.seen, self._pool.submit
                )
            except Exception as err:
                logger.warning("contract_verify: could not follow the run's upgrades on %s: %s", self.network, err)
                followed = []
            for name, reports in followed:
                by_target.setdefault(name, []).extend(reports)
        self.close()
        return list(by_target.items())

    def close(self) -> None:
        self.active = False
        if self._pool is not None:
            self._pool.shutdown(wait=False, cancel_futures=True)
        if self._gated:
            self._gated = False
            GATE.script_ended()
        if not callable(self._chain):
            self._chain.close()  # a fork the creation search started (a node without traces)
        self._targets = None


def network_table(groups: list[tuple[str, str, list[Report]]]) -> str:
    """The run's summary: one row per contract and target, with a network column once several
    networks are in it; one network is named above the table instead."""

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

    by_network: dict[str, list[Report]] = {}
    for network, _, reports in groups:
        by_network.setdefault(network, []).extend(reports)
    lines = []
    for network, reports in by_network.items():
        if not reports:
            continue
        line = rows_line(reports, network)
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
        if not self.tty:
            print(text, file=self.stream, flush=True)
            return
        # rich is imported here, not at the top: this module loads with the plugin on every command.
        from rich.text import Text

        if self._live is None:  # kept on screen when stopped
            self._live = live_line(self.stream)
            self._live.start()
        self._live.update(Text(text, no_wrap=True, overflow="ellipsis"), refresh=True)

    def _counted(self) -> str:

        return f"contract_verify: {self.count}/{self.total} verifications on {self.network} ended: {tally(self.done)}"

    def ended(self, reports: list[Report], target: str) -> None:
        self.count += 1
        self.done += reports
        if self.tty:
            self._print(self._counted())
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
        if self._live is not None:
            self._live.stop()  # the line stays, and the next output starts below it
        elif not self.tty and self.total:
            self._print(self._counted())
