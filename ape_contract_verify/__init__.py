"""Verify deployed contracts on Etherscan-style explorers, from Ape.

Ape imports every installed plugin on every command, so this module only registers;
everything heavy is imported inside the hooks or on first use of a public name.
"""

from importlib import import_module
from typing import Any

from ape import plugins

_PUBLIC = {
    "ContractVerifyConfig": "ape_contract_verify.config",
    "VerificationRequest": "ape_contract_verify.request",
    "Receipt": "ape_contract_verify.request",
    "CodeFormat": "ape_contract_verify.request",
    "ExplorerAnswer": "ape_contract_verify.answers",
    "Outcome": "ape_contract_verify.answers",
}


@plugins.register(plugins.Config)
def config_class():
    from ape_contract_verify.config import ContractVerifyConfig

    return ContractVerifyConfig


def __getattr__(name: str) -> Any:
    if module := _PUBLIC.get(name):
        return getattr(import_module(module), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = sorted(_PUBLIC)
