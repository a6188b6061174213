"""Verification after deploy: the deploy hook and queue of `ape run`.

Ape 0.8 has no deploy event. Every `AccountAPI.deploy` passes its new instance through
`ContractCache.cache_deployment`, so that one method is wrapped here; nothing else in Ape is
touched except `DeploymentManager.track`, which `publish=True` would otherwise break on a dev
network (the publishing itself is the plugin's explorer, workflow/ape_explorer.py), the
provider context's exit, where a network's queue is drained while its chain is still connected,
and `PackagesCache.cache_api`, which is not safe beside the workers' dependency lookups.

`install()` runs when Ape loads the plugin's config, in every command, and imports nothing: each
wrapper goes in when Ape imports its module (at once if it already has). Whether a deploy is
verified is decided at the deploy, not from `sys.argv`: inside Ape's `run` command (found on the
click context stack, however `ape run` was started) it is recorded in the plugin's ledger, and
with `contract_verify.auto: true` verified; in `ape test` or the console only with `auto: always`.

Each network a script deploys to gets its own queue and explorer targets (a script may switch
networks with `networks.parse_network_choice`); a queue is drained when the script leaves that
network's last provider context, and the run ends with one summary of every network.

On the script's thread the hook only reads what verification needs from the chain (code,
creation input, proxy slots), which is cheap; compiling, comparing and talking to the explorer
run on background workers, beside the script. Those reads are memoised
(`evm.wrappers.MemoizingChain`), so the workers (and the embedded explorer) never touch a
provider that is not thread-safe while the script uses it.
"""

import sys
import threading
from collections.abc import Callable
from typing import Any

from ape_contract_verify.logs import get_logger

logger = get_logger()

_installed = False
_applied: set[str] = set()  # the modules whose wrappers are in
_install_errors: list[str] = []
_lock = threading.RLock()
_queues: dict[int, Any] = {}  # by id() of the provider they verify on
_recorders: dict[int, Any] = {}  # ledgers of networks deployed to with auto off
_recorded: dict[int, tuple[int, set]] = {}  # with auto off: (block before the first deploy, addresses recorded)
_starts: dict[int, int] = {}  # by id() of the provider: the block a run's network context began at
_drained: list[tuple[str, str, list]] = []  # (network, target, reports) not yet in a summary
_endings: dict[str, str] = {}  # network -> why its chain ends with the run (deploy_queue.run_advice)
_warned: set[str] = set()


# -- installing the wrappers ------------------------------------------------------------------


def install() -> None:
    """Wrap Ape's deploy path; idempotent and cheap (no import of Ape's modules)."""
    global _installed
    if _installed:
        return
    _installed = True
    for module_name, patch in _PATCHES.items():
        if module_name in sys.modules:
            _apply(module_name, patch, sys.modules[module_name])
        else:
            _after_import(module_name, patch)


def _apply(module_name: str, patch: Callable[[Any], None], module: Any) -> None:
    try:
        patch(module)
        _applied.add(module_name)
    except Exception as err:  # Ape moved something: say so when it matters (see _warn_unhooked)
        _install_errors.append(f"{module_name}: {type(err).__name__}: {err}")
        if module_name == "ape.api.networks":  # no exit hook left to say it from
            import atexit

            atexit.register(_warn_unhooked)


class _AfterImport:
    """A meta path finder that patches a module right after it is first executed. Python has no
    post-import hook; this one only wraps the module's own loader for that one import."""

    def __init__(self) -> None:
        self.patches: dict[str, Callable[[Any], None]] = {}

    def find_spec(self, name: str, path: Any = None, target: Any = None) -> Any:
        patch = self.patches.pop(name, None)
        if patch is None:
            return None
        if not self.patches and self in sys.meta_path:
            sys.meta_path.remove(self)
        for finder in sys.meta_path:
            find = getattr(finder, "find_spec", None)
            if finder is self or find is None:
                continue
            spec = find(name, path, target)
            if spec is not None:
                break
        else:
            return None
        loader = spec.loader
        original = getattr(loader, "exec_module", None)
        if original is None:
            _install_errors.append(f"{name}: its loader has no exec_module")
            return spec

        def exec_module(module: Any) -> None:
            try:
                original(module)
            finally:
                try:
                    del loader.exec_module  # back to the class's method
                except AttributeError:
                    pass
            _apply(name, patch, module)

        loader.exec_module = exec_module  # this spec's own loader instance
        return spec


_finder: _AfterImport | None = None


def _after_import(module_name: str, patch: Callable[[Any], None]) -> None:
    global _finder
    if _finder is None or _finder not in sys.meta_path:
        _finder = _AfterImport()
        sys.meta_path.insert(0, _finder)
    _finder.patches[module_name] = patch


