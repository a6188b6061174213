"""The deploy hook's queue for one network: what a script deployed there, verified once it has ended.

The script comes first: at each deploy the queue does only what must be read then (the artifact
Ape deployed and the compile input it was built from, which a later recompile may change) and
records it in the ledger. Opening the targets, the chain reads, compiling and talking to explorers
all wait until the script leaves the network (`finish`), so none of it competes with the script
for its interpreter or its cores. Its progress lines are said from here too (`Progress`); the
run's summary is `after_deploy`'s. With auto off it has no targets: it only records, the deploys
and what the run's walk finds.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import KW_ONLY, dataclass, field
from typing import IO, TYPE_CHECKING

from ape_contract_verify.derive.ape_gate import GATE
from ape_contract_verify.logs import get_logger
from ape_contract_verify.protocol.answers import Outcome
from ape_contract_verify.workflow.report import Report, live_line, outcome_for, tally
from ape_contract_verify.workflow.run_logs import run_children, scan_logs

if TYPE_CHECKING:
    from ape.api import ProviderAPI
    from rich.live import Live

    from ape_contract_verify.client.targets import Target
    from ape_contract_verify.config import ContractVerifyConfig
    from ape_contract_verify.evm.reads import MemoizingChain
    from ape_contract_verify.json_types import JsonObject
    from ape_contract_verify.workflow.ledger import Ledger
    from ape_contract_verify.workflow.plan import Item
    from ape_contract_verify.workflow.upgrades import UpgradeEvent
    from ape_contract_verify.workflow.verification import Verification, VerificationRun

logger = get_logger()


@dataclass(eq=False, repr=False)  # compared and shown as the object it is
class DeployQueue:
    """Deployments on one network of one `ape run`, verified once the script has left it, on
    background workers, on each of the network's targets, under each explorer's limit.

    Built from its parts (`open` makes them from a provider and the config): the network's label,
    its memoising chain reader (it reads once the script has ended), `open_targets` (the run on
    the network's targets, opened at the drain), the ledger and `prepare` (the script-thread step
    of a deploy: the compile input it was built from, or None)."""

    network: str  # e.g. ethereum:local:foundry, for the summary
    chain: MemoizingChain  # the run's reads, memoised: the script's reads ahead are the workers'
    _open_targets: Callable[[], VerificationRun]
    _: KW_ONLY
    ledger: Ledger | None = None
    prepare: Callable[[str, str], JsonObject | None] | None = None
    provider: ProviderAPI | None = None
    timeout: float = 300.0
    workers: int = 16
    start_block: int = 0  # the run's first block, where its upgrades and children begin
    active: bool = True  # it verifies (False: with auto off, or no target, the run is only recorded)
    seen: dict[str, str | None] = field(default_factory=dict, init=False)  # each address deployed (lower): its name
    # deploys not yet handed to the workers, each with the transaction that made it
    pending: list[tuple[Item, str | None]] = field(default_factory=list, init=False)
    # each deploy on each target, handed to the workers, in order
    jobs: list[tuple[Item, Verification, Future[list[Report]]]] = field(default_factory=list, init=False)
    # the run's walk, once (`_walk`): its upgrade events in order (the children it found are queued)
    scanned: list[UpgradeEvent] | None = field(default=None, init=False)
    off: str = ""  # why verification could not start (then the run is only recorded)
    _run: VerificationRun | None = field(default=None, init=False)
    _pool: ThreadPoolExecutor | None = field(default=None, init=False)
    # the script has left the network: a new deploy goes to the workers at once
    _draining: bool = field(default=False, init=False)
    _gated: bool = field(default=False, init=False)  # whether this queue told the gate that a script runs

    @classmethod
    def open(
        cls,
        provider: ProviderAPI,
        cfg: ContractVerifyConfig,
        start_block: int | None = None,
        verify: bool = True,
    ) -> DeployQueue:
        """The queue of `provider`'s network in this run, on the targets `cfg` gives it (none with
        auto off: `verify` False, the run only recorded). Cheap, as it runs on the script's thread
        when the script enters the network (or at its first deploy there): the targets are
        resolved, not opened."""
        from ape import project

        from ape_contract_verify.client.targets import resolve_targets
        from ape_contract_verify.evm.chain import ApeProviderChain
        from ape_contract_verify.evm.reads import MemoizingChain
        from ape_contract_verify.workflow.ledger import Ledger
        from ape_contract_verify.workflow.plan import Derivations

        derivations = Derivations(project)
        error, chain_id, network = "", None, "the network"
        try:  # ecosystem:network:provider, for the summary (Ape's `network_choice` may be a URL)
            net = provider.network
            network = f"{net.ecosystem.name}:{net.name}:{provider.name}"
            chain_id = provider.chain_id
            targets = resolve_targets(net.ecosystem.name, net.name, chain_id, config=cfg) if verify else []
        except Exception as err:
            targets, error = [], str(err)

        def open_targets() -> VerificationRun:
            """The network's targets opened on one run (the process's embedded explorer on a local
            network, so `Contract(address)` and links later see what was verified there), sharing
            the derivations the deploys prepared; those that could not be opened are said."""
            from ape_contract_verify.workflow.plan import Options
            from ape_contract_verify.workflow.verification import VerificationRun

            def skipped(target: Target, err: Exception) -> None:
                logger.error("contract_verify: verification after deploy on %s skips %s: %s", network, target.name, err)

            options = Options.from_config(cfg, ask_first=False)  # deployed by this very run: no question first
            run = VerificationRun(project, options, client_options={"max_retries": cfg.max_retries})
            run.add_network(network, targets, provider, queue.chain, on_error=skipped, derivations=derivations)
            return run

        def prepare(address: str, deployed_type: str) -> JsonObject | None:
            """Ape's artifact of the deployed type and its compile input, as Ape built it (with
            auto off only the input, for `ape verify all` to verify from)."""
            if not targets:
                from ape_contract_verify.derive.artifacts import deployed_group_input

                return deployed_group_input(deployed_type, project)
            try:
                derivations.prepare(address, deployed_type, bytes(provider.get_code(address)))
            except Exception as err:  # the workers resolve it later, once the script has ended
                logger.debug("contract_verify: %s not prepared at the deploy: %s", address, err)
            prepared = derivations.prepared.get(address.lower())
            return prepared.resolved.get("group") if prepared is not None else None

        if start_block is None:  # the block before the deploy (the latest)
            start_block = max((provider.get_block("latest").number or 0) - 1, 0)
        queue = cls(
            network,
            MemoizingChain(ApeProviderChain(provider)),  # reads nothing until asked
            open_targets,
            ledger=Ledger.for_chain(project, chain_id) if chain_id is not None else None,
            prepare=prepare,
            provider=provider,
            timeout=cfg.timeout,
            workers=cfg.workers,
            start_block=start_block,
            active=bool(targets),
            off=(error or "no target") if verify and not targets else "",
        )
        if targets:
            GATE.script_started()  # from now on plugin threads leave Ape's managers to the script
            queue._gated = True
        return queue

    def add(self, address: str, name: str | None, txn_hash: str | None, deployed_type: str | None = None) -> None:
        """A deploy of the run, queued once. `deployed_type` is the type Ape deployed
        (`artifacts.type_reference`; None for what a factory made): it is the one verified, and
        the ledger keeps it for `ape verify all`."""
        from ape_contract_verify.protocol.values import checksum
        from ape_contract_verify.workflow.plan import Item

        address = checksum(address)
        if address.lower() in self.seen:
            return
        if self._gated:
            GATE.script_thread()  # a script's own thread may deploy from another thread
        self.seen[address.lower()] = name
        group = self.prepare(address, deployed_type) if deployed_type and self.prepare is not None else None
        if self.ledger is not None:
            self.ledger.recorded(name or address, address, self.network, deployed_type, group)
        # Verified as the type deployed (the name only names its row and entry: no lookup by name)
        self.pending.append((Item(self.network, address, deployed_type=deployed_type), txn_hash))
        if self._draining:  # the script has ended: the workers take it now
            self._dispatch()

    def verify_now(self, address: str) -> None:
        """Verify a deploy still pending, now, and wait for it: the script asked about it (Ape's
        explorer, for `Contract(address)`), so it waits for the plugin (its workers may call into
        Ape meanwhile). The rest still waits."""
        mine = [p for p in self.pending if p[0].address.lower() == address.lower()]
        if not mine or not self.active:
            return
        others, self.pending = [p for p in self.pending if p not in mine], mine
        with GATE.script_waits():
            self._start()
            first = len(self.jobs)
            self._dispatch()
            self.pending = others
            wait([future for _, _, future in self.jobs[first:]], timeout=self.timeout + 60)

    def _start(self) -> list[Verification]:
        """Open the targets and the workers (once the script has left the network)."""
        if self._run is None:
            self._run = self._open_targets()
            # Workers mostly wait (for the explorer's jobs and the rate limiter), so there are more
            # of them than cores; the limiters, not the pool, bound the load on the explorers.
            self._pool = ThreadPoolExecutor(max_workers=self.workers, thread_name_prefix="verify")
        return self._run.destinations

    def _dispatch(self) -> None:
        """Hand every pending deploy to the workers, each read first on this (the script's) thread."""
        if self._run is None or self._pool is None:
            return
        pending, self.pending = self.pending, []
        for item, txn_hash in pending:
            try:
                self._warm(item.address, txn_hash)
            except Exception as err:  # the workers read it themselves
                logger.debug("contract_verify: %s not read ahead: %s", item.address, err)
            self.jobs += self._run.submit(self._pool, [item], self._record)

    def _warm(self, address: str, txn_hash: str | None) -> None:
        """Read what the workers will need, through the memoising reader."""
        from ape_contract_verify.evm.proxies import detect_proxy

        if txn_hash and self.provider is not None:
            from ape_contract_verify.evm.reads import Creation

            receipt = self.provider.get_receipt(txn_hash)
            creation = Creation(str(txn_hash), bytes(receipt.transaction.data), str(receipt.sender), factory=False)
            self.chain.remember_creation(address, creation)
        self.chain.get_code(address)
        info = detect_proxy(self.chain, address)
        if info is not None:
            self.chain.get_code(info.implementation)

    def _record(self, item: Item, reports: list[Report]) -> None:
        """How `item` ended on a target, and a proxy's link, in the ledger as `verify all` keeps them."""
        if self.ledger is None or self._run is None:
            return
        from ape_contract_verify.workflow.recorded import record_outcome

        try:
            urls = {d.target.name: d.target.url for d in self._run.destinations}
            ended = outcome_for(item.address, reports)  # a child is named by its verification
            name = self.seen.get(item.address.lower()) or (ended.contract if ended is not None else item.address)
            record_outcome(self.ledger, name, item, reports, urls, logger.warning)
        except Exception as err:  # the verification stands; the ledger says why it is stale
            logger.warning("contract_verify: %s", err)

    def _walk(self) -> list[UpgradeEvent]:
        """The run's one walk: the contracts other contracts created in it (factories, CREATE2
        deployers, clones, helpers made in a constructor), which never pass through `deploy`,
        named by an event or not (`run_children`), queued (recorded, and verified once the queue
        drains) by address; and its upgrade events (`evm/upgrades.py`), returned."""
        if self.scanned is None:
            self.scanned = []
            try:
                scan = scan_logs(self.provider, self.start_block, self.seen)
            except Exception as err:
                logger.warning("contract_verify: could not read the run's logs on %s: %s", self.network, err)
                return self.scanned
            self.scanned = scan.events
            try:  # children left out can still be verified by address
                for address in run_children(self.provider, self.start_block, scan, self.seen, reader=self.chain.base):
                    self.add(address, None, None)
            except Exception as err:
                logger.warning("contract_verify: could not look for factory deployments: %s", err)
        return self.scanned

    def _record_run(self) -> None:
        """Auto off, or verification could not start: what factories made in the run and which
        proxies moved go in the ledger (the deploys are in it already), for `ape verify all`."""
        from ape_contract_verify.workflow.upgrades import record_upgrades

        events = self._walk()
        if self.off and self.seen:
            logger.error("contract_verify: verification after deploy on %s is off: %s", self.network, self.off)
        if self.ledger is not None:
            moved = record_upgrades(events, self.chain, self.ledger, self.network) if events else []
            if moved:
                logger.info(
                    "contract_verify: %d upgraded prox%s recorded; `ape verify all` links %s again",
                    len(moved),
                    "y" if len(moved) == 1 else "ies",
                    "it" if len(moved) == 1 else "them",
                )
        self.close()

    def finish(self) -> list[Report]:
        """Verify what the script deployed, now that it has left the network: open the targets,
        hand every deploy (and what factories made) to the workers, and wait for each to end; then
        stop. The rows, in deploy order, then the relinks. Each verification that ends says so as it ends (a live
        line on a terminal, a line each in a log), and a wait with none ending says what it waits
        for, so a CI log is never silent."""

        if not self.active:
            self._record_run()
            return []
        if not self.pending and not self.jobs and not (self._walk() or self.pending):  # the run only called contracts
            self.close()
            return []
        destinations = self._start()
        if not destinations:  # none could be opened (said): recorded in the ledger, `ape verify all` can do it later
            self.close()
            return []
        for destination in destinations:
            logger.info(
                "contract_verify: verifying the deployments on %s on %s", self.network, destination.target.label
            )
        self._draining = True
        self._dispatch()
        events = self._walk()  # what factories made goes to the workers as it is found
        self.active = False
        results: dict[Future[list[Report]], list[Report]] = {}
        progress = Progress(self.network, len(self.jobs))
        deadline = time.monotonic() + self.timeout + 60
        while left := [job for job in self.jobs if job[2] not in results]:
            remaining = deadline - time.monotonic()
            timeout = max(0.0, min(HEARTBEAT, remaining))
            ended, _ = wait([future for _, _, future in left], timeout=timeout, return_when=FIRST_COMPLETED)
            if not ended and remaining > 0:
                progress.waiting([item.label for item, _, _ in left])
                continue
            # Past the deadline, every job left: said, never waited for forever.
            for item, destination, future in [job for job in left if job[2] in ended] or left:
                try:
                    results[future] = future.result(timeout=0)
                except Exception as err:
                    why = f"not finished: {err}" if future.done() else f"not finished within {self.timeout + 60:.0f} s"
                    results[future] = destination.stamp([Report(item.label, item.address, Outcome.ERROR, why)])
                progress.ended(results[future], destination.target.label)
        progress.close()
        reports = [report for _, _, future in self.jobs for report in results[future]]
        if events and self.ledger is not None and self._pool is not None:
            from ape_contract_verify.workflow.upgrades import follow

            try:  # after the deploys': a relink follows their link
                followed = follow(events, self.chain, self.ledger, destinations, self.seen, self._pool.submit)
            except Exception as err:
                logger.warning("contract_verify: could not follow the run's upgrades on %s: %s", self.network, err)
                followed = []
            reports += [report for _, relinks in followed for report in relinks]
        self.close()
        return reports

    def close(self) -> None:
        self.active = False
        if self._pool is not None:
            self._pool.shutdown(wait=False, cancel_futures=True)
        if self._gated:
            self._gated = False
            GATE.script_ended()
        self.chain.close()  # a fork the creation search started (a node without traces)
        self._run = None


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
        what = "; ".join(f"{r.contract} {r.outcome}" for r in reports) or "nothing to report"
        address = next((r.address for r in reports), "")
        where = f" {address[:10]}…" if address.startswith("0x") else ""
        line = f"contract_verify: {self.count}/{self.total} on {self.network}:{where} {what} ({target})"
        self._print(self._counted() if self.tty else line)

    def waiting(self, awaited: list[str]) -> None:
        if self.tty:
            return  # the live line is still there
        names = ", ".join(dict.fromkeys(awaited))
        self._print(
            f"contract_verify: waiting for {len(awaited)} verification{'s' if len(awaited) != 1 else ''} "
            f"on {self.network} ({time.monotonic() - self.started:.0f} s): {names}"
        )

    def close(self) -> None:
        if self._live is not None:
            self._live.stop()  # the line stays, and the next output starts below it
        elif not self.tty and self.total:
            self._print(self._counted())
