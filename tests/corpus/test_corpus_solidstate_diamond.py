"""SolidState's EIP-2535 diamond (@solidstate/contracts 0.0.59 from npm; solc 0.8.21, 200 runs)
deployed by corpus/solidstate-diamond's own script: the diamond, three facets (SolidState's ERC-20,
access control and multicall) and the initializer its `diamondCut` delegatecalls. Every contract
verified after deploy, then by address alone, standard-json and flattened, and read back.

A diamond routes each selector to a facet through its own storage: no EIP-1967 (or any other)
slot names an implementation, so the plugin verifies it as the contract it is, as Etherscan shows
diamonds; its facets, which loupe readers such as Louper list, are verified at their own
addresses."""

import requests

from ape_contract_verify.evm.chain import JsonRpcChain
from ape_contract_verify.evm.proxies import detect_proxy
from support.corpus import ProtocolChecks, summary_rows

FACETS = ["TokenFacet", "AccessControlFacet", "MulticallFacet"]


def _rpc(url: str, method: str, *params):
    body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": list(params)}
    return requests.post(url, json=body, timeout=30).json()["result"]


class TestSolidStateDiamond(ProtocolChecks):
    PROTOCOL = "solidstate-diamond"
    CONTRACTS = ["Diamond", *FACETS, "DiamondInit"]

    def test_the_loupe_lists_the_diamond_and_its_facets(self, deployed):
        # facetAddresses(): the diamond (its built-in selectors) and every facet the script cut in
        words = _rpc(
            deployed.anvil.url, "eth_call", {"to": dict(deployed.contracts)["Diamond"], "data": "0x52ef6b2c"}, "latest"
        )[2:]
        count = int(words[64:128], 16)
        listed = {"0x" + words[128 + 64 * i + 24 : 128 + 64 * (i + 1)] for i in range(count)}
        wanted = {address.lower() for name, address in deployed.contracts if name != "DiamondInit"}
        assert listed == wanted

    def test_the_diamond_is_no_proxy_to_the_plugin(self, deployed):
        # no slot names a facet: a proxy link row (e.g. a Safe-style slot 0) would be a false positive
        rows = summary_rows(deployed.deploy.stdout)[dict(deployed.contracts)["Diamond"].lower()]
        assert [(contract, outcome) for contract, outcome, _ in rows] == [("Diamond", "verified")], rows

    def test_an_address_in_the_diamonds_slot_zero_makes_no_safe_proxy(self, deployed):
        # AppStorage diamonds keep their struct at slot 0, its first field maybe a contract's address
        url, contracts = deployed.anvil.url, dict(deployed.contracts)
        diamond, word = contracts["Diamond"], "0x" + contracts["TokenFacet"][2:].lower().rjust(64, "0")
        snapshot = _rpc(url, "evm_snapshot")
        try:
            _rpc(url, "anvil_setStorageAt", diamond, "0x0", word)
            assert _rpc(url, "eth_getStorageAt", diamond, "0x0", "latest") == word
            assert detect_proxy(JsonRpcChain(url), diamond) is None
        finally:
            _rpc(url, "evm_revert", snapshot)
