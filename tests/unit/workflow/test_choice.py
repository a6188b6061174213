"""workflow/choice.py: a network and its targets chosen from names alone (Ape's network manager, no
node), the API key never shown, and each bad choice an `InvalidRequest` naming its parameter."""

from types import SimpleNamespace

import pytest

from ape_contract_verify.exceptions import InvalidRequest
from ape_contract_verify.workflow.choice import NetworkChoice, chain_id_of, connected_label

pytestmark = pytest.mark.unit

KEY = "SECRETKEY1234567890SECRETKEY12"


def test_the_key_never_shows_in_the_repr():
    choice = NetworkChoice("ethereum:sepolia", "https://x.example/api", KEY, ("etherscan",))
    text = repr(choice)
    assert KEY not in text and "api_key=***" in text
    assert "ethereum:sepolia" in text and "etherscan" in text


def test_names_resolve_without_a_node():
    assert NetworkChoice("ethereum:sepolia").names() == ("ethereum", "sepolia", 11155111)
    assert NetworkChoice("sepolia").names() == ("ethereum", "sepolia", 11155111)  # the default ecosystem's
    ecosystem, network, chain_id = NetworkChoice("ethereum:local").names()
    assert (ecosystem, network, chain_id) == ("ethereum", "local", None)  # a local chain's id is the node's
    assert NetworkChoice("ethereum:mainnet").label() == "ethereum:mainnet"


@pytest.mark.parametrize("network", ["nochain:sepolia", "ethereum:nonet", "nonet"])
def test_an_unknown_network_is_bad_input_naming_the_parameter(network):
    with pytest.raises(InvalidRequest) as raised:
        NetworkChoice(network).names()
    assert raised.value.param == "network"
    assert repr(network) in raised.value.problem and "ethereum:sepolia" in raised.value.fix


def test_one_network_refuses_several():
    two = NetworkChoice("ethereum:sepolia", networks=("ethereum:sepolia", "ethereum:mainnet"))
    with pytest.raises(InvalidRequest) as raised:
        two.one_network()
    assert raised.value.param == "network" and "several" in raised.value.problem
    one = NetworkChoice("ethereum:sepolia", networks=("ethereum:sepolia",))
    assert one.one_network() is one


def test_for_network_keeps_everything_but_the_network():
    choice = NetworkChoice(None, "https://x.example/api", KEY, ("etherscan", "sourcify"))
    bound = choice.for_network("ethereum:sepolia")
    assert (bound.network, bound.networks) == ("ethereum:sepolia", ("ethereum:sepolia",))
    assert (bound.explorer_url, bound.api_key, bound.target_names) == (choice.explorer_url, KEY, choice.target_names)
    assert choice.for_network(None).networks == ()


def test_the_targets_of_a_network_by_name():
    targets = NetworkChoice("ethereum:sepolia", api_key=KEY, target_names=("etherscan", "sourcify")).targets()
    assert [(t.name, t.kind, t.chain_id) for t in targets] == [
        ("etherscan", "etherscan", 11155111),
        ("sourcify", "sourcify", 11155111),
    ]
    read = NetworkChoice("ethereum:sepolia", api_key=KEY, target_names=("sourcify",)).read_target()
    assert read.name == "sourcify"


def test_connected_label_and_a_chain_id_that_cannot_be_read():
    network = SimpleNamespace(name="sepolia", ecosystem=SimpleNamespace(name="ethereum"))
    assert connected_label(SimpleNamespace(network=network)) == "ethereum:sepolia"
    assert chain_id_of(SimpleNamespace(chain_id="31337")) == 31337

    class Silent:
        @property
        def chain_id(self):
            raise RuntimeError("the node is down")

    assert chain_id_of(Silent()) is None
