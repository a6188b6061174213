"""Verification after deploy: the deploy hook, deciding at each deploy what `ape run` verifies or records.

`install()` runs when Ape loads the plugin's config, in every command, and imports nothing: the
patches of Ape's deploy path (`ape_patches`) go in when Ape imports their modules and call this
module's `DeployHook`. Whether a deploy is verified is decided at the deploy, not from `sys.argv`:
inside Ape's `run` command (found on the click context stack, however `ape run` was started) it is
recorded in the plugin's ledger, and with `contract_verify.auto: true` verified; in `ape test` or
the console only with `auto: always`. When a patch could not go in (Ape changed under it), deploys
are recorded, never verified, and the hook says why.

Each network a script deploys to (each provider) has its own `RunState`: its queue and explorer
targets with auto on (`deploy_queue.DeployQueue`), its ledger with auto off; a script may switch
networks with `networks.parse_network_choice`. A network's state ends when the script leaves its
last provider context, and the run ends with one summary of every network.

On the script's thread the hook only records each deploy and what a later recompile could change
(the artifact Ape deployed and its compile input), which is cheap; the chain reads, compiling,
comparing and talking to the explorers wait until the script leaves the network, so the script
runs as fast as with auto off. Those reads are memoised (`evm.reads.MemoizingChain`) on the
script's thread, so the workers (and the embedded explorer) never use a provider concurrently.
"""

from __future__ import annotations

import sys
import threading
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

from ape_contract_verify.logs import get_logger
from ape_contract_verify.workflow.ape_patches import PATCHES

if TYPE_CHECKING:
    from ape.api import ProviderAPI
    from ape.contracts import ContractInstance
    from ethpm_types import ContractType

    from ape_contract_verify.config import ContractVerifyConfig
    from ape_contract_verify.workflow.deploy_queue import DeployQueue
    from ape_contract_verify.workflow.ledger import Ledger
    from ape_contract_verify.workflow.report import Report

logger = get_logger()

Mode = Literal["verify", "record"]


@dataclass
class RunState:
    """One network of one run (one provider object): what the hook keeps of it until the script
    leaves its last context."""

    provider: ProviderAPI  # held, so its id() is not reused while the state lives
    network: str  # ecosystem:network:provider
    start_block: int | None = None  # where the network's context began: upgrades may begin there
    queue: DeployQueue | None = None  # auto on: its verifications
    ledger: Ledger | None = None  # auto off: where its deploys are recorded
    recorded_after: int | None = None  # auto off: the block before the first recorded deploy
    recorded: set[str] = field(default_factory=set)  # auto off: the addresses recorded (lower case)


