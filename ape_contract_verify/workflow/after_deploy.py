"""Verification after deploy, for `ape run` with `contract_verify.auto: true`.

Ape 0.8 has no deploy event. Every `AccountAPI.deploy` passes its new instance through
`ContractCache.cache_deployment`, so that one method is wrapped here; nothing else in Ape is
touched except `DeploymentManager.track`, which `publish=True` would otherwise break on a dev
network (Ape raises "Can only publish deployments on a live network" after the deploy; the
publishing itself is the plugin's explorer, `workflow/ape_explorer.py`), and the provider context's exit, where the queue is drained while the chain is still
connected. The wrappers are installed only inside `ape run` (see `install`), never in `ape test`.

On the script's thread the hook only reads what verification needs from the chain (code,
creation input, proxy slots), which is cheap; compiling, comparing and talking to the explorer
run on background workers, beside the script. Those reads are memoised (`evm.wrappers.MemoizingChain`), so
the workers (and the embedded explorer) never touch a provider that is not thread-safe while the
script uses it.
"""

import logging
import sys
import threading
import time
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, Optional

logger = logging.getLogger("ape_contract_verify")

_installed = False
_queue: Optional["DeployQueue"] = None
_queue_lock = threading.Lock()


def install() -> None:
    """Wrap Ape's deploy path; idempotent. Cheap: auto mode is read at the first deploy."""
    global _installed
    if _installed:
        return
    _installed = True
    from ape.api.networks import ProviderContextManager
    from ape.managers._contractscache import ContractCache
    from ape.managers.project import DeploymentManager

    original_cache = ContractCache.cache_deployment
    original_track = DeploymentManager.track
    original_exit = ProviderContextManager.__exit__

    def cache_deployment(self, contract_instance, *args, **kwargs):
        result = original_cache(self, contract_instance, *args, **kwargs)
        try:
            queue = current_queue()
            if queue is not None:
                queue.add_instance(contract_instance)
        except Exception as err:  # a deploy is never undone by verification
            logger.warning("contract_verify: could not queue %s: %s", getattr(contract_instance, "address", "?"), err)
        return result

    def track(self, contract, allow_dev: bool = False):
        if current_queue() is not None and self.provider.network.is_dev:
            return None  # the plugin records and verifies it; Ape would raise on a dev network
        return original_track(self, contract, allow_dev=allow_dev)

    def exit_provider(self, exception, *args, **kwargs):
        queue = _queue
        failed = []
        if queue is not None and queue.bound_to(getattr(self, "_provider", None)):
            failed = [r for r in queue.finish() if not r.ok]
        result = original_exit(self, exception, *args, **kwargs)
        if failed and queue.cfg.fail_on_error and exception is None:
            raise SystemExit(1)  # config asked that failed verifications fail the command
        return result

    ContractCache.cache_deployment = cache_deployment
    DeploymentManager.track = track
    ProviderContextManager.__exit__ = exit_provider


def current_queue() -> Optional["DeployQueue"]:
    """The run's queue, created at the first deploy when auto mode is on."""
    global _queue
    with _queue_lock:
        if _queue is None:
            from ape import chain, config

            cfg = config.get_config("contract_verify")
            if not cfg.auto:
                return None
            _queue = DeployQueue(chain.provider, cfg)
        return _queue if _queue.active else None


