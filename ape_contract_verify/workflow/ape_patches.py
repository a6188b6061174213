"""Patches of Ape's internals, each checked against the Ape it was written for, put in as Ape imports them.

Each patch names what it relies on (`Wrapped`: the class, the attribute, its leading parameters)
and was checked against eth-ape `CHECKED_AGAINST`. Before a module is changed every one of its
attributes is checked; one that moved or changed its parameters leaves that module untouched and
is kept in `PATCHES.problems`, and the deploy hook (`after_deploy`, whose wrappers these are) then
verifies nothing in this run (it says so, and why, through Ape's logger). A user's deploy never
depends on a patch.

`install()` imports nothing: a patch goes in when Ape imports its module (at once if it already
has), through a one-shot meta path finder (Python has no post-import hook).
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import partial
from importlib.abc import MetaPathFinder
from importlib.machinery import ModuleSpec
from types import ModuleType
from typing import NamedTuple

from ape_contract_verify.logs import get_logger

logger = get_logger()

# The releases these patches were read against: the plugin's floor and the newest one tested.
CHECKED_AGAINST = "0.8.25 to 0.8.52"


class ApeChanged(Exception):
    """An Ape internal a patch relies on is not what the patch was written for."""


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
    apply: Callable[[ModuleType], None]  # may raise ApeChanged too, for what is not a method, before it wraps

    def check(self, module: ModuleType) -> None:
        for wrapped in self.relies_on:
            wrapped.check(module)


@dataclass
class ApePatches:
    """Which patches went in, and why any could not (for the hook's message)."""

    applied: set[str] = field(default_factory=set)  # the modules whose wrappers are in
    problems: list[str] = field(default_factory=list)
    installed: bool = False  # `install` was called (`after_deploy.install` calls it once)
    finder: AfterImport | None = None

    def install(self, patches: Sequence[Patch]) -> None:
        """Each patch now, or when Ape imports its module; cheap (imports nothing)."""
        self.installed = True
        for patch in patches:
            self.when_imported(patch.module, partial(self.apply, patch))

    def apply(self, patch: Patch, module: ModuleType) -> None:
        """Check every attribute `patch` relies on, then wrap them; a change leaves `module` as it was."""
        try:
            patch.check(module)
            patch.apply(module)
        except Exception as err:  # ApeChanged, or what no check foresaw: said as the hook's other problems are
            problem = str(err) if isinstance(err, ApeChanged) else f"{type(err).__name__}: {err}"
            self.problems.append(f"{patch.module}: {problem}")
            logger.debug("contract_verify: not patched: %s: %s", patch.module, problem)
            return
        self.applied.add(patch.module)

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
