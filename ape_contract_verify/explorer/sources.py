"""getsourcecode's result object in Etherscan's layout, built from what the store holds."""

from __future__ import annotations

from ape_contract_verify.explorer.store import Store, VerifiedContract
from ape_contract_verify.json_types import as_object
from ape_contract_verify.protocol.answers import Texts
from ape_contract_verify.protocol.values import checksum
from ape_contract_verify.request import CodeFormat

# Etherscan's fields, empty but for these three.
_FIELDS = "SourceCode ABI ContractName CompilerVersion OptimizationUsed Runs ConstructorArguments EVMVersion Library"
UNVERIFIED_SOURCE = {
    **dict.fromkeys(f"{_FIELDS} LicenseType Proxy Implementation SwarmSource".split(), ""),
    **{"ABI": Texts.NOT_VERIFIED, "LicenseType": "Unknown", "Proxy": "0"},
}


def source_entry(contract: VerifiedContract, proxy_implementation: str | None) -> dict[str, str]:
    """One getsourcecode result object in Etherscan's layout: every value a string."""
    from ape_contract_verify.protocol.licenses import code_from_source, license_name

    settings = contract.input_settings()
    source_code = contract.source_code
    if contract.code_format != CodeFormat.SINGLE_FILE.value:
        source_code = "{" + source_code + "}"  # Etherscan's {{…}} for JSON inputs
    optimizer = as_object(settings.get("optimizer"))
    if contract.compiler_version.startswith("vyper:"):
        # Vyper has modes, not runs: optimize gas (the default) or codesize counts as on.
        optimization_used = "0" if str(settings.get("optimize", "gas")).lower() in ("none", "false") else "1"
        runs = "0"
    else:
        optimization_used = "1" if optimizer.get("enabled") else "0"
        runs = str(optimizer.get("runs", 200))
    license_code = contract.license_type or code_from_source(contract.source_code)
    implementation = checksum(proxy_implementation) if proxy_implementation else ""
    return {
        "SourceCode": source_code,
        "ABI": contract.abi,
        "ContractName": contract.contract_name.rsplit(":", 1)[-1],
        "CompilerVersion": contract.compiler_version,
        "OptimizationUsed": optimization_used,
        "Runs": runs,
        "ConstructorArguments": contract.constructor_arguments,
        "EVMVersion": str(settings.get("evmVersion") or "Default"),
        "Library": ";".join(f"{name}:{address}" for name, address in sorted(contract.libraries.items())),
        "LicenseType": license_name(license_code),
        "Proxy": "1" if implementation else "0",
        "Implementation": implementation,
        "SwarmSource": "",
        # Our own additions: how the code matched, and in which form the source was sent.
        "MatchType": contract.match,
        "CodeFormat": contract.code_format,
    }


def source_result(store: Store, address: str) -> dict[str, str]:
    """getsourcecode's one result object for `address`.

    A proxy linked by verifyproxycontract whose own source is not verified (an EIP-1167 clone has
    none to verify) answers as Blockscout does for minimal proxies: the implementation's source
    and ABI, with `Proxy` "1" and its `Implementation`. Constructor arguments are the address's
    own, so a proxy that was not verified itself shows none."""
    contract = store.get_contract(address)
    proxy = store.get_proxy(address)
    if contract is not None:
        return source_entry(contract, proxy.implementation if proxy else None)
    if proxy is None:
        return dict(UNVERIFIED_SOURCE)
    implementation = store.get_contract(proxy.implementation)
    if implementation is None:  # the link is known, the code behind it is not
        return {**UNVERIFIED_SOURCE, "Proxy": "1", "Implementation": checksum(proxy.implementation)}
    entry = source_entry(implementation, proxy.implementation)
    entry["ConstructorArguments"] = ""
    entry["MatchType"] = "proxy"  # ours: the address's code was not compared, only linked
    return entry