class DeployQueue:
    """Deployments of one `ape run`, verified on background workers under the explorer's limit."""

    def __init__(self, provider: Any, cfg: Any, workers: Optional[int] = None):
        from ape_contract_verify.evm.chain import ApeProviderChain
        from ape_contract_verify.evm.wrappers import MemoizingChain

        self.provider = provider
        self.cfg = cfg
        self.active = True
        self.chain = MemoizingChain(ApeProviderChain(provider))
        self.futures: list[Future] = []
        # Workers mostly wait (for the explorer's jobs and the rate limiter), so there are more
        # of them than cores; the limiter, not the pool, bounds the load on the explorer.
        self.pool = ThreadPoolExecutor(max_workers=workers or cfg.workers, thread_name_prefix="verify")
        self.seen: set[str] = set()
        self._explorer_cm = None
        self._verification = None
        self._ledger = None
        self._setup_error: Optional[str] = None
        self.start_block = provider.get_block("latest").number or 0
        self._setup()

    def bound_to(self, provider: Any) -> bool:
        return provider is not None and provider is self.provider

    def _setup(self) -> None:
        from ape import config, project

        from ape_contract_verify.client.targets import resolve_target
        from ape_contract_verify.workflow.ledger import Ledger
        from ape_contract_verify.workflow.verification import Options, Verification, explorer_for

        network = self.provider.network
        try:
            chain_id = self.provider.chain_id
            target = resolve_target(
                network.ecosystem.name, network.name, None if network.is_local else chain_id,
                config=config.get_config("contract_verify"),
            )
            self._explorer_cm = explorer_for(
                target, self.provider, chain_reader=self.chain, max_retries=self.cfg.max_retries
            )
            client, browser = self._explorer_cm.__enter__()
        except Exception as err:
            self._setup_error = str(err)
            logger.error("contract_verify: auto verification is off for this run: %s", err)
            self.active = False
            return
        self._ledger = Ledger.for_chain(project, chain_id)
        options = Options(
            code_format=self.cfg.codeformat.value,
            check=self.cfg.check,
            license=self.cfg.license,
            poll_interval=min(self.cfg.poll_interval, 0.5) if target.is_local else self.cfg.poll_interval,
            timeout=self.cfg.timeout,
            ask_first=False,  # deployed by this very run
        )
        self._verification = Verification(client, project, self.chain, options, browser_url=browser)
        where = "the embedded local explorer" if target.is_local else target.url
        logger.info("contract_verify: verifying deployments on %s, beside the script", where)

    def add_instance(self, instance: Any) -> None:
        name = getattr(instance.contract_type, "name", None)
        self._queue_address(str(instance.address), name, getattr(instance, "txn_hash", None))

    def _queue_address(self, address: str, name: Optional[str], txn_hash: Optional[str]) -> None:
        from ape_contract_verify.protocol.values import checksum

        address = checksum(address)
        if address.lower() in self.seen:
            return
        self.seen.add(address.lower())
        self._warm(address, txn_hash)
        self._ledger.record(name or address, address, status="pending")
        self.futures.append(self.pool.submit(self._verify, address, name))

    def _warm(self, address: str, txn_hash: Optional[str]) -> None:
        """Read on the script's thread what the workers will need."""
        from ape_contract_verify.evm.proxies import detect_proxy

        if txn_hash:
            from ape import chain

            from ape_contract_verify.evm.chain import Creation

            receipt = chain.get_receipt(txn_hash)
            data = receipt.transaction.data
            self.chain.remember_creation(
                address,
                Creation(tx_hash=str(txn_hash), input=bytes(data), deployer=str(receipt.sender), factory=False),
            )
        self.chain.get_code(address)
        info = detect_proxy(self.chain, address)
        if info is not None:
            self.chain.get_code(info.implementation)

    def _verify(self, address: str, name: Optional[str]) -> list:
        from ape_contract_verify.protocol.answers import Outcome
        from ape_contract_verify.workflow.verification import Report, outcome_for

        try:
            reports = self._verification.contract(address, None)
        except Exception as err:  # reported, never raised into the script
            reports = [Report(name or address[:10], address, Outcome.ERROR, str(err))]
        if (report := outcome_for(address, reports)) is not None:
            self._ledger.record(name or report.contract, address, status=str(report.outcome), reason=report.reason)
        return reports

    def add_factory_deployments(self, max_blocks: int = 5000) -> None:
        """Contracts that other contracts created during the run (factories, CREATE2 deployers,
        clones) never pass through `deploy`. Their addresses show up in the run's event logs: any
        address there that has code now and had none when the run started is queued too."""
        latest = self.provider.get_block("latest").number or 0
        first = max(self.start_block + 1, latest - max_blocks + 1)
        candidates: list[str] = []
        for number in range(first, latest + 1):
            for txn in self.provider.get_block(number).transactions:
                receipt = self.provider.get_receipt(txn.txn_hash)
                for log in receipt.logs or []:
                    for word in _address_words(log):
                        if word.lower() not in self.seen and word not in candidates:
                            candidates.append(word)
        before = max(self.start_block, 0)
        for address in candidates:
            try:
                if self.provider.get_code(address) and not self.provider.get_code(address, block_id=before):
                    self._queue_address(address, None, None)
            except Exception as err:
                logger.debug("contract_verify: skipping %s: %s", address, err)

    def finish(self) -> list:
        """Wait for every queued verification, print the summary table, stop the explorer."""
        from ape_contract_verify.protocol.answers import Outcome
        from ape_contract_verify.workflow.verification import Report, summary_table

        if not self.active:
            return []
        try:
            self.add_factory_deployments()
        except Exception as err:
            logger.warning("contract_verify: could not look for factory deployments: %s", err)
        self.active = False
        reports: list = []
        total = len(self.futures)
        deadline = time.monotonic() + self.cfg.timeout + 60
        for index, future in enumerate(self.futures, start=1):
            remaining = max(0.0, deadline - time.monotonic())
            try:
                reports += future.result(timeout=remaining)
            except Exception as err:
                reports.append(Report("?", "?", Outcome.ERROR, f"not finished: {err}"))
            _progress_line(f"contract_verify: {index}/{total} deployments verified or reported")
        _progress_line(None)
        self.pool.shutdown(wait=False, cancel_futures=True)
        if self._explorer_cm is not None:
            self._explorer_cm.__exit__(None, None, None)
        if reports:
            print(summary_table(reports))
            left = [r for r in reports if not r.ok]
            if left:
                print(f"contract_verify: {len(left)} not verified; run `ape verify all` to finish them", file=sys.stderr)
        return reports


def _progress_line(text: Optional[str]) -> None:
    """One live line on a terminal; plain lines (only the last) otherwise."""
    tty = sys.stderr.isatty()
    if text is None:
        if tty:
            print(file=sys.stderr)
        return
    if tty:
        print(f"\r\033[K{text}", end="", file=sys.stderr, flush=True)
    elif text.split()[1].split("/")[0] == text.split()[1].split("/")[1]:
        print(text, file=sys.stderr)


def _address_words(log: Any) -> list[str]:
    """Addresses a log mentions: in its indexed topics and its 32-byte data words."""
    from ape_contract_verify.protocol.values import checksum

    words = []
    raw = log if isinstance(log, dict) else getattr(log, "__dict__", {})
    topics = list(raw.get("topics") or [])[1:]
    data = raw.get("data") or b""
    if isinstance(data, str):
        data = bytes.fromhex(data.removeprefix("0x"))
    chunks = [bytes(t) if not isinstance(t, str) else bytes.fromhex(t.removeprefix("0x")) for t in topics]
    chunks += [bytes(data[i : i + 32]) for i in range(0, len(data) - len(data) % 32, 32)]
    for chunk in chunks:
        if len(chunk) == 32 and chunk[:12] == bytes(12) and chunk[12:] != bytes(20):
            words.append(checksum(chunk[12:]))
    return words
