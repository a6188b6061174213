"""Whose server a target is (its `flavour`) comes from its configuration, never from words in its
URL: the name it is configured under, Blockscout's and Routescan's hosts, the Blockscout instance
evmchains lists for the chain; and its client carries it (the workflow asks the client)."""

from ape_contract_verify.client.known import flavour_of
from ape_contract_verify.client.targets import Target, resolve_targets
from ape_contract_verify.config import ContractVerifyConfig

KEYS = {"ETHERSCAN_API_KEY": "ether-key", "BLOCKSCOUT_API_KEY": "bs-key"}


def test_each_known_target_has_its_flavour_and_its_client_carries_it():
    config = ContractVerifyConfig(
        explorers={
            "ethereum": {
                "mainnet": {
                    "mirror": {
                        "url": "https://explorer.example.org/blockscout/api",
                        "kind": "etherscan",
                    },  # "blockscout" in the URL's words only
                    "eth-explorer": {
                        "url": "https://eth.blockscout.com/api",
                        "kind": "etherscan",
                    },  # a Blockscout host, under another name
                    "local-mirror": {"url": "http://127.0.0.1:5006/api", "kind": "etherscan"},
                }
            }
        }
    )
    targets = resolve_targets(
        "ethereum",
        "mainnet",
        config=config,
        environ=KEYS,
        names=["etherscan", "blockscout", "routescan", "sourcify", "mirror", "eth-explorer", "local-mirror"],
    )
    flavours = {t.name: t.flavour for t in targets}
    assert flavours == {
        "etherscan": "etherscan",
        "blockscout": "blockscout",
        "routescan": "routescan",
        "sourcify": "sourcify",
        "mirror": "etherscan",
        "eth-explorer": "blockscout",
        "local-mirror": "local",
    }
    for target in targets:
        assert target.client().flavour == target.flavour


def test_the_chains_listed_blockscout_instance_is_blockscout_under_any_name():
    assert flavour_of("explorer", "etherscan", "https://base-sepolia.blockscout.com/api") == "blockscout"
    assert (
        flavour_of("explorer", "etherscan", "https://scan.mychain.io/api", blockscout_pages="https://scan.mychain.io")
        == "blockscout"
    )
    assert flavour_of("explorer", "etherscan", "https://scan.mychain.io/api") == "etherscan"
    assert flavour_of("blockscout", "etherscan", "http://127.0.0.1:4000/api") == "blockscout"  # configured so


def test_a_target_built_by_hand_derives_its_flavour():
    def target(**kw):
        return Target(ecosystem="ethereum", network="local", chain_id=1337, api_key=None, **kw)

    assert target(url=None).flavour == "local"
    assert target(url="https://sourcify.dev/server/", kind="sourcify", name="sourcify").flavour == "sourcify"
    assert target(url="https://api.blockscout.com/v2/api", name="pro").flavour == "blockscout"
    assert target(url="https://api.etherscan.io/v2/api", flavour="blockscout").flavour == "blockscout"  # said, kept
