"""Whose server a target is (its `flavour`) comes from its configuration, never from words in its
URL: the name it is configured under, Blockscout's and Routescan's hosts, the Blockscout instance
evmchains lists for the chain; and its client carries it (the workflow asks the client)."""

import pytest

from ape_contract_verify.client.targets import Target, flavour_of, resolve_targets
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


def test_a_self_hosted_blockscout_under_another_name_says_its_flavour():
    """A Blockscout on the chain's own host, neither *.blockscout.com nor the instance evmchains
    lists, is Etherscan-flavoured unless its config says `flavour: blockscout`."""
    mirror = {"url": "https://scan.mychain.example/api", "kind": "etherscan"}
    config = ContractVerifyConfig(
        explorers={
            "ethereum": {
                "mainnet": {
                    "own-scout": {**mirror, "flavour": "blockscout"},
                    "plain": mirror,
                    "etherscan": {"url": "https://explorer.mychain.example/api", "flavour": "blockscout"},
                }
            }
        }
    )
    targets = {
        t.name: t
        for t in resolve_targets(
            "ethereum", "mainnet", config=config, environ=KEYS, names=["own-scout", "plain", "etherscan"]
        )
    }
    assert targets["own-scout"].flavour == "blockscout"
    assert targets["own-scout"].client().flavour == "blockscout"
    assert targets["plain"].flavour == "etherscan"  # the same host, no `flavour:`: nothing says Blockscout
    assert targets["etherscan"].flavour == "blockscout"


@pytest.mark.parametrize(
    ("entry", "problem"),
    [
        ({"url": "https://scan.mychain.example/api", "kind": "etherscan", "flavour": "blokscout"}, "unknown flavour"),
        ({"url": "https://scan.mychain.example/api", "kind": "etherscan", "flavour": "local"}, "unknown flavour"),
        ({"url": "https://sourcify.mychain.example/server/", "kind": "sourcify", "flavour": "blockscout"}, "sourcify"),
    ],
)
def test_a_bad_flavour_is_named_with_the_allowed_values(entry, problem):
    with pytest.raises(ValueError) as info:  # pydantic wraps the InvalidRequest the config raises
        ContractVerifyConfig(explorers={"ethereum": {"mainnet": {"own-scout": entry}}})
    text = str(info.value)
    assert "contract_verify.explorers.ethereum.mainnet.own-scout.flavour" in text
    assert problem in text.lower()
    if problem == "unknown flavour":
        assert all(f"flavour: {f}" in text for f in ("etherscan", "blockscout", "routescan"))
