"""Which networks the plugin is Ape's explorer for, and the links it gives there, with no chain:
Etherscan's chains, the public chains only a Blockscout and Sourcify serve, or only Sourcify."""

import pytest

from ape_contract_verify.workflow.ape_explorer import ContractVerifyExplorer, registrations

ADDRESS = "0x" + "12" * 20
TX = "0x" + "ab" * 32
# astar:mainnet (592): evmchains lists a Blockscout, Etherscan V2 does not serve it.
# abstract:mainnet (2741): neither Etherscan V2 nor a Blockscout; Sourcify serves every public chain.
BLOCKSCOUT_ONLY, SOURCIFY_ONLY = ("astar", "mainnet", 592), ("abstract", "mainnet", 2741)


@pytest.fixture(autouse=True)
def no_keys(monkeypatch):
    for name in ("ETHERSCAN_API_KEY", "BLOCKSCOUT_API_KEY", "ROUTESCAN_API_KEY"):
        monkeypatch.delenv(name, raising=False)


def test_registered_for_every_chain_with_a_known_target_and_the_configured_ones():
    class Config:
        explorers = {"ethereum": {"my-anvil": {}}, "myeco": {"devnet": {}}}

    pairs = list(registrations(Config()))
    assert len(pairs) == len(set(pairs))  # Ape walks this list on every lookup: no repeats
    for ecosystem, network, _ in (BLOCKSCOUT_ONLY, SOURCIFY_ONLY):
        assert {(ecosystem, network), (ecosystem, f"{network}-fork"), (ecosystem, "local")} <= set(pairs)
    assert {("ethereum", "sepolia"), ("base", "mainnet"), ("ethereum", "my-anvil"), ("myeco", "devnet")} <= set(pairs)
    assert ("myeco", "mainnet") not in pairs


def test_ad_hoc_networks_by_chain_id():
    assert ContractVerifyExplorer.supports_chain(1) and ContractVerifyExplorer.supports_chain(BLOCKSCOUT_ONLY[2])
    assert ContractVerifyExplorer.supports_chain(str(SOURCIFY_ONLY[2]))
    assert not ContractVerifyExplorer.supports_chain(31337)  # a dev chain: nothing public serves it
    assert not ContractVerifyExplorer.supports_chain("not a number")


def _explorer(ecosystem: str, network: str):
    from ape import networks

    explorer = getattr(networks, ecosystem).get_network(network).explorer
    assert isinstance(explorer, ContractVerifyExplorer), type(explorer)
    return explorer


def test_a_blockscout_only_chain_links_to_its_blockscout():
    explorer = _explorer(*BLOCKSCOUT_ONLY[:2])
    assert [t.name for t in explorer._targets()] == ["blockscout", "sourcify"]
    assert explorer.get_address_url(ADDRESS) == f"https://blockscout.com/astar/address/{ADDRESS}"
    assert explorer.get_transaction_url(TX) == f"https://blockscout.com/astar/tx/{TX}"


def test_a_sourcify_only_chain_links_to_sourcify_and_has_no_transaction_link():
    explorer = _explorer(*SOURCIFY_ONLY[:2])
    assert [t.name for t in explorer._targets()] == ["sourcify"]
    assert explorer.get_address_url(ADDRESS) == f"https://repo.sourcify.dev/2741/{ADDRESS}"
    assert explorer.get_transaction_url(TX) == ""  # Sourcify has no transaction pages: no dead link


def test_an_etherscan_chain_without_a_key_still_links_transactions_to_etherscan():
    explorer = _explorer("ethereum", "sepolia")
    assert "etherscan" not in [t.name for t in explorer._targets()]  # verifying there needs a key
    assert explorer.get_transaction_url(TX) == f"https://sepolia.etherscan.io/tx/{TX}"


def test_etherscan_pages_evmchains_does_not_list_come_from_one_table_for_targets_and_links():
    from ape_contract_verify.client.targets import resolve_targets

    # evmchains lists no Etherscan pages for Hoodi: the Etherscan target and Ape's links agree.
    target = resolve_targets("ethereum", "hoodi", 560048, environ={"ETHERSCAN_API_KEY": "k"})[0]
    assert (target.name, target.browser_url) == ("etherscan", "https://hoodi.etherscan.io")
    assert target.contract_url(ADDRESS) == f"https://hoodi.etherscan.io/address/{ADDRESS}"
    assert _explorer("ethereum", "hoodi").get_transaction_url(TX) == f"https://hoodi.etherscan.io/tx/{TX}"