def _patch_cache(module: Any) -> None:
    ContractCache = module.ContractCache
    original_cache = ContractCache.cache_deployment

    def cache_deployment(self, contract_instance, *args, **kwargs):
        result = original_cache(self, contract_instance, *args, **kwargs)
        try:
            on_deploy(contract_instance)
        except Exception as err:  # a deploy is never undone by verification
            logger.warning("contract_verify: could not queue %s: %s", getattr(contract_instance, "address", "?"), err)
        return result

    ContractCache.cache_deployment = cache_deployment
    original_blueprint = ContractCache.cache_blueprint

    def cache_blueprint(self, blueprint_id, contract_type, *args, **kwargs):
        result = original_blueprint(self, blueprint_id, contract_type, *args, **kwargs)
        _on_declare(blueprint_id, contract_type)
        return result

    ContractCache.cache_blueprint = cache_blueprint


def _patch_declare(module: Any) -> None:
    """`ContractContainer.declare(sender=account)` sends through the account and caches nothing:
    its ERC-5202 blueprint is queued from the receipt here (the other declares pass through
    `cache_blueprint`)."""
    ContractContainer = module.ContractContainer
    original_declare = ContractContainer.declare

    def declare(self, *args, **kwargs):
        through_account = hasattr(kwargs.get("sender"), "call")
        receipt = original_declare(self, *args, **kwargs)
        if through_account and getattr(receipt, "contract_address", None):
            _on_declare(receipt.contract_address, self.contract_type, getattr(receipt, "txn_hash", None))
        return receipt

    ContractContainer.declare = declare


class _Declared:
    """A declared blueprint, shaped as the deployed instances `on_deploy` takes."""

    def __init__(self, address: Any, contract_type: Any, txn_hash: Any = None):
        self.address, self.contract_type, self.txn_hash = address, contract_type, txn_hash


def _on_declare(address: Any, contract_type: Any, txn_hash: Any = None) -> None:
    try:
        if isinstance(address, str) and address.startswith("0x") and len(address) == 42:  # EIP-5202: an address
            on_deploy(_Declared(address, contract_type, txn_hash))
    except Exception as err:  # a declare is never undone by verification
        logger.warning("contract_verify: could not queue the blueprint %s: %s", address, err)


def _patch_track(module: Any) -> None:
    DeploymentManager = module.DeploymentManager
    original_track = DeploymentManager.track

    def track(self, contract, allow_dev: bool = False):
        if self.provider.network.is_dev and current_queue() is not None:
            return None  # the plugin records and verifies it; Ape would raise on a dev network
        return original_track(self, contract, allow_dev=allow_dev)

    DeploymentManager.track = track
    _patch_packages_cache(module)


def _patch_packages_cache(module: Any) -> None:
    """Ape rewrites a dependency's API file (unlink, then write) each time the dependency is
    looked up, and reads it back at once. The verification workers look dependencies up beside the
    script, so a script's `project.dependencies[name]` could read the file empty and fail the
    deploy ("Failed to add dependency … Expecting value"). Written whole by a rename, and only when
    it changes, a reader always finds it complete."""
    import os

    PackagesCache = module.PackagesCache

    def cache_api(self, api):
        api_file = self.get_api_path(api.package_id, api.version_id)
        api_file.parent.mkdir(parents=True, exist_ok=True)
        # The same excludes as Ape's, so the file reads the same.
        text = api.model_dump_json(
            by_alias=True, mode="json", exclude_none=True, exclude_unset=True, exclude_defaults=True
        )
        try:
            if api_file.read_text(encoding="utf8") == text:
                return api_file
        except OSError:
            pass
        partial = api_file.with_name(f".{api_file.name}.{os.getpid()}.{threading.get_ident()}")
        partial.write_text(text, encoding="utf8")
        os.replace(partial, api_file)
        return api_file

    PackagesCache.cache_api = cache_api


def _patch_networks(module: Any) -> None:
    ProviderContextManager = module.ProviderContextManager
    original_exit = ProviderContextManager.__exit__
    original_enter = ProviderContextManager.__enter__

    def enter_provider(self, *args, **kwargs):
        provider = original_enter(self, *args, **kwargs)
        try:  # where the run's upgrades may begin: a script may upgrade before (or without) deploying
            if id(provider) not in _starts and deploy_mode() is not None:
                _starts[id(provider)] = provider.get_block("latest").number or 0
        except Exception as err:
            logger.debug("contract_verify: no start block on %s: %s", _label(provider), err)
        return provider

    def exit_provider(self, exception, *args, **kwargs):
        provider = getattr(self, "_provider", None)
        try:
            if provider is not None and not _still_used(provider, self.provider_stack):
                _drain(provider)
        except Exception as err:
            logger.warning("contract_verify: could not finish verification on %s: %s", _label(provider), err)
        result = original_exit(self, exception, *args, **kwargs)
        if not ProviderContextManager.provider_stack:  # the run's outermost network context
            failed = print_summary()
            _warn_unhooked()
            if failed and exception is None and _config().fail_on_error:
                raise SystemExit(1)  # config asked that failed verifications fail the command
        return result

    ProviderContextManager.__exit__ = exit_provider
    ProviderContextManager.__enter__ = enter_provider


