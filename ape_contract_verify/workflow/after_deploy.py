"""Verification after deploy: the deploy hook, deciding at each deploy what `ape run` verifies or records.

`install()` runs when Ape loads the plugin's config, in every command, and imports nothing: this
module's patches of Ape's deploy path (`PATCH_LIST`, put in by `ape_patches` when Ape imports their
modules) call its `DeployHook`. Ape 0.8 has no deploy event. Every `AccountAPI.deploy` passes its
new instance through `ContractCache.cache_deployment`, so that method is wrapped (and
`cache_blueprint`, and `ContractContainer.declare` for a blueprint declared through an account).
Besides: `DeploymentManager.track`, which `publish=True` would otherwise break on a dev network;
`PackagesCache.cache_api`, which is not safe beside the workers' dependency lookups; and the
provider context's entry and exit, where a network's run begins and its queue is drained while its
chain is still connected. Whether a deploy is verified is decided at the deploy, not from `sys.argv`:
inside Ape's `run` command (found on the click context stack, however `ape run` was started) it is
recorded in the plugin's ledger, and with `contract_verify.auto: true` verified; in `ape test` or
the console only with `auto: always`. When a patch could not go in (Ape changed under it), deploys
are recorded, never verified, and the hook says why.

Each network a script enters (each provider) has its own `deploy_queue.DeployQueue`, opened as
the script enters it: verifying on its explorer targets with auto on, only recording in the
ledger with auto off; a script may switch networks with `networks.parse_network_choice`. A
network's queue is drained when the script leaves its last provider context, and the run ends
with one summary of every network (`print_summary`).

On the script's thread the hook only records each deploy and what a later recompile could change
(the artifact Ape deployed and its compile input), which is cheap; the chain reads, compiling,
comparing and talking to the explorers wait until the script leaves the network, so the script
runs as fast as with auto off. Those reads are memoised (`evm.reads.MemoizingChain`) on the
script's thread, so the workers (and the embedded explorer) never use a provider concurrently.
"""

from __future__ import annotations

import os
import sys
import threading
from types import ModuleType
from typing import TYPE_CHECKING, Literal, cast

from ape_contract_verify.logs import get_logger
from ape_contract_verify.workflow.ape_patches import CHECKED_AGAINST, PATCHES, ApeChanged, Patch, Wrapped

if TYPE_CHECKING:
    from ape.api import ProviderAPI, ReceiptAPI
    from ape.api.networks import ProviderContextManager
    from ape.api.projects import DependencyAPI
    from ape.contracts import ContractContainer, ContractInstance
    from ape.managers.project import DeploymentManager, PackagesCache
    from ethpm_types import ContractType

    from ape_contract_verify.config import ContractVerifyConfig
    from ape_contract_verify.workflow.deploy_queue import DeployQueue
    from ape_contract_verify.workflow.report import Report

logger = get_logger()

Mode = Literal["verify", "record"]


