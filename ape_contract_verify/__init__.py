"""The plugin as Ape loads it: its config and explorer hooks, and its public names, imported lazily.

It verifies deployed contracts on Etherscan-style explorers and Sourcify, from Ape. Ape imports every installed plugin on every command, so this module only registers;
everything heavy is imported inside the hooks or on first use of a public name.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from importlib import import_module
from typing import TYPE_CHECKING, Any

from ape import plugins
from ape.plugins.config import Config
from ape.plugins.network import ExplorerPlugin

if TYPE_CHECKING:
    from ape.api import ExplorerAPI, PluginConfig

# ape-solidity's config has a field pydantic-settings cannot resolve; every `ape` command would
# print two lines about it before any output. Only that warning is silenced.
warnings.filterwarnings(
    "ignore", message=r"Field 'import_remapping' has an incomplete definition", module=r"pydantic_settings\."
)

# The public names: the Python API's functions and the types they take and give, each imported from
# `ape_contract_verify.api` on first use (`__getattr__`); tests/unit/test_api.py holds this list to
# the one in README.md.
__all__ = [
    "CodeFormat",
    "ContractVerifyConfig",
    "ContractVerifyError",
    "DryRunPlan",
    "ExplorerAnswer",
    "InvalidRequest",
    "NoRecords",
    "Outcome",
    "Receipt",
    "Report",
    "StatusRow",
    "StatusView",
    "TargetStatus",
    "VerificationRequest",
    "abi",
    "connected",
    "dry_run",
    "failed",
    "job_status",
    "source",
    "status",
    "summary_table",
    "verify",
    "verify_all",
    "verify_proxy",
]


@plugins.register(Config)
def config_class() -> type[PluginConfig]:
    from ape_contract_verify.config import ContractVerifyConfig
    from ape_contract_verify.workflow.after_deploy import install

    # In every command: the wrappers decide at each deploy whether it is inside `ape run`
    # (or `auto: always`), so no command line is read; installing imports nothing of Ape.
    install()
    return ContractVerifyConfig


# Ape takes the first explorer plugin that names a network, in `get_hookimpls()` order, where pluggy
# puts `trylast` implementations FIRST (pluggy calls hooks in reverse; Ape reads the list forwards).
# So `trylast` makes this plugin's explorer Ape's choice even with ape-etherscan installed;
# `contract_verify.explorer: false` registers none and leaves the networks to the others.
@plugins.register(ExplorerPlugin, trylast=True)
def explorers() -> Iterator[tuple[str, str, type[ExplorerAPI]]]:
    from ape_contract_verify.workflow.after_deploy import plugin_config
    from ape_contract_verify.workflow.ape_explorer import ContractVerifyExplorer, registrations

    try:
        cfg = plugin_config()
    except Exception:  # a broken ape-config.yaml is reported where it is read, not here
        cfg = None
    if cfg is not None and not cfg.explorer:
        return
    for ecosystem, network in registrations(cfg):
        yield ecosystem, network, ContractVerifyExplorer


def __getattr__(name: str) -> Any:  # Any: each lazy public name has its own type
    if name == "__version__":  # pyproject.toml is the one source; read only when asked
        from importlib.metadata import version

        return version("ape-contract-verify")
    if name in __all__:
        return getattr(import_module("ape_contract_verify.api"), name)  # getattr: the name is only known at run time
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
