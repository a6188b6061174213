"""A network's targets: config, defaults per kind of chain, choice by name, keys kept apart."""

import pytest

from ape_contract_verify.client.etherscan import ExplorerClient
from ape_contract_verify.client.targets import (
    BLOCKSCOUT_PRO_URL,
    ETHERSCAN_V2_URL,
    SOURCIFY_REPO_URL,
    SOURCIFY_URL,
    Target,
    resolve_target,
    resolve_targets,
)
from ape_contract_verify.config import ContractVerifyConfig
from ape_contract_verify.exceptions import ExplorerNotConfigured, InvalidRequest
from support.stub_server import Sleeps

KEYS = {"ETHERSCAN_API_KEY": "ether-key", "BLOCKSCOUT_API_KEY": "bs-key"}


def by_name(targets):
    return {t.name: t for t in targets}


# -- config -----------------------------------------------------------------------------------------


def test_todays_keys_are_the_etherscan_target_and_named_entries_are_further_targets():
    config = ContractVerifyConfig(
        explorers={
            "ethereum": {
                "sepolia": {
                    "api_key_env": "MY_ETHERSCAN",
                    "calls_per_second": 4,
                    "blockscout": {"url": "https://eth-sepolia.blockscout.com/api", "calls_per_second": 2},
                    "mirror": {"url": "http://127.0.0.1:5006", "kind": "sourcify"},
                }
            }
        }
    )
    explorer = config.explorer_for("ethereum", "sepolia")
    assert explorer.api_key_env == "MY_ETHERSCAN"  # the old form reads as before
    assert {n: t.kind for n, t in explorer.named_targets().items()} == {"blockscout": "etherscan", "mirror": "sourcify"}
    targets = by_name(
        resolve_targets("ethereum", "sepolia", config=config, environ={"MY_ETHERSCAN": "targets-test-key"})
    )
    assert list(targets) == ["etherscan", "blockscout", "mirror", "sourcify"]
    assert targets["etherscan"].url == ETHERSCAN_V2_URL and targets["etherscan"].api_key.reveal() == "targets-test-key"
    assert targets["etherscan"].calls_per_second == 4
    assert (
        targets["blockscout"].url == "https://eth-sepolia.blockscout.com/api"
        and targets["blockscout"].calls_per_second == 2
    )
    assert targets["mirror"].url == "http://127.0.0.1:5006/" and targets["mirror"].kind == "sourcify"
    # the singular resolver keeps giving the network's own (etherscan) target
    assert (
        resolve_target("ethereum", "sepolia", 11155111, config=config, environ={"MY_ETHERSCAN": "targets-test-key"}).url
        == ETHERSCAN_V2_URL
    )


@pytest.mark.parametrize(
    "entry,path,words",
    [
        ({"mine": {"url": "https://x/api"}}, "sepolia.mine", "kind: etherscan"),
        ({"mine": {"url": "https://x/api", "kind": "blockscout"}}, "sepolia.mine.kind", "unknown kind 'blockscout'"),
        ({"blockscout": {"url": "https://x/api", "kind": "sourcify"}}, "sepolia.blockscout.kind", "drop `kind`"),
        ({"mine": {"kind": "sourcify"}}, "sepolia.mine.url", "add its base URL"),
        ({"sourcify": {"uri": "https://x/"}}, "sepolia.sourcify.uri", "the keys are url"),
        ({"kind": "sourcify"}, "sepolia.kind", "is not a key of a network's entry"),
        ({"url": "https://a/api", "etherscan": {"url": "https://b/api"}}, "sepolia.etherscan", "not both"),
    ],
    ids=["no-kind", "bad-kind", "fixed-kind", "no-url", "typo", "kind-at-network", "etherscan-twice"],
)
def test_bad_target_config_names_the_key_path_and_the_fix(entry, path, words):
    with pytest.raises(ValueError) as info:
        ContractVerifyConfig(explorers={"ethereum": {"sepolia": entry}})
    text = str(info.value)
    assert f"contract_verify.explorers.ethereum.{path}" in text and words in text and "Fix:" in text