class DeployHook:
    """What the patches of Ape call: one per process, each network's `DeployQueue` (verifying with
    auto on, only recording with auto off), and the summary of the networks drained since the last one."""

    def __init__(self) -> None:
        self.lock = threading.RLock()
        # each network's queue of this run, by id() of its provider (which the queue holds, so the
        # id is not reused while it lives), until the script leaves its last context
        self.runs: dict[int, DeployQueue] = {}
        self.drained: list[Report] = []  # the rows of the networks not yet summed up
        self.endings: dict[str, str] = {}  # network -> why its chain ends with the run (for print_summary's advice)
        self.warned: set[str] = set()

    # -- the patches' calls

    def deployed(self, address: object, contract_type: ContractType, txn_hash: object = None) -> None:
        """A deploy, or a blueprint declared at `address` (EIP-5202's id may be no address: then
        nothing), of this run: queued, and recorded in the ledger (only recorded with auto off, or
        when verification could not start: `ape verify all` does it later)."""
        if not (isinstance(address, str) and address.startswith("0x") and len(address) == 42):
            return
        try:
            from ape import networks

            from ape_contract_verify.derive.artifacts import type_reference
            from ape_contract_verify.evm.bytecode import to_hex

            mode, provider = deploy_mode(), networks.active_provider
            if mode is not None and provider is not None:  # a deploy needs a provider: not here
                txn = None if txn_hash is None else to_hex(txn_hash)
                self.queue_for(provider, mode).add(address, contract_type.name, txn, type_reference(contract_type))
        except Exception as err:  # a deploy is never undone by verification
            logger.warning("contract_verify: could not queue %s: %s", address, err)

    def entered(self, provider: ProviderAPI) -> None:
        """The network's queue, its run beginning here: a script may upgrade, or call factories,
        before (or without) deploying, and the run's walk finds what it did. (A failure is the
        wrapper's to say: no queue then, until the first deploy.)"""
        if (mode := deploy_mode()) is not None and id(provider) not in self.runs:
            self.queue_for(provider, mode, provider.get_block("latest").number or 0)

    def left(self, provider: ProviderAPI) -> None:
        """Drain the network's queue while its chain is connected."""
        with self.lock:
            queue = self.runs.pop(id(provider), None)
        if queue is None:
            return
        from ape_contract_verify.derive.ape_gate import GATE
        from ape_contract_verify.workflow.local_explorers import ends_with_run

        with GATE.script_waits():  # the script waits here: workers may now call into Ape
            finished = queue.finish()
        with self.lock:
            self.drained += finished
            if any(not r.ok for r in finished):  # the summary's advice: whether the chain ends with the run
                self.endings[queue.network] = ends_with_run(provider)

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
            if not (cfg.auto and (cfg.auto == "always" or in_ape_run(any_thread=True))):
                return
        except Exception:
            return
        from importlib.metadata import version

        self.warn_once(
            "unhooked",
            f"contract_verify: auto is on, but verification after deploy could not hook Ape {version('eth-ape')} "
            f"(checked against eth-ape {CHECKED_AGAINST}): {'; '.join(PATCHES.problems)}. "
            "Auto-verification is off for this run (your deploys are untouched); "
            "deployments are recorded, and `ape verify all` verifies them",
        )

    # -- each network's state

    def queue_for(self, provider: ProviderAPI, mode: Mode = "verify", start_block: int | None = None) -> DeployQueue:
        with self.lock:
            queue = self.runs.get(id(provider))
            if queue is None:
                from ape_contract_verify.workflow.deploy_queue import DeployQueue

                queue = DeployQueue.open(provider, plugin_config(), start_block, mode == "verify")
                self.runs[id(provider)] = queue
            return queue

    def holding(self, address: str) -> DeployQueue | None:
        """The connected network's queue when it verifies a deploy of `address` (`publish=True`
        then has nothing to add, and `track` nothing to keep)."""
        from ape import networks

        with self.lock:  # id(None) is no provider's
            queue = self.runs.get(id(networks.active_provider))
        return queue if queue is not None and queue.active and address.lower() in queue.seen else None

    # -- the run's end

    def print_summary(self) -> list[Report]:
        """One table of every network drained since the last summary: a row per contract and target,
        with a network column once several networks are in it (one network is named above it);
        then, one per network, its rows counted and, when some did not verify, what can still be
        done: on a chain that ends with the run (`endings`, `local_explorers.ends_with_run`) not
        `ape verify all`, which would have nothing to read. Returns the failed reports."""
        with self.lock:
            reports, self.drained = self.drained, []
            endings, self.endings = self.endings, {}
        if not reports:
            return []
        from ape_contract_verify.workflow.report import rows_line, summary_table

        by_network: dict[str, list[Report]] = {}
        for report in reports:
            by_network.setdefault(report.network, []).append(report)
        print((f"contract_verify: {reports[0].network}\n" if len(by_network) == 1 else "") + summary_table(reports))
        for network, rows in by_network.items():
            line = rows_line(rows, network)
            if any(not r.ok for r in rows) and (ends := endings.get(network)):
                line += (
                    f". {ends}, so nothing is left for `ape verify all` to finish: fix what the rows say and run again, "
                    "or deploy on a node that outlives the run (start `anvil`, then `ape run … --network "
                    "ethereum:local:foundry`), where `ape verify all` finishes what is left"
                )
            elif any(not r.ok for r in rows):
                line += f"; `ape verify all --network {network}` finishes them"
            print(line, file=sys.stderr, flush=True)
        return [r for r in reports if not r.ok]

    def warn_once(self, key: str, text: str) -> None:
        with self.lock:
            if key in self.warned:
                return
            self.warned.add(key)
        logger.warning(text)


