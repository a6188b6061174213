"""evm/abi.py: the ABI's canonical types, signatures, selectors and event topics, written once on
eth_utils for the engine (constructor arguments), the explorer's forms and its transaction page."""

from __future__ import annotations

from eth_abi import encode
from eth_utils import keccak

from ape_contract_verify.evm import abi
from ape_contract_verify.server import abi_io

ORDER = {
    "type": "tuple[]",
    "name": "orders",
    "components": [
        {"type": "address", "name": "maker"},
        {
            "type": "tuple",
            "name": "amounts",
            "components": [{"type": "uint256", "name": "a"}, {"type": "uint8[2]", "name": "b"}],
        },
        {"type": "bytes", "name": "data"},
    ],
}


def test_well_known_selectors_and_topics():
    transfer = {
        "type": "function",
        "name": "transfer",
        "inputs": [{"type": "address", "name": "to"}, {"type": "uint256", "name": "v"}],
    }
    assert abi.signature(transfer) == "transfer(address,uint256)"
    assert abi.selector(transfer).hex() == "a9059cbb"
    event = {
        "type": "event",
        "name": "Transfer",
        "anonymous": False,
        "inputs": [
            {"type": "address", "indexed": True},
            {"type": "address", "indexed": True},
            {"type": "uint256", "indexed": False},
        ],
    }
    assert abi.event_topic(event).hex() == "ddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef"
    assert abi.selector({"type": "error", "name": "Error", "inputs": [{"type": "string"}]}).hex() == "08c379a0"
    assert abi.selector({"type": "function", "name": "value"}) == keccak(text="value()")[:4]


def test_tuples_are_spelt_out_with_their_array_suffixes():
    assert abi.abi_type(ORDER) == "(address,(uint256,uint8[2]),bytes)[]"
    fill = {
        "type": "function",
        "name": "fill",
        "inputs": [ORDER, {"type": "tuple[2][]", "components": [{"type": "bool"}]}],
    }
    assert abi.signature(fill) == "fill((address,(uint256,uint8[2]),bytes)[],(bool)[2][])"
    # eth_abi encodes with these types: they are its spelling too.
    assert encode([abi.abi_type(ORDER)], [[("0x" + "11" * 20, (1, [2, 3]), b"\x01")]])


def test_entries_without_the_optional_keys():
    assert abi.abi_type({"type": "tuple", "components": None}) == "()"
    assert abi.abi_type({"type": "tuple[3]"}) == "()[3]"
    assert abi.abi_type({}) == ""
    assert abi.signature({"name": "f", "inputs": None}) == "f()"


def test_the_pages_names_are_these():
    assert (
        abi_io.canonical_type is abi.abi_type and abi_io.signature is abi.signature and abi_io.selector is abi.selector
    )
    error = {"type": "error", "name": "Short", "inputs": [{"type": "uint256", "name": "need"}]}
    data = abi.selector(error) + encode(["uint256"], [5])
    assert abi_io.describe_revert([error], data) == "reverted: Short(5)"
    assert abi_io.describe_revert([], data).startswith("reverted: custom error 0x" + abi.selector(error).hex())