_PATCHES: dict[str, Callable[[Any], None]] = {
    "ape.managers._contractscache": _patch_cache,
    "ape.contracts.base": _patch_declare,
    "ape.managers.project": _patch_track,
    "ape.api.networks": _patch_networks,
}


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
    run_command = getattr(module, "cli", None)
    script_command = getattr(module, "ScriptCommand", None)
    import click

    ctx = click.get_current_context(silent=True)
    if ctx is None:
        return threading.current_thread() is not threading.main_thread() and bool(
            getattr(run_command, "_command_called", None)
        )
    while ctx is not None:
        command = ctx.command
        if command is run_command or (isinstance(script_command, type) and isinstance(command, script_command)):
            return True
        ctx = ctx.parent
    return False


def deploy_mode() -> str | None:
    """For a deploy happening now: "verify" (record and verify), "record" (ledger only) or None."""
    cfg = _config()
    if cfg.auto == "always":
        return "verify"
    if in_ape_run():
        return "verify" if cfg.auto else "record"
    if cfg.auto:
        import click

        if click.get_current_context(silent=True) is None:  # not `ape test`/console: say why
            _warn_once(
                "outside",
                "contract_verify: auto: true verifies what `ape run` deploys, and this deploy is not in "
                "`ape run`; set contract_verify.auto: always to verify it here",
            )
        else:
            logger.debug("contract_verify: not in `ape run`; auto: always verifies here too")
    return None


def on_deploy(instance: Any) -> None:
    mode = deploy_mode()
    if mode is None:
        return
    provider = _active_provider()
    if mode == "verify":
        queue = _queue_for(provider)
        if queue.active:
            from ape_contract_verify.derive.ape_gate import GATE

            GATE.script_thread()  # a script's own thread may deploy from another thread
            queue.add_instance(instance)
            return
    # auto off, or verification could not start: the ledger lets `ape verify all` do it later
    from ape_contract_verify.derive.artifacts import type_reference

    address = str(instance.address)
    deployed_type = type_reference(instance.contract_type)
    recorded = {"type": deployed_type} if deployed_type else {}
    recorder = _recorder_for(provider)
    recorder.record(
        getattr(instance.contract_type, "name", None) or address,
        address,
        status="pending",
        network=_label(provider),
        **recorded,
    )
    _recorded.setdefault(id(provider), (_block_before(provider), set()))[1].add(address.lower())


def current_queue() -> Any:
    """The connected network's queue when deploys are verified now (created on first use)."""
    if deploy_mode() != "verify":
        return None
    queue = _queue_for(_active_provider())
    return queue if queue.active else None


def queued(address: str) -> bool:
    """Whether the deploy hook already verifies `address` on the connected network (`publish=True`
    then has nothing to add)."""
    with _lock:
        queue = _queues.get(id(_active_provider()))
    return queue is not None and queue.active and address.lower() in queue.seen


def _queue_for(provider: Any) -> Any:
    with _lock:
        queue = _queues.get(id(provider))
        if queue is None:
            from ape_contract_verify.workflow.deploy_queue import DeployQueue

            queue = _queues[id(provider)] = DeployQueue(
                provider, _config(), _label(provider), start_block=_starts.get(id(provider))
            )
        return queue


def _recorder_for(provider: Any) -> Any:
    with _lock:
        recorder = _recorders.get(id(provider))
        if recorder is None:
            from ape import project

            from ape_contract_verify.workflow.ledger import Ledger

            recorder = _recorders[id(provider)] = Ledger.for_chain(project, provider.chain_id)
        return recorder


def _still_used(provider: Any, stack: list) -> bool:
    """Whether an outer context still uses `provider` after this one is left."""
    connection = getattr(provider, "connection_id", None)
    return connection is not None and connection in stack[:-1]


def _block_before(provider: Any) -> int:
    """The block before this run's first recorded deploy (the deploy is in the latest)."""
    try:
        return max((provider.get_block("latest").number or 0) - 1, 0)
    except Exception:
        return 0


def _drain(provider: Any) -> None:
    with _lock:
        queue = _queues.pop(id(provider), None)
        recorder = _recorders.pop(id(provider), None)
        start = _starts.pop(id(provider), None)
        recorded = _recorded.pop(id(provider), None)
    if queue is None and (start is not None or recorded is not None):
        queue = _without_queue(provider, start, recorded, recorder)
    if queue is not None:
        from ape_contract_verify.derive.ape_gate import GATE

        with GATE.script_waits():  # the script waits here: workers may now call into Ape
            finished = queue.finish()
        _drained.extend((queue.network, target, reports) for target, reports in finished)
        if queue.ends_with_run:
            _endings[queue.network] = queue.ends_with_run