HOOK = DeployHook()


def install() -> None:
    """Wrap Ape's deploy path and its Solidity builds; idempotent and cheap (no import of Ape's modules)."""
    import atexit

    from ape_contract_verify.workflow import ape_builds

    if PATCHES.installed:
        return
    PATCHES.install((*PATCH_LIST, ape_builds.PATCH))
    atexit.register(HOOK.unhooked)  # says a patch that could not go in where no context exit did


# -- the patches of Ape's deploy path, one function per module -------------------------------------


def _wrap_cache(module: ModuleType) -> None:
    cache = module.ContractCache
    original_cache = cache.cache_deployment
    original_blueprint = cache.cache_blueprint

    def cache_deployment(self: object, contract_instance: ContractInstance, *args: object, **kwargs: object) -> object:
        result = original_cache(self, contract_instance, *args, **kwargs)
        # Attributes Ape's ContractInstance sets in __init__: read, they cannot fail the deploy.
        HOOK.deployed(contract_instance.address, contract_instance.contract_type, contract_instance.txn_hash)
        return result

    def cache_blueprint(self: object, blueprint_id: str, contract_type: ContractType, *args: object) -> object:
        result = original_blueprint(self, blueprint_id, contract_type, *args)
        HOOK.deployed(blueprint_id, contract_type)
        return result

    cache.cache_deployment = cache_deployment
    cache.cache_blueprint = cache_blueprint


def _wrap_declare(module: ModuleType) -> None:
    """`ContractContainer.declare(sender=account)` sends through the account and caches nothing:
    its ERC-5202 blueprint is queued from the receipt here (the other declares pass through
    `cache_blueprint`)."""
    container = module.ContractContainer
    original_declare = container.declare

    def declare(self: ContractContainer, *args: object, **kwargs: object) -> ReceiptAPI:
        through_account = hasattr(kwargs.get("sender"), "call")
        receipt: ReceiptAPI = original_declare(self, *args, **kwargs)
        if through_account and receipt.contract_address:
            HOOK.deployed(receipt.contract_address, self.contract_type, receipt.txn_hash)
        return receipt

    container.declare = declare


def _wrap_project(module: ModuleType) -> None:
    manager = module.DeploymentManager
    original_track = manager.track

    def track(self: DeploymentManager, contract: ContractInstance, allow_dev: bool = False) -> object:
        if self.provider.network.is_dev and HOOK.holding(str(contract.address)) is not None:
            return None  # the plugin records and verifies this deploy; Ape would raise on a dev network
        return original_track(self, contract, allow_dev=allow_dev)

    manager.track = track
    module.PackagesCache.cache_api = _cache_api


def _cache_api(self: PackagesCache, api: DependencyAPI) -> object:
    """Ape rewrites a dependency's API file (unlink, then write) each time the dependency is
    looked up, and reads it back at once. The verification workers look dependencies up beside the
    script, so a script's `project.dependencies[name]` could read the file empty and fail the
    deploy ("Failed to add dependency … Expecting value"). Written whole by a rename, and only when
    it changes, a reader always finds it complete."""
    api_file = self.get_api_path(api.package_id, api.version_id)
    api_file.parent.mkdir(parents=True, exist_ok=True)
    # The same excludes as Ape's, so the file reads the same.
    text = api.model_dump_json(by_alias=True, mode="json", exclude_none=True, exclude_unset=True, exclude_defaults=True)
    try:
        if api_file.read_text(encoding="utf8") == text:
            return api_file
    except OSError:
        pass
    partial = api_file.with_name(f".{api_file.name}.{os.getpid()}.{threading.get_ident()}")
    partial.write_text(text, encoding="utf8")
    os.replace(partial, api_file)
    return api_file


