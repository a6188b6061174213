"""derive/derive.py's constructor arguments: the constructor arguments to submit, from the chain or from the user
(values or hex), checked against the chain's, with a reason naming --constructor-args and the fix."""

from types import SimpleNamespace

import pytest
from eth_abi.abi import encode

from ape_contract_verify.derive.artifacts import Artifact
from ape_contract_verify.derive.derive import (
    PrecheckFailed,
    encode_constructor_args,
    not_found_reason,
    resolve_constructor_args,
    sources_tried,
)

pytestmark = pytest.mark.unit

OWNER = "0x" + "ab" * 20
INPUTS = [{"name": "supply", "type": "uint256"}, {"name": "owner", "type": "address"}, {"name": "live", "type": "bool"}]


def artifact(inputs=INPUTS):
    abi = [{"type": "constructor", "inputs": inputs, "stateMutability": "nonpayable"}] if inputs is not None else []
    return Artifact(
        "Token", "contracts/Token.sol", SimpleNamespace(abi=abi), None, "solidity", "0.8.26+commit.8a97fa7a", {}
    )


def encoded(supply=1000, owner=OWNER, live=True):
    return encode(["uint256", "address", "bool"], [supply, owner, live]).hex()


@pytest.mark.parametrize("given", [f"1000, {OWNER}, true", f'[1000, "{OWNER}", true]', f"1000, {OWNER}, yes"])
def test_values_are_encoded_with_the_constructor_s_abi(given):
    assert encode_constructor_args(artifact(), given) == encoded()


def test_hex_is_taken_as_is_lowercased_and_without_0x():
    raw = encoded()
    assert encode_constructor_args(artifact(), "0x" + raw.upper()) == raw
    assert encode_constructor_args(artifact(), raw) == raw  # 32-byte words without 0x are hex too


def test_values_whose_first_is_a_hex_number_are_values_not_raw_hex():
    """ "0x3e8, <owner>, true" once went out as the text after 0x: now each value is encoded."""
    assert encode_constructor_args(artifact(), f"0x3e8, {OWNER}, true") == encoded()
    assert encode_constructor_args(artifact(), "0x") == ""  # no arguments, said as hex


def test_odd_hex_and_a_wrong_count_name_the_parameter_and_the_signature():
    with pytest.raises(PrecheckFailed, match="even length") as odd:
        encode_constructor_args(artifact(), "0x123")
    assert odd.value.field == "constructor arguments"
    with pytest.raises(PrecheckFailed) as count:
        encode_constructor_args(artifact(), "1000")
    assert "1 value(s) given, the constructor takes 3 (uint256 supply, address owner, bool live)" in str(count.value)
    with pytest.raises(PrecheckFailed, match=r"takes 0 \(none\)"):
        encode_constructor_args(artifact(None), "1")


def test_a_value_that_does_not_encode_says_which_types():
    with pytest.raises(PrecheckFailed, match=r"cannot encode .* as \(uint256, address, bool\)"):
        encode_constructor_args(artifact(), "lots, nobody, true")


def test_arrays_and_bytes_are_coerced_from_text():
    inputs = [{"name": "ids", "type": "uint256[]"}, {"name": "salt", "type": "bytes32"}]
    salt = "0x" + "11" * 32
    got = encode_constructor_args(artifact(inputs), f'[["1", "0x2"], "{salt}"]')
    assert got == encode(["uint256[]", "bytes32"], [[1, 2], bytes.fromhex("11" * 32)]).hex()


def test_the_chain_s_arguments_are_used_when_none_are_given_and_given_ones_must_agree():
    chain = encoded()
    assert resolve_constructor_args(artifact(), None, chain) == chain
    assert resolve_constructor_args(artifact(), f"1000, {OWNER}, true", chain.upper()) == chain
    with pytest.raises(PrecheckFailed) as differ:
        resolve_constructor_args(artifact(), f"999, {OWNER}, true", chain)
    message = str(differ.value)
    assert message.startswith("Local pre-check failed (constructor arguments): --constructor-args:")
    assert "supply" in message and "drop --constructor-args to use the chain's" in message


def test_without_the_chain_s_arguments_a_constructor_with_inputs_asks_for_them():
    with pytest.raises(PrecheckFailed) as missing:
        resolve_constructor_args(artifact(), None, None, ["the node's traces (refused)"])
    assert "tried the node's traces (refused)" in str(missing.value) and "--constructor-args" in str(missing.value)
    assert resolve_constructor_args(artifact(None), None, None) == ""
    # Given, with nothing to check them against: taken as encoded.
    assert resolve_constructor_args(artifact(), f"1000, {OWNER}, true", None) == encoded()


def test_the_reason_names_what_was_tried_or_that_nothing_answered():
    assert sources_tried([]) == "no source of it answered"
    assert sources_tried(["a", "b"]) == "tried a, b"
    assert "no source of it answered" in not_found_reason(None)
