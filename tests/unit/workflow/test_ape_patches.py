"""The deploy hook's patches of Ape: each checks what it wraps before it wraps anything. When Ape
changes under one (an attribute gone, a parameter renamed), the module stays as Ape made it, a
deploy still works, and the hook says what changed and that auto-verification is off for the run."""

import importlib
import importlib.abc
import importlib.util
import types

import pytest

from ape_contract_verify.workflow import after_deploy
from ape_contract_verify.workflow.after_deploy import PATCH_LIST
from ape_contract_verify.workflow.ape_patches import CHECKED_AGAINST, ApeChanged, ApePatches

pytestmark = pytest.mark.unit

CACHE = next(p for p in PATCH_LIST if p.module == "ape.managers._contractscache")
# A deployed instance, as far as the wrapper reads it.
BOX = types.SimpleNamespace(address="0x5FbDB2315678afecb367f032d93F642f64180aa3", contract_type=None, txn_hash=None)


class Hooks:
    """The deploy hook's side (`after_deploy.HOOK`), counting the deploys the patches hand it."""

    def __init__(self):
        self.deployed_addresses = []

    def deployed(self, address, contract_type, txn_hash=None):
        self.deployed_addresses.append(address)


def _cache_module(source):
    module = types.ModuleType("fake_contractscache")
    exec(source, vars(module))  # noqa: S102  (the test's own class definitions)
    return module


AS_CHECKED = """
class ContractCache:
    def cache_deployment(self, contract_instance, proxy_info=None, detect_proxy=True):
        return "cached " + contract_instance.address
    def cache_blueprint(self, blueprint_id, contract_type):
        return "blueprint"
"""
RENAMED = AS_CHECKED.replace("cache_deployment(self, contract_instance,", "cache_deployment(self, instance,").replace(
    "contract_instance.address", "instance.address"
)
GONE = AS_CHECKED.split("    def cache_blueprint")[0]


def test_the_installed_ape_is_the_one_the_patches_were_checked_against():
    from importlib.metadata import version

    for patch in PATCH_LIST:
        patch.check(importlib.import_module(patch.module))  # raises ApeChanged, naming what, if not
    # Each goes in (the provider context's attributes are checked as its wrapper goes in).
    after_deploy.install()  # as Ape's loading of the plugin does in every command
    assert {p.module for p in PATCH_LIST} <= after_deploy.PATCHES.applied, after_deploy.PATCHES.problems
    assert version("eth-ape").startswith("0.8.") and "0.8.25" in CHECKED_AGAINST


def test_a_module_as_checked_is_wrapped_and_the_deploy_reaches_the_hook(monkeypatch):
    module, hooks, patches = _cache_module(AS_CHECKED), Hooks(), ApePatches()
    monkeypatch.setattr(after_deploy, "HOOK", hooks)
    patches.apply(CACHE, module)
    box = BOX
    assert module.ContractCache().cache_deployment(box) == "cached " + box.address
    assert hooks.deployed_addresses == [box.address] and patches.applied == {CACHE.module} and not patches.problems


@pytest.mark.parametrize(
    ("source", "said"),
    [
        (RENAMED, "ContractCache.cache_deployment takes (self, instance, proxy_info, detect_proxy)"),
        (GONE, "ContractCache.cache_blueprint is gone"),
    ],
    ids=["parameter-renamed", "attribute-gone"],
)
def test_when_ape_changes_the_module_is_left_alone_and_the_run_says_so(source, said, monkeypatch, caplog):
    module, hooks, patches = _cache_module(source), Hooks(), ApePatches()
    monkeypatch.setattr(after_deploy, "HOOK", hooks)
    before = dict(vars(module.ContractCache))
    patches.apply(CACHE, module)

    # Nothing of the module changed (not even the attribute that was still as checked), and a deploy works.
    assert dict(vars(module.ContractCache)) == before and patches.applied == set()
    box = BOX
    assert module.ContractCache().cache_deployment(box) == "cached " + box.address
    assert hooks.deployed_addresses == []
    [problem] = patches.problems
    assert problem.startswith("ape.managers._contractscache: fake_contractscache.") and said in problem, problem
    if source is RENAMED:
        assert "not (self, contract_instance, ...)" in problem and CHECKED_AGAINST in problem

    # The hook: a deploy that would be verified is recorded instead, and the run says why, once.
    monkeypatch.undo()  # the real hook again
    monkeypatch.setattr(after_deploy, "PATCHES", patches)
    monkeypatch.setattr(after_deploy.HOOK, "warned", set())
    monkeypatch.setattr(after_deploy, "plugin_config", lambda: types.SimpleNamespace(auto=True))
    monkeypatch.setattr(after_deploy, "in_ape_run", lambda any_thread=False: True)
    assert after_deploy.deploy_mode() == "record"
    assert after_deploy.deploy_mode() == "record"
    warnings = [r.getMessage() for r in caplog.records if r.levelname == "WARNING"]
    assert len(warnings) == 1, warnings
    assert "could not hook Ape 0.8." in warnings[0] and said in warnings[0], warnings
    assert "Auto-verification is off for this run" in warnings[0] and "deploys are untouched" in warnings[0]
    assert "`ape verify all`" in warnings[0]