def test_a_targets_name_that_is_nowhere_is_caught_at_load():
    with pytest.raises(ValueError, match=r"contract_verify.targets: 'blokscout' is neither"):
        ContractVerifyConfig(targets=["etherscan", "blokscout"])
    ContractVerifyConfig(
        targets=["etherscan", "mine"],
        explorers={"ethereum": {"local": {"mine": {"url": "http://127.0.0.1:1/", "kind": "sourcify"}}}},
    )


# -- defaults per kind of chain ---------------------------------------------------------------------


def test_sepolia_without_a_key_has_no_etherscan():
    targets = resolve_targets("ethereum", "sepolia", environ={"BLOCKSCOUT_API_KEY": "bs"})
    assert [t.name for t in targets] == ["sourcify"]  # evmchains lists no Blockscout for sepolia
    (sourcify,) = targets
    assert (sourcify.url, sourcify.kind, sourcify.chain_id) == (SOURCIFY_URL, "sourcify", 11155111)
    assert sourcify.browser_url == SOURCIFY_REPO_URL and sourcify.api_key is None
    assert sourcify.contract_url("0xAb") == f"{SOURCIFY_REPO_URL}/11155111/0xAb"


def test_sepolia_with_a_key_adds_etherscan_v2():
    targets = by_name(resolve_targets("ethereum", "sepolia", environ=KEYS))
    assert list(targets) == ["etherscan", "sourcify"]
    etherscan = targets["etherscan"]
    assert etherscan.url == ETHERSCAN_V2_URL and etherscan.chain_id_param == "chainid" and etherscan.sends_chain_id
    assert etherscan.api_key.reveal() == "ether-key" and etherscan.browser_url == "https://sepolia.etherscan.io"
    # --api-key counts as a key too
    assert "etherscan" in by_name(resolve_targets("ethereum", "sepolia", api_key="flag", environ={}))


def test_a_chain_with_a_blockscout_instance_in_evmchains():
    targets = by_name(resolve_targets("base", "sepolia", environ={}))
    assert list(targets) == ["blockscout", "sourcify"]
    blockscout = targets["blockscout"]
    assert blockscout.url == "https://base-sepolia.blockscout.com/api" and blockscout.kind == "etherscan"
    assert blockscout.browser_url == "https://base-sepolia.blockscout.com" and blockscout.chain_id == 84532
    assert blockscout.calls_per_second == 5.0 and not blockscout.sends_chain_id
    assert blockscout.contract_url("0xAb") == "https://base-sepolia.blockscout.com/address/0xAb"
    assert list(by_name(resolve_targets("ethereum", "mainnet", environ=KEYS))) == [
        "etherscan",
        "blockscout",
        "sourcify",
    ]


def test_the_top_level_rate_when_set_applies_to_every_target():
    config = ContractVerifyConfig(calls_per_second=1.5)
    assert {t.calls_per_second for t in resolve_targets("base", "sepolia", config=config, environ={})} == {1.5}
    assert {
        t.calls_per_second for t in resolve_targets("base", "sepolia", config=ContractVerifyConfig(), environ={})
    } == {5.0, 3.0}


@pytest.mark.parametrize("network", ["local", "mainnet-fork"])
def test_local_and_fork_networks_with_nothing_configured_use_the_embedded_explorer(network):
    (target,) = resolve_targets("ethereum", network, environ=KEYS)
    assert (target.name, target.kind, target.url) == ("etherscan", "etherscan", None) and target.is_local


def test_a_local_network_with_two_explorers_configured_gets_both_and_no_embedded_one():
    config = ContractVerifyConfig(
        explorers={
            "ethereum": {"local": {"url": "http://127.0.0.1:5005/api", "sourcify": {"url": "http://127.0.0.1:5005/"}}}
        }
    )
    etherscan, sourcify = resolve_targets("ethereum", "local", 31337, config=config, environ=KEYS)
    assert (etherscan.url, etherscan.browser_url) == ("http://127.0.0.1:5005/api", "http://127.0.0.1:5005")
    assert (sourcify.name, sourcify.kind, sourcify.url, sourcify.chain_id) == (
        "sourcify",
        "sourcify",
        "http://127.0.0.1:5005/",
        31337,
    )
    assert sourcify.browser_url == "http://127.0.0.1:5005"
    assert sourcify.contract_url("0xAb") == "http://127.0.0.1:5005/address/0xAb"  # the local explorer's pages


