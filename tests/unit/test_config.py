"""config.py: the `contract_verify:` section: defaults, bounds, and every refusal naming the key
path and the fix; a network's own keys as its `etherscan` target, further targets by name."""

import os

import pytest
from pydantic import ValidationError

from ape_contract_verify.config import (
    KNOWN_TARGET_KINDS,
    ContractVerifyConfig,
    ExplorerConfig,
    TargetConfig,
)
from ape_contract_verify.exceptions import InvalidRequest
from ape_contract_verify.request import CodeFormat

pytestmark = pytest.mark.unit

NETWORK = "contract_verify.explorers.ethereum.sepolia."


@pytest.fixture(autouse=True)
def no_settings_from_the_environment(monkeypatch):
    for name in list(os.environ):
        if name.startswith("APE_CONTRACT_VERIFY_"):
            monkeypatch.delenv(name)


def refused(**settings) -> str:
    with pytest.raises(ValidationError) as info:
        ContractVerifyConfig(**settings)
    return str(info.value)


def sepolia(**targets) -> dict:
    return {"ethereum": {"sepolia": targets}}


def test_defaults():
    config = ContractVerifyConfig()
    assert config.auto is False and config.explorer is True and config.check is True
    assert config.codeformat is CodeFormat.STANDARD_JSON
    assert (config.poll_interval, config.timeout, config.calls_per_second) == (5.0, 300.0, 3.0)
    assert (config.max_retries, config.workers) == (5, 16)
    assert config.targets is None and config.required_targets is None and config.explorers == {}
    assert config.explorer_for("ethereum", "mainnet") == ExplorerConfig()


def test_settings_are_read_and_coerced():
    config = ContractVerifyConfig(auto="always", codeformat="flatten", license="MIT", workers=4, max_retries=0)
    assert config.auto == "always" and config.codeformat is CodeFormat.SINGLE_FILE
    assert config.license == "MIT" and config.workers == 4 and config.max_retries == 0


@pytest.mark.parametrize(
    "key, value",
    [
        ("timeout", 0),
        ("poll_interval", -1),
        ("calls_per_second", 0),
        ("workers", 0),
        ("workers", 65),
        ("max_retries", 21),
    ],
)
def test_out_of_bounds_numbers_name_their_key(key, value):
    said = refused(**{key: value})
    assert key in said


def test_unknown_license_lists_the_accepted_ids():
    said = refused(license="NOT-A-LICENSE")
    assert "license" in said and "'NOT-A-LICENSE'" in said and "MIT" in said


def test_codeformat_must_be_one_of_two():
    assert "codeformat" in refused(codeformat="single-file")
    assert "give standard-json or flatten" in refused(codeformat="vyper-json")  # Vyper's is not a choice
    assert ContractVerifyConfig(codeformat="solidity-single-file").codeformat is CodeFormat.SINGLE_FILE


def test_a_badly_written_target_name_is_refused_with_examples():
    said = refused(targets=["Ether Scan"])
    assert "targets" in said and "'Ether Scan' is not a target name" in said and "etherscan" in said


def test_an_unknown_target_name_is_refused_with_the_configured_ones():
    said = refused(required_targets=["mine"])
    assert "contract_verify.required_targets: 'mine' is neither a known target" in said
    assert "use one of blockscout, etherscan, routescan, sourcify" in said


def test_a_configured_target_may_be_chosen():
    config = ContractVerifyConfig(
        explorers=sepolia(mine={"url": "https://verify.example/api", "kind": "etherscan"}), targets=["mine", "sourcify"]
    )
    targets = config.explorer_for("ethereum", "sepolia").named_targets()
    assert targets == {"mine": TargetConfig(url="https://verify.example/api", kind="etherscan")}
    assert config.targets == ["mine", "sourcify"]


@pytest.mark.parametrize(
    "entry, where, words",
    [
        ({"mine": {"url": "http://x"}}, "mine:", "has no kind"),
        ({"mine": {"kind": "sourcify"}}, "mine.url:", "has no url"),
        ({"mine": {"url": "http://x", "kind": "graphql"}}, "mine.kind:", "unknown kind 'graphql'"),
        ({"blockscout": {"kind": "sourcify"}}, "blockscout.kind:", "is etherscan-style"),
        ({"mine": {"url": "http://x", "kind": "sourcify", "apikey": "x"}}, "mine.apikey:", "the keys are url"),
        ({"mine": {"kind": "sourcify", "calls_per_second": 0}}, "mine.calls_per_second:", "greater than 0"),
        ({"Mine!": {"url": "http://x", "kind": "etherscan"}}, "Mine!:", "not a usable target name"),
        ({"mine": "http://x"}, "mine:", "is not a key of a network's entry"),
    ],
)
def test_a_bad_target_names_its_path_and_the_fix(entry, where, words):
    said = refused(explorers=sepolia(**entry))
    assert NETWORK + where in said and words in said and "Fix: " in said


def test_the_etherscan_target_is_given_once():
    said = refused(explorers=sepolia(url="https://a/api", etherscan={"url": "https://b/api"}))
    assert NETWORK + "etherscan:" in said and "not both" in said


def test_named_targets_raises_invalid_request_directly():
    explorer = ExplorerConfig(mine={"url": "http://x"})
    with pytest.raises(InvalidRequest) as info:
        explorer.named_targets("p.")
    assert info.value.param == "p.mine" and "kind" in info.value.fix


def test_known_names_get_their_kind_and_a_written_key_is_skipped():
    explorer = ExplorerConfig(sourcify={}, blockscout={"url": "https://b/api"}, api_key="in-config")
    targets = explorer.named_targets()
    assert set(targets) == {"sourcify", "blockscout"}
    assert targets["sourcify"].kind == KNOWN_TARGET_KINDS["sourcify"] == "sourcify"
    assert targets["blockscout"].kind == "etherscan"


def test_the_etherscan_target_from_the_network_s_keys_or_its_entry():
    own = ExplorerConfig(url="https://a/api", api_key_env="A_KEY", calls_per_second=2)
    assert own.configures_etherscan
    assert own.etherscan_target() == TargetConfig(
        url="https://a/api", api_key_env="A_KEY", calls_per_second=2, kind="etherscan"
    )
    entry = ExplorerConfig(etherscan={"url": "https://b/api"})
    assert entry.configures_etherscan and entry.etherscan_target().url == "https://b/api"
    other = ExplorerConfig(sourcify={})
    assert not other.configures_etherscan
    assert other.etherscan_target() == TargetConfig(kind="etherscan")


def test_explorer_rate_must_be_positive():
    with pytest.raises(ValidationError, match="calls_per_second"):
        ExplorerConfig(calls_per_second=-1)