def test_with_auto_off_nothing_is_said(monkeypatch, caplog):
    patches = ApePatches(problems=["ape.managers._contractscache: ContractCache.cache_deployment is gone"])
    monkeypatch.setattr(after_deploy, "PATCHES", patches)
    monkeypatch.setattr(after_deploy.HOOK, "warned", set())
    monkeypatch.setattr(after_deploy, "plugin_config", lambda: types.SimpleNamespace(auto=False))
    monkeypatch.setattr(after_deploy, "in_ape_run", lambda any_thread=False: True)
    assert after_deploy.deploy_mode() == "record"  # as with auto off on an Ape the patches fit
    after_deploy.HOOK.unhooked()
    assert not [r for r in caplog.records if r.levelname == "WARNING"]


def test_a_check_names_a_missing_class_and_an_attribute_that_is_not_a_list():
    networks = next(p for p in PATCH_LIST if p.module == "ape.api.networks")
    with pytest.raises(ApeChanged, match="has no class ProviderContextManager"):
        networks.check(types.ModuleType("ape.api.networks"))
    module = _cache_module(
        "class ProviderContextManager:\n"
        "    provider_stack = ()\n"
        "    def __init__(self, provider):\n        self._provider = provider\n"
        "    def __enter__(self, *args, **kwargs):\n        pass\n"
        "    def __exit__(self, exception, *args, **kwargs):\n        pass\n"
    )
    networks.check(module)  # its methods are as Ape 0.8 has them; the wrapper checks the attributes
    with pytest.raises(ApeChanged, match="provider_stack is not a list"):
        networks.apply(module)
    module.ProviderContextManager.provider_stack = []
    networks.apply(module)  # as Ape 0.8 has it


class SharedLoader(importlib.abc.Loader):
    """One loader for many modules, as pytest's assertion rewriter is for every module of Ape (a
    package with a pytest plugin) when Ape's own plugin has not imported them first."""

    def __init__(self, sources):
        self.sources = sources

    def create_module(self, spec):
        return None

    def exec_module(self, module):
        exec(self.sources[module.__name__], vars(module))  # noqa: S102  (the test's own sources)


class SharedFinder(importlib.abc.MetaPathFinder):
    def __init__(self, loader):
        self.loader = loader

    def find_spec(self, fullname, path=None, target=None):
        if fullname in self.loader.sources:
            return importlib.util.spec_from_loader(fullname, self.loader)
        return None


@pytest.mark.parametrize("both_waiting", [False, True], ids=["imports-another", "imports-another-waiting"])
def test_a_loader_shared_by_many_modules_wraps_only_the_module_waited_for(both_waiting):
    import sys

    sources = {
        "acv_fake_first": "import acv_fake_second\nclass First: pass\n",
        "acv_fake_second": "class Second: pass\n",
        "acv_fake_third": "class Third: pass\n",
    }
    loader, patches, wrapped = SharedLoader(sources), ApePatches(), []
    finder = SharedFinder(loader)
    sys.meta_path.insert(0, finder)
    try:
        patches.when_imported("acv_fake_first", wrapped.append)
        if both_waiting:
            patches.when_imported("acv_fake_second", wrapped.append)
        first = importlib.import_module("acv_fake_first")
        second, third = sys.modules["acv_fake_second"], importlib.import_module("acv_fake_third")
        assert wrapped == ([second, first] if both_waiting else [first]), [m.__name__ for m in wrapped]
        assert hasattr(first, "First") and hasattr(third, "Third")
        assert "exec_module" not in vars(loader), "the shared loader was left wrapped"
        assert patches.finder not in sys.meta_path and not patches.problems
    finally:
        sys.meta_path.remove(finder)
        for name in sources:
            sys.modules.pop(name, None)