class DeployHook:
    """What the patches of Ape call (`ape_patches.DeployHooks`): one per process, each network's
    `RunState`, and the summary of the networks drained since the last one."""

    def __init__(self) -> None:
        self.lock = threading.RLock()
        self.runs: dict[int, RunState] = {}  # by id() of the provider
        self.drained: list[tuple[str, str, list[Report]]] = []  # (network, target, reports) not yet summed up
        self.endings: dict[str, str] = {}  # network -> why its chain ends with the run (deploy_queue.run_advice)
        self.warned: set[str] = set()

    # -- the patches' calls

    def deployed(self, instance: ContractInstance) -> None:
        from ape_contract_verify.evm.bytecode import to_hex

        txn_hash = instance.txn_hash
        self.record(str(instance.address), instance.contract_type, None if txn_hash is None else to_hex(txn_hash))

    def declared(self, address: object, contract_type: ContractType, txn_hash: object = None) -> None:
        try:
            if isinstance(address, str) and address.startswith("0x") and len(address) == 42:  # EIP-5202: an address
                self.record(address, contract_type, None if txn_hash is None else str(txn_hash))
        except Exception as err:  # a declare is never undone by verification
            logger.warning("contract_verify: could not queue the blueprint %s: %s", address, err)

    def record(self, address: str, contract_type: ContractType, txn_hash: str | None) -> None:
        """A deploy (or a declared blueprint) of this run: queued, or recorded in the ledger."""
        mode = deploy_mode()
        provider = _active_provider()
        if mode is None or provider is None:  # a deploy needs a provider: not here
            return
        from ape_contract_verify.derive.artifacts import type_reference

        reference = type_reference(contract_type)
        queue = self.queue_for(provider) if mode == "verify" else None
        if queue is not None and queue.active:
            from ape_contract_verify.derive.ape_gate import GATE

            GATE.script_thread()  # a script's own thread may deploy from another thread
            queue.add(address, contract_type.name, txn_hash, reference)
            return
        # auto off, or verification could not start: the ledger lets `ape verify all` do it later
        from ape import project

        from ape_contract_verify.derive.inputs import deployed_group_input
        from ape_contract_verify.workflow.ledger import Ledger

        state = self.run_of(provider)
        with self.lock:
            if state.ledger is None:
                state.ledger = Ledger.for_chain(project, provider.chain_id)
            ledger = state.ledger
        # The input as Ape compiled it, before any recompile, for `ape verify all` to verify from.
        kept = deployed_group_input(reference, project) if reference else None
        ledger.recorded(contract_type.name or address, address, state.network, reference, kept)
        with self.lock:
            if state.recorded_after is None:
                state.recorded_after = _block_before(provider)
            state.recorded.add(address.lower())

    def verifies_here(self) -> bool:
        return self.current_queue() is not None

    def entered(self, provider: ProviderAPI) -> None:
        """A script may upgrade before (or without) deploying: the run's upgrades begin here."""
        if deploy_mode() is None:
            return
        state = self.run_of(provider)
        if state.start_block is None:
            try:
                state.start_block = provider.get_block("latest").number or 0
            except Exception as err:
                logger.debug("contract_verify: no start block on %s: %s", state.network, err)

    def left(self, provider: ProviderAPI) -> None:
        """Drain the network's queue (or walk its run, with no queue) while its chain is connected."""
        with self.lock:
            state = self.runs.pop(id(provider), None)
        if state is None:
            return
        queue = state.queue or self.without_queue(state)
        if queue is not None:
            from ape_contract_verify.derive.ape_gate import GATE

            with GATE.script_waits():  # the script waits here: workers may now call into Ape
                finished = queue.finish()
            with self.lock:
                self.drained.extend((queue.network, target, reports) for target, reports in finished)
                if queue.ends_with_run:
                    self.endings[queue.network] = queue.ends_with_run

    def left_all(self, exception: BaseException | None) -> None:
        failed = self.print_summary()
        self.unhooked()
        if failed and exception is None and plugin_config().fail_on_error:
            raise SystemExit(1)  # config asked that failed verifications fail the command

    def unhooked(self) -> None:
        """One warning when auto mode is on where it verifies, but a patch could not go in."""
        if not PATCHES.problems:
            return
        try:
            cfg = plugin_config()
            if not (cfg.auto and (cfg.auto == "always" or in_ape_run() or _script_picked())):
                return
        except Exception:
            return
        from importlib.metadata import version

        self.warn_once("unhooked", PATCHES.message(version("eth-ape")))

    # -- each network's state

    def run_of(self, provider: ProviderAPI) -> RunState:
        with self.lock:
            state = self.runs.get(id(provider))
            if state is None:
                state = self.runs[id(provider)] = RunState(provider, _label(provider))
            return state

    def queue_for(self, provider: ProviderAPI) -> DeployQueue:
        state = self.run_of(provider)
        with self.lock:
            if state.queue is None:
                from ape_contract_verify.workflow.deploy_queue import DeployQueue

                state.queue = DeployQueue.open(provider, plugin_config(), state.network, start_block=state.start_block)
            return state.queue

    def current_queue(self) -> DeployQueue | None:
        """The connected network's queue when deploys are verified now (created on first use)."""
        provider = _active_provider()
        if provider is None or deploy_mode() != "verify":
            return None
        queue = self.queue_for(provider)
        return queue if queue.active else None

    def holding(self, address: str) -> DeployQueue | None:
        """The connected network's queue when it verifies a deploy of `address` (`publish=True`
        then has nothing to add)."""
        with self.lock:  # id(None) is no provider's
            state = self.runs.get(id(_active_provider()))
        queue = state.queue if state is not None else None
        return queue if queue is not None and queue.active and address.lower() in queue.seen else None

    def verify_now(self, address: str) -> None:
        """The script asks about `address` (Ape's explorer): a deploy of it still waiting for the
        script to end is verified now, the script waiting for the plugin meanwhile."""
        queue = self.holding(address)
        if queue is not None:
            from ape_contract_verify.derive.ape_gate import GATE

            with GATE.script_waits():
                queue.verify_now(address)

    def without_queue(self, state: RunState) -> DeployQueue | None:
        """A network with no verification queue: auto on with no deploy (what the run's calls made
        through factories is verified and its upgrades followed, by a queue for them), or auto off
        (what factories made, named by an event or not, and which proxies moved go in the ledger,
        for `ape verify all`). One walk of the run serves both."""
        from ape_contract_verify.workflow.deploy_queue import DeployQueue
        from ape_contract_verify.workflow.run_logs import run_children, scan_logs

        begin = state.start_block if state.start_block is not None else state.recorded_after
        if begin is None or (mode := deploy_mode()) is None:
            return None
        provider, network = state.provider, state.network
        try:
            scanned = scan_logs(provider, begin, state.recorded)
        except Exception as err:
            logger.warning("contract_verify: could not read the run's logs on %s: %s", network, err)
            return None
        try:
            made = run_children(provider, begin, scanned, state.recorded)
        except Exception as err:
            logger.warning("contract_verify: could not look for factory deployments: %s", err)
            made = []
        if mode == "verify":
            # A run that only calls contracts: what factories made in it is verified like a deploy.
            if not made and not scanned.events:
                return None
            queue = DeployQueue.open(provider, plugin_config(), network, start_block=begin)
            if queue.active:
                queue.scanned = (made, scanned.events)
                return queue
        from ape import project

        from ape_contract_verify.evm.chain import ApeProviderChain
        from ape_contract_verify.workflow.ledger import Ledger
        from ape_contract_verify.workflow.upgrades import record_upgrades

        ledger = state.ledger or Ledger.for_chain(project, provider.chain_id)
        try:  # the deploys are recorded; children left out can still be verified by address
            for address in made:
                ledger.recorded(address, address, network)
        except Exception as err:
            logger.warning("contract_verify: could not record factory deployments: %s", err)
        moved = record_upgrades(scanned.events, ApeProviderChain(provider), ledger, network) if scanned.events else []
        if moved:
            logger.info(
                "contract_verify: %d upgraded prox%s recorded; `ape verify all` links %s again",
                len(moved),
                "y" if len(moved) == 1 else "ies",
                "it" if len(moved) == 1 else "them",
            )
        return None

    # -- the run's end

    def print_summary(self) -> list[Report]:
        """One table of every network drained since the last summary; returns the failed reports."""
        with self.lock:
            groups, self.drained = self.drained, []
            endings, self.endings = self.endings, {}
        if not any(reports for _, _, reports in groups):
            return []
        from ape_contract_verify.workflow.deploy_queue import network_table, run_advice

        print(network_table(groups))
        for line in run_advice(groups, endings):  # counted, and what is left to do where a row failed
            print(line, file=sys.stderr, flush=True)
        return [r for _, _, reports in groups for r in reports if not r.ok]

    def warn_once(self, key: str, text: str) -> None:
        with self.lock:
            if key in self.warned:
                return
            self.warned.add(key)
        logger.warning(text)

    def reset(self) -> None:
        """Forget every network's state and the summary (tests that run `ape run` in one process)."""
        with self.lock:
            states = list(self.runs.values())
            self.runs.clear()
            self.drained.clear()
            self.endings.clear()
            self.warned.clear()
        for state in states:
            if state.queue is not None:
                state.queue.close()
        from ape_contract_verify.workflow import local_explorers

        local_explorers.stop_all()