def _wrap_networks(module: ModuleType) -> None:
    context = module.ProviderContextManager
    # The exit wrapper reads the context's provider (`_provider`, set in `__init__`) and the class's
    # `provider_stack` (connection ids, the innermost last): checked before anything is wrapped.
    if not isinstance(vars(context).get("provider_stack"), list):
        raise ApeChanged(f"{module.__name__}.ProviderContextManager.provider_stack is not a list")
    if "_provider" not in context.__init__.__code__.co_names:
        raise ApeChanged(f"{module.__name__}.ProviderContextManager no longer keeps its provider in _provider")
    original_exit = context.__exit__
    original_enter = context.__enter__

    def enter_provider(self: object, *args: object, **kwargs: object) -> ProviderAPI:
        provider: ProviderAPI = original_enter(self, *args, **kwargs)
        try:
            HOOK.entered(provider)
        except Exception as err:
            logger.debug("contract_verify: %s", err)
        return provider

    def exit_provider(
        self: ProviderContextManager, exception: BaseException | None, *args: object, **kwargs: object
    ) -> object:
        provider = None
        try:
            provider = self._provider
            # Left for good unless an outer context still uses the same connection.
            connection = provider.connection_id if provider is not None else None
            if provider is not None and not (connection is not None and connection in self.provider_stack[:-1]):
                HOOK.left(provider)
        except Exception as err:
            logger.warning("contract_verify: could not finish verification on %s: %s", provider, err)
        result = original_exit(self, exception, *args, **kwargs)
        if not context.provider_stack:  # the run's outermost network context
            HOOK.left_all(exception)
        return result

    context.__exit__ = exit_provider
    context.__enter__ = enter_provider


PATCH_LIST: tuple[Patch, ...] = (
    Patch(
        "ape.managers._contractscache",
        (
            Wrapped("ContractCache", "cache_deployment", ("self", "contract_instance")),
            Wrapped("ContractCache", "cache_blueprint", ("self", "blueprint_id", "contract_type")),
        ),
        _wrap_cache,
    ),
    Patch("ape.contracts.base", (Wrapped("ContractContainer", "declare", ("self", "args", "kwargs")),), _wrap_declare),
    Patch(
        "ape.managers.project",
        (
            Wrapped("DeploymentManager", "track", ("self", "contract", "allow_dev")),
            Wrapped("PackagesCache", "cache_api", ("self", "api")),
            Wrapped("PackagesCache", "get_api_path", ("self", "package_id", "version")),
        ),
        _wrap_project,
    ),
    Patch(
        "ape.api.networks",
        (
            Wrapped("ProviderContextManager", "__enter__", ("self",)),
            Wrapped("ProviderContextManager", "__exit__", ("self", "exception")),
        ),
        _wrap_networks,
    ),
)


# -- when a deploy is verified ----------------------------------------------------------------


def in_ape_run(any_thread: bool = False) -> bool:
    """Whether this thread runs inside Ape's `run` command: its click command (ape_run's
    `ScriptCommand`) is on the click context stack, whatever started it (`ape run`, `python -m ape
    run`, a wrapper script, Ape's CLI object called from Python). `ape test` and the console run
    under their own commands. A thread the script started has no click context: there the run
    command having picked a script in this process is the sign (for the main thread too with
    `any_thread`: the process's exit, once the command's context is gone)."""
    module = sys.modules.get("ape_run._cli")
    if module is None:
        return False
    run_command = vars(module).get("cli")
    script_command = vars(module).get("ScriptCommand")
    import click

    ctx = click.get_current_context(silent=True)
    if ctx is None:  # getattr: ape_run's command sets _command_called once it picked a script (absent before)
        picked = bool(getattr(run_command, "_command_called", None))
        return picked and (any_thread or threading.current_thread() is not threading.main_thread())
    while ctx is not None:
        command = ctx.command
        if command is run_command or (isinstance(script_command, type) and isinstance(command, script_command)):
            return True
        ctx = ctx.parent
    return False


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


def plugin_config() -> ContractVerifyConfig:
    from ape import config

    # Ape builds the section from the class the plugin registers (`config_class`).
    return cast("ContractVerifyConfig", config.get_config("contract_verify"))
