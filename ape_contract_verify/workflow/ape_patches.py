"""The deploy hook's patches of Ape's internals, each checked against the Ape it was written for.

Ape 0.8 has no deploy event. Every `AccountAPI.deploy` passes its new instance through
`ContractCache.cache_deployment`, so that method is wrapped (and `cache_blueprint`, and
`ContractContainer.declare` for a blueprint declared through an account). Besides:
`DeploymentManager.track`, which `publish=True` would otherwise break on a dev network;
`PackagesCache.cache_api`, which is not safe beside the workers' dependency lookups; and the
provider context's entry and exit, where a network's run begins and its queue is drained while
its chain is still connected.

Each patch names what it relies on (`Wrapped`: the class, the attribute, its leading parameters)
and was checked against eth-ape `CHECKED_AGAINST`. Before a module is changed every one of its
attributes is checked; one that moved or changed its parameters leaves that module untouched and
is kept in `PATCHES.problems`, and the hook then verifies nothing in this run (it says so, and
why, through Ape's logger). A user's deploy never depends on a patch.

`install()` imports nothing: a patch goes in when Ape imports its module (at once if it already
has), through a one-shot meta path finder (Python has no post-import hook).
"""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import partial
from importlib.abc import MetaPathFinder
from importlib.machinery import ModuleSpec
from types import ModuleType
from typing import TYPE_CHECKING, NamedTuple, Protocol

from ape_contract_verify.logs import get_logger

if TYPE_CHECKING:
    from ape.api import ProviderAPI, ReceiptAPI
    from ape.api.networks import ProviderContextManager
    from ape.api.projects import DependencyAPI
    from ape.contracts import ContractContainer, ContractInstance
    from ape.managers.project import DeploymentManager, PackagesCache
    from ethpm_types import ContractType

logger = get_logger()

# The releases these patches were read against: the plugin's floor and the newest one tested.
CHECKED_AGAINST = "0.8.25 to 0.8.52"


class ApeChanged(Exception):
    """An Ape internal a patch relies on is not what the patch was written for."""


class DeployHooks(Protocol):
    """What the patches call (the deploy hook, `after_deploy.DeployHook`)."""

    def deployed(self, instance: ContractInstance) -> None: ...

    def declared(self, address: object, contract_type: ContractType, txn_hash: object = None) -> None:
        """A blueprint declared at `address` (queued only when it is one: EIP-5202's id may not be)."""

    def verifies_here(self) -> bool:
        """Whether deploys are verified now (then the hook, not Ape's `track`, records them)."""

    def entered(self, provider: ProviderAPI) -> None: ...

    def left(self, provider: ProviderAPI) -> None:
        """The last context using `provider` is being left: its chain is still connected."""

    def left_all(self, exception: BaseException | None) -> None:
        """The run's outermost network context was left (may raise SystemExit)."""

    def unhooked(self) -> None:
        """Say, when it matters, that a patch could not go in (at exit when no context can)."""


# NamedTuples, not frozen dataclasses: this module loads on every `ape` command, and a dataclass
# costs about four times as much to define.
class Wrapped(NamedTuple):
    """One attribute of an Ape class a patch relies on, and its leading parameters."""

    owner: str  # the class, in the patched module
    attribute: str
    parameters: tuple[str, ...]  # the first parameter names, as the wrapper passes them on

    def check(self, module: ModuleType) -> None:
        """Raise ApeChanged, naming what changed, unless `module` has it as the patch expects."""
        import inspect

        owner = vars(module).get(self.owner)
        if not isinstance(owner, type):
            raise ApeChanged(f"{module.__name__} has no class {self.owner}")
        where = f"{module.__name__}.{self.owner}.{self.attribute}"
        # getattr_static: the function as the class defines it (no descriptor runs).
        function = inspect.getattr_static(owner, self.attribute, None)
        if not callable(function):
            raise ApeChanged(f"{where} is gone")
        try:
            found = tuple(inspect.signature(function).parameters)
        except (TypeError, ValueError) as err:
            raise ApeChanged(f"{where} has no signature to check ({err})") from None
        if found[: len(self.parameters)] != self.parameters:
            raise ApeChanged(
                f"{where} takes ({', '.join(found)}), "
                f"not ({', '.join(self.parameters)}, ...) as in eth-ape {CHECKED_AGAINST}"
            )