HOOK = DeployHook()


def install() -> None:
    """Wrap Ape's deploy path and its Solidity builds; idempotent and cheap (no import of Ape's modules)."""
    from ape_contract_verify.workflow import ape_builds

    PATCHES.install(HOOK)
    ape_builds.install()


# -- when a deploy is verified ----------------------------------------------------------------


def in_ape_run() -> bool:
    """Whether this thread runs inside Ape's `run` command: its click command (ape_run's
    `ScriptCommand`) is on the click context stack, whatever started it (`ape run`, `python -m ape
    run`, a wrapper script, Ape's CLI object called from Python). `ape test` and the console run
    under their own commands. A thread the script started has no click context: there the run
    command having picked a script in this process is the sign."""
    module = sys.modules.get("ape_run._cli")
    if module is None:
        return False
    run_command = vars(module).get("cli")
    script_command = vars(module).get("ScriptCommand")
    import click

    ctx = click.get_current_context(silent=True)
    if ctx is None:
        return threading.current_thread() is not threading.main_thread() and _script_picked()
    while ctx is not None:
        command = ctx.command
        if command is run_command or (isinstance(script_command, type) and isinstance(command, script_command)):
            return True
        ctx = ctx.parent
    return False


def _script_picked() -> bool:
    """Whether Ape's `run` command picked a script in this process."""
    module = sys.modules.get("ape_run._cli")
    run_command = vars(module).get("cli") if module is not None else None
    # getattr: ape_run's command sets _command_called only once it picked a script (absent before).
    return bool(getattr(run_command, "_command_called", None))