def test_an_unknown_chain_with_nothing_configured_says_what_to_set():
    with pytest.raises(ExplorerNotConfigured, match=r"contract_verify.explorers.mychain.main.url"):
        resolve_targets("mychain", "main", 999999, environ=KEYS)


def test_explorer_url_alone_means_only_the_etherscan_target():
    (target,) = resolve_targets("ethereum", "mainnet", explorer_url="http://127.0.0.1:9", environ=KEYS)
    assert (target.name, target.url) == ("etherscan", "http://127.0.0.1:9/api")
    with pytest.raises(InvalidRequest, match="--explorer-url.*--target etherscan"):
        resolve_targets("ethereum", "mainnet", names=["sourcify"], explorer_url="http://127.0.0.1:9", environ=KEYS)


# -- choosing by name ------------------------------------------------------------------------------


def test_names_choose_and_order_the_targets():
    targets = resolve_targets("ethereum", "mainnet", names=["sourcify", "etherscan", "sourcify"], environ={})
    assert [t.name for t in targets] == ["sourcify", "etherscan"]  # named without a key: the user asked
    assert targets[1].api_key is None


def test_an_unknown_name_lists_the_networks_targets():
    with pytest.raises(InvalidRequest) as info:
        resolve_targets("ethereum", "sepolia", names=["blockscout"], environ=KEYS)
    assert info.value.param == "--target"
    assert "'blockscout' is not a target of ethereum:sepolia" in str(info.value)
    assert "etherscan, routescan, sourcify" in str(info.value)


def test_config_targets_pick_and_leave_out_what_does_not_apply_here():
    config = ContractVerifyConfig(targets=["blockscout", "sourcify"])
    assert [t.name for t in resolve_targets("ethereum", "sepolia", config=config, environ=KEYS)] == ["sourcify"]
    assert [t.name for t in resolve_targets("base", "sepolia", config=config, environ=KEYS)] == [
        "blockscout",
        "sourcify",
    ]
    with pytest.raises(ExplorerNotConfigured, match="None of contract_verify.targets"):
        resolve_targets("ethereum", "local", config=config, environ=KEYS)
    # --target wins over the config's list
    assert [t.name for t in resolve_targets("base", "sepolia", config=config, names=["etherscan"], environ=KEYS)] == [
        "etherscan"
    ]


def test_routescan_by_name():
    (sepolia,) = resolve_targets("ethereum", "sepolia", names=["routescan"], environ=KEYS)
    assert sepolia.url == "https://api.routescan.io/v2/network/testnet/evm/11155111/etherscan/api"
    assert sepolia.api_key is None and not sepolia.sends_chain_id and sepolia.calls_per_second == 2.0
    (avalanche,) = resolve_targets("avalanche", "mainnet", names=["routescan"], environ={"ROUTESCAN_API_KEY": "rs"})
    assert avalanche.url == "https://api.routescan.io/v2/network/mainnet/evm/43114/etherscan/api"
    assert avalanche.api_key.reveal() == "rs"
    assert "routescan" not in by_name(resolve_targets("avalanche", "mainnet", environ=KEYS))  # not a default


# -- keys ------------------------------------------------------------------------------------------


def test_the_etherscan_key_never_reaches_another_target():
    config = ContractVerifyConfig(
        explorers={"base": {"sepolia": {"custom": {"url": "https://c.example/api", "kind": "etherscan"}}}}
    )
    env = {"ETHERSCAN_API_KEY": "ether-key"}
    targets = by_name(resolve_targets("base", "sepolia", config=config, api_key="flag-key", environ=env))
    assert targets["etherscan"].api_key.reveal() == "flag-key"
    for name in ("blockscout", "custom", "sourcify"):
        assert targets[name].api_key is None, name
    # the network's own url pointing at a Blockscout: no Etherscan key there either
    config = ContractVerifyConfig(explorers={"base": {"sepolia": {"url": "https://base-sepolia.blockscout.com/api"}}})
    own = by_name(resolve_targets("base", "sepolia", config=config, environ=env))["etherscan"]
    assert own.api_key is None