class Patch(NamedTuple):
    """The wrappers of one Ape module: what they rely on, checked first, then put in by `apply`."""

    module: str
    relies_on: tuple[Wrapped, ...]
    apply: Callable[[ModuleType, DeployHooks], None]
    also: Callable[[ModuleType], None] | None = None  # a further check (an attribute, not a method)

    def check(self, module: ModuleType) -> None:
        for wrapped in self.relies_on:
            wrapped.check(module)
        if self.also is not None:
            self.also(module)


# -- the wrappers, one function per module ------------------------------------------------------


def _wrap_cache(module: ModuleType, hooks: DeployHooks) -> None:
    cache = module.ContractCache
    original_cache = cache.cache_deployment
    original_blueprint = cache.cache_blueprint

    def cache_deployment(self: object, contract_instance: ContractInstance, *args: object, **kwargs: object) -> object:
        result = original_cache(self, contract_instance, *args, **kwargs)
        try:
            hooks.deployed(contract_instance)
        except Exception as err:  # a deploy is never undone by verification
            logger.warning("contract_verify: could not queue %s: %s", contract_instance.address, err)
        return result

    def cache_blueprint(self: object, blueprint_id: str, contract_type: ContractType, *args: object) -> object:
        result = original_blueprint(self, blueprint_id, contract_type, *args)
        hooks.declared(blueprint_id, contract_type)
        return result

    cache.cache_deployment = cache_deployment
    cache.cache_blueprint = cache_blueprint


def _wrap_declare(module: ModuleType, hooks: DeployHooks) -> None:
    """`ContractContainer.declare(sender=account)` sends through the account and caches nothing:
    its ERC-5202 blueprint is queued from the receipt here (the other declares pass through
    `cache_blueprint`)."""
    container = module.ContractContainer
    original_declare = container.declare

    def declare(self: ContractContainer, *args: object, **kwargs: object) -> ReceiptAPI:
        through_account = hasattr(kwargs.get("sender"), "call")
        receipt: ReceiptAPI = original_declare(self, *args, **kwargs)
        if through_account and receipt.contract_address:
            hooks.declared(receipt.contract_address, self.contract_type, receipt.txn_hash)
        return receipt

    container.declare = declare


def _wrap_project(module: ModuleType, hooks: DeployHooks) -> None:
    manager = module.DeploymentManager
    original_track = manager.track

    def track(self: DeploymentManager, contract: ContractInstance, allow_dev: bool = False) -> object:
        if self.provider.network.is_dev and hooks.verifies_here():
            return None  # the plugin records and verifies it; Ape would raise on a dev network
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


def _provider_context_fields(module: ModuleType) -> None:
    """The exit wrapper reads the context's provider (`_provider`, set in `__init__`) and the class's
    `provider_stack` (connection ids, the innermost last)."""
    context = vars(module)["ProviderContextManager"]
    if not isinstance(vars(context).get("provider_stack"), list):
        raise ApeChanged(f"{module.__name__}.ProviderContextManager.provider_stack is not a list")
    if "_provider" not in context.__init__.__code__.co_names:
        raise ApeChanged(f"{module.__name__}.ProviderContextManager no longer keeps its provider in _provider")


def _wrap_networks(module: ModuleType, hooks: DeployHooks) -> None:
    context = module.ProviderContextManager
    original_exit = context.__exit__
    original_enter = context.__enter__

    def enter_provider(self: object, *args: object, **kwargs: object) -> ProviderAPI:
        provider: ProviderAPI = original_enter(self, *args, **kwargs)
        try:
            hooks.entered(provider)
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
                hooks.left(provider)
        except Exception as err:
            logger.warning("contract_verify: could not finish verification on %s: %s", provider, err)
        result = original_exit(self, exception, *args, **kwargs)
        if not context.provider_stack:  # the run's outermost network context
            hooks.left_all(exception)
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
        also=_provider_context_fields,
    ),
)


# -- putting them in --------------------------------------------------------------------------


