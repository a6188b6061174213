"""server/sources.py: getsourcecode's result objects in Etherscan's layout, from made-up store records."""

from __future__ import annotations

import json

import pytest

from ape_contract_verify.explorer.sources import UNVERIFIED_SOURCE, source_entry, source_result
from ape_contract_verify.explorer.store import ProxyRecord, Store, VerifiedContract
from ape_contract_verify.protocol.answers import Texts
from ape_contract_verify.protocol.values import checksum

pytestmark = pytest.mark.unit

ADDRESS = "0x" + "ab" * 20
IMPL = "0x" + "cd" * 20


def contract(address: str = ADDRESS, **fields) -> VerifiedContract:
    values = dict(
        address=address,
        contract_name="src/A.sol:A",
        compiler_version="v0.8.26+commit.8a97fa7a",
        code_format="solidity-single-file",
        source_code="// SPDX-License-Identifier: MIT\ncontract A {}",
        abi="[]",
        constructor_arguments="00" * 32,
        settings={"optimizer": {"enabled": True, "runs": 999}, "evmVersion": "cancun"},
        libraries={"B": "0x" + "11" * 20, "A": "0x" + "22" * 20},
        match="partial",
    )
    values.update(fields)
    return VerifiedContract(**values)


def test_a_flat_file_entry_has_every_value_a_string():
    entry = source_entry(contract(), None)
    assert all(isinstance(value, str) for value in entry.values())
    assert entry["SourceCode"].startswith("// SPDX") and entry["ContractName"] == "A"
    assert (entry["OptimizationUsed"], entry["Runs"], entry["EVMVersion"]) == ("1", "999", "cancun")
    assert entry["Library"] == "A:0x" + "22" * 20 + ";B:0x" + "11" * 20  # sorted by name
    assert (entry["LicenseType"], entry["Proxy"], entry["MatchType"]) == ("MIT", "0", "partial")


def test_a_json_input_is_wrapped_in_double_braces_and_its_settings_win():
    source = json.dumps({"language": "Solidity", "sources": {}, "settings": {"optimizer": {"enabled": False}}})
    entry = source_entry(contract(code_format="solidity-standard-json-input", source_code=source), None)
    assert entry["SourceCode"] == "{" + source + "}"
    assert entry["OptimizationUsed"] == "0" and entry["EVMVersion"] == "cancun"


@pytest.mark.parametrize("mode, used", [("gas", "1"), ("codesize", "1"), ("none", "0")])
def test_vyper_modes_count_as_optimizer_on_or_off(mode, used):
    entry = source_entry(contract(compiler_version="vyper:0.4.3", settings={"optimize": mode}), None)
    assert (entry["OptimizationUsed"], entry["Runs"]) == (used, "0")


def test_results_for_unverified_proxied_and_linked_addresses(tmp_path):
    store = Store(tmp_path / "s.sqlite")
    try:
        assert source_result(store, ADDRESS) == UNVERIFIED_SOURCE and UNVERIFIED_SOURCE["ABI"] == Texts.NOT_VERIFIED
        proxy = "0x" + "ef" * 20
        store.finish(store.add_submission("proxy", proxy, {}), "1", "ok", proxy=ProxyRecord(proxy, IMPL))
        unknown = source_result(store, proxy)  # linked, its implementation not verified
        assert (unknown["Proxy"], unknown["Implementation"], unknown["SourceCode"]) == ("1", checksum(IMPL), "")
        store.save_contract(contract(IMPL))
        linked = source_result(store, proxy)  # Blockscout's minimal-proxy answer: the implementation's source
        assert linked["ContractName"] == "A" and linked["ConstructorArguments"] == ""
        assert (linked["Proxy"], linked["MatchType"]) == ("1", "proxy")
        store.save_contract(contract(proxy))
        own = source_result(store, proxy)
        assert own["MatchType"] == "partial" and own["ConstructorArguments"] == "00" * 32
    finally:
        store.close()
