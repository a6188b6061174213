"""A real deploy on Ape's test chain when Ape changed what a patch wraps: the patch leaves Ape's
method as it found it, the deploy goes through, and the hook is handed nothing."""

import pytest

from ape_contract_verify.workflow import after_deploy
from ape_contract_verify.workflow.after_deploy import PATCH_LIST
from ape_contract_verify.workflow.ape_patches import ApePatches

pytestmark = pytest.mark.engine

# Returns 42 from any call: init code copying the 10-byte runtime.
RUNTIME = "602a60005260206000f3"
INIT = "600a600c600039600a6000f3" + RUNTIME


def test_a_deploy_works_when_ape_renamed_what_the_patch_wraps(monkeypatch):
    from ape import accounts, networks
    from ape.contracts import ContractContainer
    from ape.managers import _contractscache
    from ethpm_types import ContractType

    current = _contractscache.ContractCache.cache_deployment
    # The plugin's own patch, put in as this process imported Ape, may be inside `current`: it hands
    # the hook each deploy once. Only the patch of the renamed method would hand it more.
    from_the_plugin = 1 if current.__module__ == after_deploy.__name__ else 0

    def cache_deployment(self, instance, proxy_info=None, detect_proxy=True):  # as a later Ape might name it
        return current(self, instance, proxy_info, detect_proxy)

    monkeypatch.setattr(_contractscache.ContractCache, "cache_deployment", cache_deployment)
    handed, patches = [], ApePatches()
    monkeypatch.setattr(after_deploy.HOOK, "deployed", lambda *args: handed.append(args))
    patches.apply(next(p for p in PATCH_LIST if p.module == _contractscache.__name__), _contractscache)
    assert _contractscache.ContractCache.cache_deployment is cache_deployment  # left as found
    [problem] = patches.problems
    assert "ContractCache.cache_deployment takes (self, instance," in problem, problem

    container = ContractContainer(
        ContractType(
            contractName="FortyTwo",
            abi=[],
            deploymentBytecode={"bytecode": "0x" + INIT},
            runtimeBytecode={"bytecode": "0x" + RUNTIME},
        )
    )
    with networks.ethereum.local.use_provider("test") as provider:
        deployed = accounts.test_accounts[0].deploy(container)
        assert provider.get_code(deployed.address).hex().removeprefix("0x") == RUNTIME
    assert len(handed) == from_the_plugin  # the hook was handed nothing more: auto-verification is off