def _without_queue(provider: Any, start: int | None, recorded: tuple | None, recorder: Any) -> Any:
    """A network with no verification queue: auto on with no deploy (what the run's calls made
    through factories is verified and its upgrades followed, by a queue for them), or auto off (what
    factories made, named by an event or not, and which proxies moved go in the ledger, for `ape
    verify all`). One walk of the run serves both."""
    from ape_contract_verify.workflow.deploy_queue import DeployQueue, run_children, scan_logs

    mode = deploy_mode()
    if mode is None:
        return None
    begin = start if start is not None else recorded[0]
    seen = recorded[1] if recorded is not None else set()
    try:
        scanned = scan_logs(provider, begin, seen)
    except Exception as err:
        logger.warning("contract_verify: could not read the run's logs on %s: %s", _label(provider), err)
        return None
    try:
        made = run_children(provider, begin, scanned, seen)
    except Exception as err:
        logger.warning("contract_verify: could not look for factory deployments: %s", err)
        made = []
    if mode == "verify":
        # A run that only calls contracts: what factories made in it is verified like a deploy.
        if not made and not scanned.events:
            return None
        queue = DeployQueue(provider, _config(), _label(provider), start_block=begin)
        if queue.active:
            queue.scanned = (made, scanned.events)
            return queue
    from ape import project

    from ape_contract_verify.evm.chain import ApeProviderChain
    from ape_contract_verify.workflow.ledger import Ledger
    from ape_contract_verify.workflow.upgrades import record_upgrades

    recorder = recorder or Ledger.for_chain(project, provider.chain_id)
    try:  # the deploys are recorded; children left out can still be verified by address
        for address in made:
            recorder.record(address, address, status="pending", network=_label(provider))
    except Exception as err:
        logger.warning("contract_verify: could not record factory deployments: %s", err)
    moved = (
        record_upgrades(scanned.events, ApeProviderChain(provider), recorder, _label(provider))
        if scanned.events
        else []
    )
    if moved:
        logger.info(
            "contract_verify: %d upgraded prox%s recorded; `ape verify all` links %s again",
            len(moved),
            "y" if len(moved) == 1 else "ies",
            "it" if len(moved) == 1 else "them",
        )
    return None


def print_summary() -> list:
    """One table of every network drained since the last summary; returns the failed reports."""
    with _lock:
        groups = list(_drained)
        _drained.clear()
        endings = dict(_endings)
        _endings.clear()
    if not any(reports for _, _, reports in groups):
        return []
    from ape_contract_verify.workflow.deploy_queue import network_table, run_advice

    print(network_table(groups))
    for line in run_advice(groups, endings):  # counted, and what is left to do where a row failed
        print(line, file=sys.stderr, flush=True)
    return [r for _, _, reports in groups for r in reports if not r.ok]


def _warn_unhooked() -> None:
    """One line when auto mode is on in `ape run` but a wrapper could not go in."""
    if not _install_errors:
        return
    try:
        if not (_config().auto and (_config().auto == "always" or in_ape_run() or _ran_scripts())):
            return
    except Exception:
        return
    _warn_once(
        "unhooked",
        "contract_verify: auto is on, but verification after deploy could not hook Ape "
        f"({'; '.join(_install_errors)}); verify with `ape verify all`",
    )


def _ran_scripts() -> bool:
    module = sys.modules.get("ape_run._cli")
    return bool(getattr(getattr(module, "cli", None), "_command_called", None))


def _warn_once(key: str, text: str) -> None:
    with _lock:
        if key in _warned:
            return
        _warned.add(key)
    logger.warning(text)


def _config() -> Any:
    from ape import config

    return config.get_config("contract_verify")


def _active_provider() -> Any:
    from ape import networks

    return networks.active_provider


def _label(provider: Any) -> str:
    """ecosystem:network:provider (Ape's `network_choice` may be a URL for custom networks)."""
    try:
        network = provider.network
        return f"{network.ecosystem.name}:{network.name}:{provider.name}"
    except Exception:
        return "the network"


def reset() -> None:
    """Forget every queue and summary (tests that run `ape run` in one process)."""
    with _lock:
        queues = list(_queues.values())
        _queues.clear()
        _recorders.clear()
        _recorded.clear()
        _starts.clear()
        _drained.clear()
        _endings.clear()
        _warned.clear()
    for queue in queues:
        queue.close()
    from ape_contract_verify.workflow import local_explorers

    local_explorers.stop_all()