def deploy_mode() -> Mode | None:
    """For a deploy happening now: "verify" (record and verify), "record" (ledger only) or None.
    "record" where it would verify when a patch of Ape could not go in (`HOOK.unhooked` says why)."""
    cfg = plugin_config()
    mode: Mode | None = None
    if cfg.auto == "always":
        mode = "verify"
    elif in_ape_run():
        mode = "verify" if cfg.auto else "record"
    elif cfg.auto:
        import click

        if click.get_current_context(silent=True) is None:  # not `ape test`/console: say why
            HOOK.warn_once(
                "outside",
                "contract_verify: auto: true verifies what `ape run` deploys, and this deploy is not in "
                "`ape run`; set contract_verify.auto: always to verify it here",
            )
        else:
            logger.debug("contract_verify: not in `ape run`; auto: always verifies here too")
    if mode == "verify" and PATCHES.problems:
        HOOK.unhooked()
        return "record"
    return mode


# What the rest of the plugin and the tests call.
current_queue = HOOK.current_queue
verify_now = HOOK.verify_now
print_summary = HOOK.print_summary
reset = HOOK.reset


def _block_before(provider: ProviderAPI) -> int:
    """The block before this run's first recorded deploy (the deploy is in the latest)."""
    try:
        return max((provider.get_block("latest").number or 0) - 1, 0)
    except Exception:
        return 0


def plugin_config() -> ContractVerifyConfig:
    from ape import config

    from ape_contract_verify.config import ContractVerifyConfig

    found = config.get_config("contract_verify")
    # Ape builds the section from the class the plugin registers; a plain PluginConfig would mean
    # the plugin's registration was not read: its defaults then.
    return found if isinstance(found, ContractVerifyConfig) else ContractVerifyConfig.model_validate(found.model_dump())


def _active_provider() -> ProviderAPI | None:
    from ape import networks

    return networks.active_provider


def _label(provider: ProviderAPI) -> str:
    """ecosystem:network:provider (Ape's `network_choice` may be a URL for custom networks)."""
    try:
        network = provider.network
        return f"{network.ecosystem.name}:{network.name}:{provider.name}"
    except Exception:
        return "the network"