def test_a_proxy_ape_resolved_gets_only_its_own_functions_as_a_contract_type_ape_can_cache(monkeypatch):
    """Ape appends the proxy's type to the implementation's: the explorer gives the proxy's own
    functions the implementation lacks, as an ABIList (the field's type: a plain list makes
    pydantic warn when Ape serialises the type, and compares unequal to the same ABI)."""
    import warnings
    from types import SimpleNamespace

    from ethpm_types import ContractType
    from ethpm_types.contract_type import ABIList

    def function(name):
        return {"type": "function", "name": name, "inputs": [], "outputs": [], "stateMutability": "view"}

    proxy, implementation = "0x" + "aa" * 20, "0x" + "bb" * 20
    own = ContractType.model_validate({"contractName": "Proxy", "abi": [function("value"), function("admin")]})
    behind = ContractType.model_validate({"contractName": "Box", "abi": [function("value")]})
    types = {proxy.lower(): own, implementation.lower(): behind}
    monkeypatch.setattr(ContractVerifyExplorer, "_verified_type", lambda self, address: types.get(address.lower()))
    monkeypatch.setattr(ContractVerifyExplorer, "_ape_proxy_target", lambda self, address: implementation)
    contracts = SimpleNamespace(contract_types={implementation: None})  # Ape has no type cached for it
    monkeypatch.setattr(ContractVerifyExplorer, "chain_manager", SimpleNamespace(contracts=contracts))
    found = _explorer("ethereum", "sepolia").get_contract_type(proxy)
    assert found is not None and [abi.name for abi in found.abi] == ["admin"]
    assert isinstance(found.abi, ABIList) and found == own.model_copy(update={"abi": ABIList([own.abi[1]])})
    assert [abi.name for abi in own.abi] == ["value", "admin"]  # the cached type itself is left alone
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        found.model_dump_json()


@pytest.mark.parametrize(
    "compiler, language, version",
    [
        ("v0.8.26+commit.8a97fa7a", "Solidity", "0.8.26+commit.8a97fa7a"),
        ("v0.8.28-nightly.2024.9.2+commit.12345678", "Solidity", "0.8.28-nightly.2024.9.2+commit.12345678"),
        ("vyper:0.4.3", "Vyper", "0.4.3"),
        ("v0.3.10+commit.91361694", "Vyper", "0.3.10+commit.91361694"),
        ("vyper:0.4.3", "Solidity", "0.4.3"),  # the prefix says Vyper where the language does not
        ("V0.8.26+commit.8A97FA7A", "Solidity", "0.8.26+commit.8a97fa7a"),  # was kept as V0.8.26+commit.8A97FA7A
        ("latest", "Solidity", "latest"),  # no version: as the explorer holds it
    ],
)
def test_a_verified_record_is_ape_s_manifest_with_the_compiler_as_manifests_name_it(
    monkeypatch, compiler, language, version
):
    from types import SimpleNamespace

    from ape_contract_verify.client.provider import ExplorerRecord

    abi = [{"type": "function", "name": "x", "inputs": [], "outputs": [], "stateMutability": "view"}]
    record = ExplorerRecord(
        ADDRESS, True, "Box", compiler, language, abi, {"Box.sol": "contract Box {}"}, {"optimizer": {}}
    )
    client = SimpleNamespace(contract_record=lambda address: record)
    monkeypatch.setattr(ContractVerifyExplorer, "_targets", lambda self: [SimpleNamespace(url="u")])
    monkeypatch.setattr(ContractVerifyExplorer, "_reader", lambda self, target: client)
    manifest = _explorer("ethereum", "sepolia").get_manifest(ADDRESS)
    assert manifest is not None and len(manifest.compilers) == 1
    assert (manifest.compilers[0].name, manifest.compilers[0].version) == (language, version)
    assert (
        manifest.compilers[0].contractTypes == ["Box"]
        and str(manifest.sources["Box.sol"].content) == "contract Box {}\n"
    )