@dataclass
class ApePatches:
    """Which patches went in, and why any could not (for the hook's message)."""

    applied: set[str] = field(default_factory=set)  # the modules whose wrappers are in
    problems: list[str] = field(default_factory=list)
    installed: bool = False
    finder: AfterImport | None = None

    def install(self, hooks: DeployHooks, patches: Sequence[Patch] = PATCH_LIST) -> None:
        """Each patch now, or when Ape imports its module; idempotent and cheap (imports nothing)."""
        if self.installed:
            return
        self.installed = True
        for patch in patches:
            self.when_imported(patch.module, partial(self.apply_patch, patch, hooks=hooks))

    def apply_patch(self, patch: Patch, module: ModuleType, hooks: DeployHooks) -> None:
        """Check every attribute `patch` relies on, then wrap them; a change leaves `module` as it was."""
        try:
            patch.check(module)
        except ApeChanged as err:
            self.failed(patch.module, str(err), hooks)
            return
        self.apply(patch.module, lambda m: patch.apply(m, hooks), module, hooks)

    def apply(
        self, name: str, wrap: Callable[[ModuleType], None], module: ModuleType, hooks: DeployHooks | None = None
    ) -> None:
        try:
            wrap(module)
            self.applied.add(name)
        except Exception as err:  # not foreseen by a check: said as the hook's other problems are
            self.failed(name, f"{type(err).__name__}: {err}", hooks)

    def failed(self, name: str, problem: str, hooks: DeployHooks | None) -> None:
        self.problems.append(f"{name}: {problem}")
        logger.debug("contract_verify: not patched: %s: %s", name, problem)
        if name == "ape.api.networks" and hooks is not None:  # no context exit left to say it from
            import atexit

            atexit.register(hooks.unhooked)

    def when_imported(self, name: str, wrap: Callable[[ModuleType], None]) -> None:
        """Run `wrap` on module `name` now if it is imported, else right after its first import."""
        module = sys.modules.get(name)
        if module is not None:
            wrap(module)
            return
        if self.finder is None or self.finder not in sys.meta_path:
            self.finder = AfterImport(self)
            sys.meta_path.insert(0, self.finder)
        self.finder.waiting[name] = wrap

    def message(self, version: str) -> str:
        """What the hook says when a patch could not go in."""
        return (
            f"contract_verify: auto is on, but verification after deploy could not hook Ape {version} "
            f"(checked against eth-ape {CHECKED_AGAINST}): {'; '.join(self.problems)}. "
            "Auto-verification is off for this run (your deploys are untouched); "
            "deployments are recorded, and `ape verify all` verifies them"
        )


class AfterImport(MetaPathFinder):
    """A meta path finder that runs a patch right after a module is first executed; it only wraps
    the module's own loader for that one import."""

    def __init__(self, patches: ApePatches) -> None:
        self.patches = patches
        self.waiting: dict[str, Callable[[ModuleType], None]] = {}

    def find_spec(
        self, fullname: str, path: Sequence[str] | None = None, target: ModuleType | None = None
    ) -> ModuleSpec | None:
        wrap = self.waiting.pop(fullname, None)
        if wrap is None:
            return None
        if not self.waiting and self in sys.meta_path:
            sys.meta_path.remove(self)
        import importlib.util

        spec = importlib.util.find_spec(fullname)  # by the other finders: this one waits no more for it
        if spec is None:
            return None
        loader = spec.loader
        if loader is None or not hasattr(loader, "exec_module"):
            self.patches.problems.append(f"{fullname}: its loader has no exec_module")
            return spec
        original = loader.exec_module

        def exec_module(module: ModuleType) -> None:
            # One loader can serve many modules (pytest's assertion rewriter loads every module of a
            # package with a pytest plugin, Ape's included; zipimport a whole archive): only
            # `fullname` is wrapped, and the modules it imports meanwhile pass through.
            if module.__name__ != fullname:
                original(module)
                return
            try:
                original(module)
            finally:
                if vars(loader).get("exec_module") is exec_module:
                    del loader.exec_module  # back to the class's method
            wrap(module)

        try:
            loader.exec_module = exec_module  # type: ignore[method-assign]  # on this loader instance only
        except (AttributeError, TypeError):  # a loader without instance attributes
            self.patches.problems.append(f"{fullname}: its loader takes no wrapper")
        return spec


PATCHES = ApePatches()