def test_each_target_reads_its_own_key_variable():
    config = ContractVerifyConfig(explorers={"base": {"sepolia": {"blockscout": {"api_key_env": "BS_KEY"}}}})
    env = {"ETHERSCAN_API_KEY": "ether-key", "BS_KEY": "mine", "BLOCKSCOUT_API_KEY": "default"}
    targets = by_name(resolve_targets("base", "sepolia", config=config, environ=env))
    assert targets["blockscout"].url == "https://base-sepolia.blockscout.com/api"  # the known instance, keyed
    assert targets["blockscout"].api_key.reveal() == "mine"
    assert targets["etherscan"].api_key.reveal() == "ether-key"


# -- Blockscout's Pro API --------------------------------------------------------------------------


def pro_config(**entry):
    return ContractVerifyConfig(
        explorers={"ethereum": {"sepolia": {"blockscout": {"url": BLOCKSCOUT_PRO_URL, **entry}}}}
    )


def test_pro_api_takes_chain_id_and_its_key():
    targets = by_name(
        resolve_targets(
            "ethereum", "sepolia", config=pro_config(api_key_env="PRO"), environ={**KEYS, "PRO": "proapi_1"}
        )
    )
    pro = targets["blockscout"]
    assert pro.chain_id_param == "chain_id" and pro.chain_id == 11155111 and pro.api_key.reveal() == "proapi_1"
    client = pro.client(sleep=Sleeps(), max_retries=0)
    assert isinstance(client, ExplorerClient) and client.chain_id == 11155111 and client.chain_id_param == "chain_id"
    # the chain-in-path form sends no parameter
    path_form = ContractVerifyConfig(
        explorers={"ethereum": {"sepolia": {"blockscout": {"url": "https://api.blockscout.com/11155111/api"}}}}
    )
    (pro,) = resolve_targets("ethereum", "sepolia", config=path_form, names=["blockscout"], environ=KEYS)
    assert pro.chain_id_param is None and pro.api_key.reveal() == "bs-key"


def test_pro_api_without_a_key_names_the_setting():
    with pytest.raises(ExplorerNotConfigured) as info:
        resolve_targets(
            "ethereum", "sepolia", config=pro_config(api_key_env="PRO"), environ={"ETHERSCAN_API_KEY": "ether-key"}
        )
    assert "contract_verify.explorers.ethereum.sepolia.blockscout.api_key_env" in str(info.value)
    assert "PRO" in str(info.value) and "ether-key" not in str(info.value)
    hand_made = Target(
        "ethereum", "sepolia", BLOCKSCOUT_PRO_URL, 11155111, None, name="blockscout", chain_id_param="chain_id"
    )
    with pytest.raises(ExplorerNotConfigured, match="BLOCKSCOUT_API_KEY"):
        hand_made.client()


# -- clients ---------------------------------------------------------------------------------------


def test_an_etherscan_target_makes_an_explorer_client_with_its_settings():
    (target,) = resolve_targets("ethereum", "sepolia", names=["etherscan"], api_key="targets-test-key", environ={})
    client = target.client(sleep=Sleeps(), max_retries=1)
    assert client.base_url == ETHERSCAN_V2_URL and client.chain_id == 11155111 and client.chain_id_param == "chainid"
    assert client.retry.max_retries == 1


def test_sourcify_targets_carry_what_the_sourcify_client_needs():
    config = ContractVerifyConfig(
        explorers={
            "ethereum": {
                "sepolia": {
                    "sourcify": {"url": "https://sourcify.example/server", "api_key_env": "SRC", "calls_per_second": 7}
                }
            }
        }
    )
    (target,) = resolve_targets("ethereum", "sepolia", config=config, names=["sourcify"], environ={"SRC": "s", **KEYS})
    assert (target.kind, target.url, target.chain_id, target.calls_per_second) == (
        "sourcify",
        "https://sourcify.example/server/",
        11155111,
        7.0,
    )
    assert target.api_key.reveal() == "s" and target.chain_id_param is None and target.browser_url is None


def test_resolving_is_offline(monkeypatch):
    """evmchains is data in the package: resolving opens no connection. (How fast it is, is for a
    benchmark: a wall-clock bound here failed under load.)"""
    import socket

    def refuse(*args, **kwargs):
        raise AssertionError("resolving a network's targets tried to connect")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    first = resolve_targets("base", "sepolia", environ=KEYS)
    assert first and all(target.url.startswith("https://") for target in first)
    assert [t.url for t in resolve_targets("base", "sepolia", environ=KEYS)] == [t.url for t in first]
